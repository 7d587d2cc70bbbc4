#!/usr/bin/env python3
"""ctxlab's built-in `recent`, as an external strategy: the newest records that fit.

    external(cmd="python3 examples/strategies/recent.py")
    external(cmd="python3 examples/strategies/recent.py", fill=skip)

It pins the newest `keep_recent` records (the cell is infeasible when they alone exceed the
capacity), then walks from the newest of the others backwards, keeping each while the context
fits; with `fill=stop` (the default) it stops at the first that does not fit, with `fill=skip`
it goes on looking for smaller, older ones. Its cells equal the built-in `recent`'s (and
`recent(fill=skip)`'s) byte for byte. The protocol: docs/external-strategies.md.
"""

import json
import sys


def joined(cost, count, separator):
    """The cost of `count` records of total size `cost`, joined by separators."""
    return cost + separator * (count - 1) if count else 0


def recent(request):
    records = request["records"]
    capacity = request["capacity"]
    separator = request["separator"]
    fill = request["strategy"]["params"].get("fill", "stop")
    n = len(records)
    tail = list(range(n - min(request["keep_recent"], n), n))
    size = sum(records[i]["cost"] for i in tail)
    used = joined(size, len(tail), separator)
    if used > capacity:
        return {"infeasible": True}
    kept = list(tail)
    for i in reversed(range(tail[0] if tail else n)):
        cost = records[i]["cost"]
        with_it = used + cost + (separator if kept else 0)
        if with_it <= capacity:
            kept.append(i)
            used = with_it
        elif fill == "stop":
            break
    return {"context": [{"keep": i} for i in sorted(kept)], "cost": used}


def main():
    for line in sys.stdin:
        request = json.loads(line)
        answer = recent(request)
        answer["protocol"] = 1
        answer["request"] = request["request"]
        sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
