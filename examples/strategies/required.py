#!/usr/bin/env python3
"""ctxlab's built-in `required`, as an external strategy: the flagged records first, then the
newest unflagged ones that fit.

    external(cmd="python3 examples/strategies/required.py")
    external(cmd="python3 examples/strategies/required.py", fill=skip, on_overflow=drop-oldest-flagged)

It pins the newest `keep_recent` records (the cell is infeasible when they alone exceed the
capacity) and keeps every flagged record among the others; when those do not fit, the cell is
infeasible (`on_overflow=infeasible`, the default) or the oldest flagged records are dropped
until they do (`on_overflow=drop-oldest-flagged`). Then it walks the unflagged records from the
newest backwards, keeping each that fits, stopping at the first that does not (`fill=stop`) or
going on (`fill=skip`). Its cells equal the built-in `required`'s byte for byte. The protocol:
docs/external-strategies.md.
"""

import json
import sys


def joined(cost, count, separator):
    """The cost of `count` records of total size `cost`, joined by separators."""
    return cost + separator * (count - 1) if count else 0


def required(request):
    records = request["records"]
    capacity = request["capacity"]
    separator = request["separator"]
    params = request["strategy"]["params"]
    fill = params.get("fill", "stop")
    overflow = params.get("on_overflow", "infeasible")
    n = len(records)
    start = n - min(request["keep_recent"], n)
    chosen = [False] * start + [True] * (n - start)
    size = sum(r["cost"] for r in records[start:])
    count = n - start
    if joined(size, count, separator) > capacity:
        return {"infeasible": True}
    for i in range(start):
        if records[i]["flag"]:
            chosen[i] = True
            size += records[i]["cost"]
            count += 1
    if joined(size, count, separator) > capacity:
        if overflow == "infeasible":
            return {"infeasible": True}
        for i in range(start):
            if joined(size, count, separator) <= capacity:
                break
            if chosen[i]:
                chosen[i] = False
                size -= records[i]["cost"]
                count -= 1
    for i in reversed(range(start)):
        if records[i]["flag"]:
            continue
        cost = records[i]["cost"]
        if joined(size + cost, count + 1, separator) <= capacity:
            chosen[i] = True
            size += cost
            count += 1
        elif fill == "stop":
            break
    return {
        "context": [{"keep": i} for i in range(n) if chosen[i]],
        "cost": joined(size, count, separator),
    }


def main():
    for line in sys.stdin:
        request = json.loads(line)
        answer = required(request)
        answer["protocol"] = 1
        answer["request"] = request["request"]
        sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
