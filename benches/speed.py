#!/usr/bin/env python3
"""ctxlab's speed figures, side by side in one run, as a markdown table.

Every figure is a whole process (`/usr/bin/time -v`: wall time and peak memory), run `--runs`
times with the variants interleaved (so drift on a shared machine hits them alike); the table
gives the median and the spread (min-max). Measured:

1. the main job, `ctxlab sweep experiments/noise.toml` (every output: the cells in Parquet, the
   summary, pairs and compare tables in both formats, the charts), the same with the cells in
   CSV too (`output.rows_formats`), and with `--cells none`;
2. polars (Python) writing the same cells tables from memory (read first, not timed);
3. a 1.2 M-cell sweep of 6 000 loaded histories (JSONL) x 10 replicates x recent, required x 10
   budgets, Parquet only, with and without the cells table, against polars writing that table
   from memory, and against the article's Python (`benches/article_peer.py`, on the first
   `--peer-histories` histories, every cell written) in cells per second;
4. with `--big`, the 10^8-cell sweep (noise.toml with 41 667 histories, Parquet only), once,
   and a sweep over 2 GB of JSONL (45 000 generated histories x recent, required x 10 budgets,
   one replicate, Parquet only), once: what streaming the loaded histories holds memory to;
5. with `--big`, where `../shared/data/claude-code-entire/` is present, the session replays:
   `experiments/claude-code.toml` under one cache over the 25 shared Claude Code sessions, and
   over the same 25 ten times under new names (symbolic links), interleaved `--runs` times: the
   ratios of time and memory, and the agent calls replayed a second.

    cargo build --release && python3 benches/speed.py --runs 5 --big --out /tmp/speed.md

Needs Python's `polars` for step 2 and 3's floor (skipped, saying so, without it).
"""

import argparse
import csv
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT.parent / "shared" / "data" / "claude-code-entire"


def timed(cmd, cwd=ROOT):
    """Runs `cmd` under /usr/bin/time -v; returns (wall seconds, peak MiB, stdout)."""
    p = subprocess.run(["/usr/bin/time", "-v", *map(str, cmd)], cwd=cwd,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{p.stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", p.stderr)
    h, m, s = wall.groups()
    secs = int(h or 0) * 3600 + int(m) * 60 + float(s)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    return secs, rss / 1024, p.stdout


POLARS_WRITE = r"""
import sys, time, polars as pl
df = pl.read_parquet(sys.argv[1])
df = df.rechunk()
t = time.perf_counter()
df.write_parquet(sys.argv[2] + ".parquet", compression="zstd", row_group_size=1 << 16)
p = time.perf_counter() - t
c = 0.0
if sys.argv[3] == "csv":
    t = time.perf_counter()
    df.write_csv(sys.argv[2] + ".csv")
    c = time.perf_counter() - t
print(p, c)
"""


def polars_write(parquet, out, csv):
    """polars writing the frame of `parquet` from memory: (parquet seconds, csv seconds)."""
    p = subprocess.run([sys.executable, "-c", POLARS_WRITE, str(parquet), str(out),
                        "csv" if csv else "-"], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    a, b = p.stdout.split()
    return float(a), float(b)


def has_polars():
    return subprocess.run([sys.executable, "-c", "import polars"],
                          capture_output=True).returncode == 0


class Series:
    def __init__(self):
        self.wall, self.rss = [], []

    def add(self, wall, rss):
        self.wall.append(wall)
        self.rss.append(rss)

    def median(self):
        return statistics.median(self.wall)

    def cell(self):
        w = self.wall
        return f"{statistics.median(w):.2f} s ({min(w):.2f}–{max(w):.2f})"

    def mem(self):
        return f"{statistics.median(self.rss):.0f} MiB"


def replay_sessions(ctx, tmp, runs):
    """claude-code.toml under one cache over one copy of the shared sessions and over ten:
    (one copy's Series, ten copies' Series, agent calls replayed per copy)."""
    one, ten = tmp / "cc1", tmp / "cc10"
    one.mkdir()
    ten.mkdir()
    for f in sorted(SESSIONS.glob("*.jsonl")):
        (one / f.name).symlink_to(f)
        for c in range(10):
            (ten / f"c{c}-{f.name}").symlink_to(f)
    base = [ctx, "sweep", "experiments/claude-code.toml", "--quiet", "--force",
            "--set", 'session.caches=["anthropic"]']
    series = {"one": Series(), "ten": Series()}
    for _ in range(runs):
        for key, folder in (("one", one), ("ten", ten)):
            wall, rss, _ = timed([*base, "--set", f'histories.files=["{folder}/*.jsonl"]',
                                  "--out", tmp / f"sessions-{key}"])
            series[key].add(wall, rss)
    with open(tmp / "sessions-one" / "sessions.csv", newline="") as f:
        calls = sum(int(row["calls"]) for row in csv.DictReader(f))
    return series["one"], series["ten"], calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bin", default=os.environ.get("CTXLAB_BIN") or str(
        Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "ctxlab"))
    ap.add_argument("--peer-histories", type=int, default=300)
    ap.add_argument("--big", action="store_true", help="also run the 10^8-cell sweep once")
    ap.add_argument("--out", help="write the markdown here as well as to stdout")
    a = ap.parse_args()
    # Read before anything runs: read after the runs it is the script's own load.
    load_before = os.getloadavg()[0]
    ctx = a.bin
    tmp = Path(tempfile.mkdtemp(prefix="ctxlab-speed-"))
    polars = has_polars()
    try:
        # --- the loaded histories (written once, not timed) ---
        jsonl = tmp / "h.jsonl"
        subprocess.run([ctx, "generate", "experiments/noise.toml", "--set",
                        "histories.generate.count=6000", "--out", jsonl],
                       cwd=ROOT, check=True, capture_output=True)
        loaded = tmp / "loaded.toml"
        loaded.write_text(f"""name = "speed-1.2m"
seed = 7
replicates = 10
[histories]
files = ["{jsonl}"]
[sweep]
strategies = ["recent", "required"]
budgets = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
[output]
formats = ["parquet"]
""")
        main_job = ["sweep", "experiments/noise.toml", "--quiet", "--force"]
        variants = {
            "main": [*main_job, "--out", tmp / "main"],
            "main_csv": [*main_job, "--set", 'output.rows_formats=["parquet","csv"]',
                         "--out", tmp / "mainc"],
            "main_none": [*main_job, "--cells", "none", "--out", tmp / "mainn"],
            "loaded": ["sweep", loaded, "--quiet", "--force", "--out", tmp / "loaded"],
            "loaded_none": ["sweep", loaded, "--quiet", "--force", "--cells", "none",
                            "--out", tmp / "loadedn"],
        }
        s = {k: Series() for k in [*variants, "polars_main", "polars_loaded", "peer"]}
        floor = {"main_pq": [], "main_csv": [], "loaded_pq": []}
        peer_rate = []
        for i in range(a.runs):
            for k, args in variants.items():
                wall, rss, _ = timed([ctx, *args])
                s[k].add(wall, rss)
            if polars:
                for key, parquet, csv in [("main", tmp / "mainc" / "cells.parquet", True),
                                          ("loaded", tmp / "loaded" / "cells.parquet", False)]:
                    got = polars_write(parquet, tmp / f"pl-{key}", csv)
                    if got:
                        floor[f"{key}_pq"].append(got[0])
                        if csv:
                            floor["main_csv"].append(got[1])
            wall, rss, out = timed([sys.executable, ROOT / "benches" / "article_peer.py", jsonl,
                                    tmp / "peer.csv", "--histories", a.peer_histories])
            cells, secs = out.split()
            s["peer"].add(wall, rss)
            peer_rate.append(int(cells) / wall)
        csv_bytes = (tmp / "mainc" / "cells.csv").stat().st_size
        loaded_cells = 6000 * 10 * 2 * 10
        big = streamed = None
        if a.big:
            wall, rss, _ = timed([ctx, *main_job, "--set", "histories.generate.count=41667",
                                  "--set", 'output.formats=["parquet"]', "--out", tmp / "big"])
            big = (wall, rss)
            subprocess.run([ctx, "generate", "experiments/noise.toml", "--set",
                            "histories.generate.count=45000", "--out", tmp / "h2g.jsonl"],
                           cwd=ROOT, check=True, capture_output=True)
            gigs = (tmp / "h2g.jsonl").stat().st_size / 1e9
            streamed_toml = tmp / "streamed.toml"
            streamed_toml.write_text(loaded.read_text()
                                     .replace(str(jsonl), str(tmp / "h2g.jsonl"))
                                     .replace("replicates = 10", "replicates = 1"))
            wall, rss, _ = timed([ctx, "sweep", streamed_toml, "--quiet", "--force",
                                  "--out", tmp / "streamed"])
            streamed = (gigs, wall, rss)
        sessions = replay_sessions(ctx, tmp, a.runs) if a.big and SESSIONS.is_dir() else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = statistics.median
    lines = []
    add = lines.append
    add(f"Measured {datetime.date.today()} by `benches/speed.py --runs {a.runs}` on "
        f"{os.cpu_count()} cores (load average before the run: "
        f"{load_before:.1f}); whole processes, median (min–max) of {a.runs} "
        "interleaved runs, peak memory the median max RSS.")
    add("")
    add("| run | wall | peak memory |")
    add("| --- | ---: | ---: |")
    add(f"| main job (cells in Parquet, the small tables in both formats) | {s['main'].cell()} | {s['main'].mem()} |")
    add(f"| main job with the cells in CSV too | {s['main_csv'].cell()} | {s['main_csv'].mem()} |")
    add(f"| main job, `--cells none` | {s['main_none'].cell()} | {s['main_none'].mem()} |")
    add(f"| 1.2 M loaded cells, cells table (Parquet) | {s['loaded'].cell()} | {s['loaded'].mem()} |")
    add(f"| 1.2 M loaded cells, `--cells none` | {s['loaded_none'].cell()} | {s['loaded_none'].mem()} |")
    add(f"| article's Python, {a.peer_histories} histories ({a.peer_histories * 200} cells, every cell written) | {s['peer'].cell()} | {s['peer'].mem()} |")
    if big:
        add(f"| 10^8 cells (noise.toml, 41 667 histories, Parquet only), once | {big[0]:.1f} s | {big[1]:.0f} MiB |")
        add(f"| {streamed[0]:.2f} GB of JSONL, 45 000 histories, 900 000 cells (Parquet only), once | {streamed[1]:.1f} s | {streamed[2]:.0f} MiB |")
    if sessions:
        one, ten, _ = sessions
        add(f"| claude-code.toml, one cache, the 25 shared sessions | {one.cell()} | {one.mem()} |")
        add(f"| the same, the 25 ten times under new names (250 sessions) | {ten.cell()} | {ten.mem()} |")
    add("")
    add("| figure | measured | target |")
    add("| --- | ---: | ---: |")
    csv_cost = s["main_csv"].median() - s["main"].median()
    if csv_cost > 0:
        add(f"| cells.csv ({csv_bytes / 1e6:.0f} MB): the run with it minus the main job | "
            f"{csv_cost:.2f} s = {csv_bytes / 1e6 / csv_cost:.0f} MB/s | ≥ 400 MB/s |")
    if polars and floor["main_pq"]:
        pl_main = med(floor["main_pq"]) + med(floor["main_csv"])
        pl_pq = med(floor["main_pq"])
        add(f"| polars writing the cells table from memory (Parquet / Parquet + CSV) | "
            f"{pl_pq:.2f} s / {pl_main:.2f} s | |")
        main_table = s["main"].median() - s["main_none"].median()
        add(f"| main job: the cells table (run minus `--cells none`) / polars writing it | "
            f"{main_table:.2f} s / {pl_pq:.2f} s = {main_table / pl_pq:.2f} × | ≤ 1.25 × |")
        add(f"| main job, whole run / polars writing its cells table (Parquet) | {s['main'].median() / pl_pq:.2f} × | |")
        add(f"| main job with the cells CSV / polars writing both | {s['main_csv'].median() / pl_main:.2f} × | |")
        table = s["loaded"].median() - s["loaded_none"].median()
        pl_loaded = med(floor["loaded_pq"])
        add(f"| 1.2 M cells: the cells table (run minus `--cells none`) / polars writing it | "
            f"{table:.2f} s / {pl_loaded:.2f} s = {table / pl_loaded:.2f} × | ≤ 1.25 × |")
    else:
        add("| polars' writer | not measured: Python's `polars` is not installed | |")
    rate = loaded_cells / s["loaded"].median()
    add(f"| loaded sweep / article's Python, cells per second | {rate / 1e3:.0f} k/s / "
        f"{med(peer_rate) / 1e3:.1f} k/s = {rate / med(peer_rate):.0f} × | ≥ 150 × |")
    if big:
        add(f"| 10^8 cells | {big[0]:.1f} s, {big[1]:.0f} MiB | < 60 s, bounded |")
        add(f"| a sweep over {streamed[0]:.2f} GB of JSONL, peak memory | {streamed[2]:.0f} MiB | < 500 MiB |")
    if sessions:
        one, ten, calls = sessions
        add(f"| session replays: ten copies / one copy, time and peak memory | "
            f"{ten.median() / one.median():.1f} × and "
            f"{med(ten.rss) / med(one.rss):.2f} × | about 10 × and ≤ 2 × |")
        add(f"| agent calls replayed a second (ten copies, {10 * calls} calls over every "
            f"strategy) | {10 * calls / ten.median():,.0f} | |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
