"""Measure ctxlint against the floor of reading the log, side by side, on generated logs.

For each size: (a) the floor — read every line and orjson.loads it, nothing else;
(b) `jq -c . >/dev/null`; (c) `ctxlint check --format json`; (d) the same with --jobs 2.
Prints MB/s, the ratios to the floor and to jq, and each child's peak RSS (wait4), and
stops if the --jobs report differs from the single-process one by a byte.

    python bench/run.py --sizes 10MB 100MB 1GB
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

from generate import generate, parse_size

HERE = Path(__file__).resolve().parent
FLOOR = "import sys, orjson\nwith open(sys.argv[1], 'rb') as f:\n    for line in f:\n        orjson.loads(line)\n"


def measure(command: list[str]) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in MB, exit code) of one child, from the OS."""
    started = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        child = subprocess.Popen(command, stdout=sink, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss // 1024, child.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["10MB", "100MB"], help="log sizes to generate and measure")
    parser.add_argument("--data", type=Path, default=HERE / "out", help="where generated logs are kept")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    ctxlint = [sys.executable, "-c", "from ctxlint.cli import main; main()"]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} {platform.release()}")
    header = f"{'size':>7} {'records':>9} | {'floor MB/s':>10} {'jq MB/s':>8} | {'ctxlint MB/s':>12} {'x floor':>7} {'x jq':>6} {'RSS MB':>7} | {'--jobs MB/s':>11} {'x (c)':>6} {'RSS MB':>7}"
    print(header)
    for size_text in args.sizes:
        size = parse_size(size_text)
        log = args.data / f"{size_text}.jsonl"
        if not log.exists():
            generate(size, log)
        megabytes = log.stat().st_size / 1e6
        records = sum(1 for _ in log.open("rb"))
        floor, _, _ = measure([sys.executable, "-c", FLOOR, str(log)])
        jq = measure(["jq", "-c", ".", str(log)])[0] if shutil.which("jq") else float("nan")
        single_out, jobs_out = args.data / f"{size_text}.single.json", args.data / f"{size_text}.jobs.json"
        single, single_rss, code = measure([*ctxlint, "check", "--format", "json", "--exit-zero", "--output", str(single_out), str(log)])
        if code != 0:
            raise SystemExit(f"ctxlint exited {code} on {log}")
        jobs, jobs_rss, code = measure([*ctxlint, "check", "--format", "json", "--exit-zero", "--jobs", str(args.jobs), "--output", str(jobs_out), str(log)])
        if code != 0 or single_out.read_bytes() != jobs_out.read_bytes():
            raise SystemExit(f"--jobs {args.jobs} changed the report on {log} (exit {code})")
        print(f"{size_text:>7} {records:>9,} | {megabytes / floor:>10.1f} {megabytes / jq:>8.1f} | {megabytes / single:>12.1f} "
              f"{floor / single:>7.2f} {jq / single:>6.2f} {single_rss:>7} | {megabytes / jobs:>11.1f} {single / jobs:>6.2f} {jobs_rss:>7}")


if __name__ == "__main__":
    main()
