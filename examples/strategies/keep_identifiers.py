#!/usr/bin/env python3
"""Keep the records whose identifiers the work comes back to: a rule no built-in strategy has.

    external(cmd="python3 examples/strategies/keep_identifiers.py", name=keep_ids, texts=true)

An identifier is a word of a record's text that names something — it holds a digit, `_`, `.`
or `/` (`parse_config`, `src/app.py`, `fact_12`, `v2.1`) — not a plain word such as `fix`.
Each record scores the identifiers it shares with the task or with any record after it: what
the agent came back to since. The newest `keep_recent` records are pinned (infeasible when
they alone exceed the capacity); then the others are taken by score, the higher first (the
newer first among equals), each that still fits, and kept in the context's order. It reads
texts and never the flags, so wrong flags cannot mislead it.

On ctxlab's synthetic histories a fact is needed exactly when a later record repeats it, which
is what this rule reads: there its score is close to the signal the labels were drawn from.
The protocol: docs/external-strategies.md.
"""

import json
import re
import sys

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*[A-Za-z0-9_]")
NAMES = re.compile(r"[0-9_./]")


# The identifiers of each text seen, so the texts of one history, asked again at every budget,
# are read once: a cache of what the text alone decides keeps the answers the request's.
SEEN = {}


def identifiers(text):
    found = SEEN.get(text)
    if found is None:
        if len(SEEN) > 50_000:
            SEEN.clear()
        found = SEEN[text] = frozenset(w for w in WORD.findall(text) if NAMES.search(w))
    return found


def joined(cost, count, separator):
    """The cost of `count` records of total size `cost`, joined by separators."""
    return cost + separator * (count - 1) if count else 0


def keep_identifiers(request):
    records = request["records"]
    capacity = request["capacity"]
    separator = request["separator"]
    n = len(records)
    start = n - min(request["keep_recent"], n)
    size = sum(r["cost"] for r in records[start:])
    count = n - start
    if joined(size, count, separator) > capacity:
        return {"infeasible": True}
    # Scores, newest first: what a record shares with the task and the records after it.
    seen = set(identifiers(request.get("task", "")))
    scores = [0] * n
    for i in reversed(range(n)):
        own = identifiers(records[i].get("text", ""))
        scores[i] = len(own & seen)
        seen |= own
    kept = [False] * start + [True] * (n - start)
    for i in sorted(range(start), key=lambda i: (-scores[i], -i)):
        cost = records[i]["cost"]
        if joined(size + cost, count + 1, separator) <= capacity:
            kept[i] = True
            size += cost
            count += 1
    return {
        "context": [{"keep": i} for i in range(n) if kept[i]],
        "cost": joined(size, count, separator),
    }


def main():
    for line in sys.stdin:
        request = json.loads(line)
        answer = keep_identifiers(request)
        answer["protocol"] = 1
        answer["request"] = request["request"]
        sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
