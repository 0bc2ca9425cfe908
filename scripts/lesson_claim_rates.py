#!/usr/bin/env python3
"""How often each shipped lesson's claims hold, over seeds: runs `scalelab-cli lesson run N
--seed S --no-store` for every lesson and seed, one at a time, and prints per claim how many
seeds it held in, and per lesson its wall time (min, median, max).

    scripts/lesson_claim_rates.py                 # lessons 1-8, seeds 1-10
    scripts/lesson_claim_rates.py --lessons 1,3 --seeds 5

Run it on an idle machine: lessons 1 and 3 measure throughput, and a run other programs
disturbed says so in the output (counted below)."""

import argparse
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

CLI = Path(__file__).resolve().parent.parent / "build/release/app/scalelab-cli"


def run_lesson(lesson, seed):
    """The claims' outcomes ({claim: held?}), whether a run was disturbed, and the wall time."""
    start = time.monotonic()
    result = subprocess.run([str(CLI), "lesson", "run", str(lesson), "--seed", str(seed),
                             "--no-store"], capture_output=True, text=True)
    seconds = time.monotonic() - start
    if result.returncode not in (0, 1):
        sys.exit(f"lesson {lesson}, seed {seed}: exit {result.returncode}\n{result.stderr}")
    outcomes = {}
    for match in re.finditer(r"^  (held|FAILED)\s+(.*)\n\s+(.*)$", result.stdout, re.M):
        outcomes[match.group(2)] = (match.group(1) == "held", match.group(3))
    disturbed = "disturbed:" in result.stdout
    return outcomes, disturbed, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lessons", default="1,2,3,4,5,6,7,8")
    parser.add_argument("--seeds", type=int, default=10, help="seeds 1..N (default 10)")
    args = parser.parse_args()
    for lesson in [int(n) for n in args.lessons.split(",")]:
        held = defaultdict(int)
        misses = defaultdict(list)
        times, disturbed = [], 0
        for seed in range(1, args.seeds + 1):
            outcomes, was_disturbed, seconds = run_lesson(lesson, seed)
            times.append(seconds)
            disturbed += was_disturbed
            for claim, (ok, values) in outcomes.items():
                held[claim] += ok
                if not ok:
                    misses[claim].append(f"seed {seed}: {values}")
        print(f"lesson {lesson}: {args.seeds} seeds, {min(times):.0f} / "
              f"{statistics.median(times):.0f} / {max(times):.0f} s (min / median / max)"
              + (f", {disturbed} with a disturbed run" if disturbed else ""))
        if not held and not misses:
            print("  (no claims)")
        for claim in sorted(set(held) | set(misses), key=lambda c: held[c]):
            print(f"  {held[claim]:>2}/{args.seeds}  {claim}")
            for miss in misses[claim]:
                print(f"          {miss}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
