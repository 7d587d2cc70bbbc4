#!/usr/bin/env python3
"""The article's experiment in plain Python, the peer ctxlab's loaded sweep is timed against.

The two selection functions (`recent`, `required`) and the three metrics (reduction, required
retention, exact) as ../shared/DESIGN.md ("The article's experiment") spells them out: cost in
characters (`len()` of a `str`), a context's cost its texts joined by "\\n", capacity
floor(total * P / 100). Every cell is written as a CSV row, as ctxlab writes every cell.

    python3 benches/article_peer.py HISTORIES.jsonl OUT.csv [--histories N] [--replicates R]

Prints one line: `cells SECONDS` (the whole run: reading the JSONL, the cells, the CSV).
"""

import argparse
import csv
import json
import time

BUDGETS = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]


def context_cost(costs):
    """Texts joined by a newline: each gap between two kept records costs 1."""
    return sum(costs) + max(len(costs) - 1, 0)


def recent(records, capacity):
    """Newest first, while the context still fits; stop at the first that does not."""
    kept, used = [], 0
    for r in reversed(records):
        extra = len(r["text"]) + (1 if kept else 0)
        if used + extra > capacity:
            break
        kept.append(r)
        used += extra
    kept.reverse()
    return kept


def required(records, capacity):
    """The flagged records, then the unflagged from the newest while the context fits;
    None when the flagged alone do not fit (an infeasible cell)."""
    flagged = [r for r in records if r["required"]]
    used = context_cost([len(r["text"]) for r in flagged])
    if used > capacity:
        return None
    chosen = {r["id"] for r in flagged}
    count = len(flagged)
    for r in reversed(records):
        if r["id"] in chosen:
            continue
        extra = len(r["text"]) + (1 if count else 0)
        if used + extra > capacity:
            break
        chosen.add(r["id"])
        used += extra
        count += 1
    return [r for r in records if r["id"] in chosen]


def metrics(records, kept, total):
    """used, reduction = 1 - used/total, required retention, exact (1.0 when nothing kept)."""
    if kept is None:
        return "", "", "", ""
    used = context_cost([len(r["text"]) for r in kept])
    required_ids = {r["id"] for r in records if r["required"]}
    kept_required = sum(1 for r in kept if r["id"] in required_ids)
    retention = kept_required / len(required_ids) if required_ids else ""
    # Both strategies keep records verbatim.
    exact = 1.0
    return used, 1 - used / total, retention, exact


def histories(path, limit):
    """The histories of a JSONL file, grouped by their `history` field, in file order."""
    current, records = None, []
    seen = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            name = r.get("history", "")
            if name != current and records:
                yield current, records
                seen += 1
                if limit is not None and seen >= limit:
                    return
                records = []
            current = name
            records.append(r)
    if records:
        yield current, records


def main():
    p = argparse.ArgumentParser()
    p.add_argument("histories")
    p.add_argument("out")
    p.add_argument("--histories", dest="limit", type=int, default=None)
    p.add_argument("--replicates", type=int, default=10)
    a = p.parse_args()
    start = time.perf_counter()
    cells = 0
    strategies = [("recent", recent), ("required", required)]
    with open(a.out, "w", newline="") as out:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["history", "replicate", "strategy", "budget_percent", "capacity",
                    "total", "used", "reduction", "required_retention", "exact"])
        for name, records in histories(a.histories, a.limit):
            total = context_cost([len(r["text"]) for r in records])
            # Without noise every replicate draws the same flags; each is still a cell.
            for replicate in range(a.replicates):
                for label, select in strategies:
                    for budget in BUDGETS:
                        capacity = total * budget // 100
                        kept = select(records, capacity)
                        w.writerow([name, replicate, label, budget, capacity, total,
                                    *metrics(records, kept, total)])
                        cells += 1
    print(cells, f"{time.perf_counter() - start:.3f}")


if __name__ == "__main__":
    main()
