#!/usr/bin/env python3
"""steer_measure.py: in how many explorations `locksim explore --steer` finds a bug, against plain
drawing, within each of a few budgets of schedules (docs/simulator.md, "Steering").

Exploration K runs seeds K*100000 onwards on one worker (-j 1), so it is the same on every
machine, and its first BUDGET schedules are those of any longer budget: one exploration of the
largest budget says, by the first seed of the finding, whether each smaller budget found it.

  scripts/steer_measure.py build/locksim --variant get_then_del \
      --signature stale_release --signature 'mutex_violation (stale_release)' --budgets 100,300
  scripts/steer_measure.py build/locksim --variant-file tests/cli/user_restart_fence.json \
      --variant user_restart_fence --signature 'deadlock (never_recovered)' --budgets 200
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def first_offset(locksim, args, k, steer, budget, work):
    """The schedule (0-based, within exploration k) that first showed a signature, or None."""
    first = k * 100000
    out = os.path.join(work, f"{'steered' if steer else 'plain'}-{k}")
    command = [locksim, "explore", "--variant", args.variant]
    if args.variant_file:
        command += ["--variant-file", args.variant_file]
    command += ["--seeds", f"{first}..{first + budget - 1}", "-j", "1", "--no-shrink",
                "--no-progress", "--out", out, "--json", out + ".json"]
    if steer:
        command.append("--steer")
    # explore exits 1 when it found something: only another status is a failure to run.
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"steer_measure: {' '.join(command)} exited {done.returncode}: {done.stderr}")
    with open(out + ".json") as f:
        findings = json.load(f)["findings"]
    seeds = [findings[s]["first_seed"] for s in args.signature
             if s in findings and not findings[s].get("limit", False)]
    return min(seeds) - first if seeds else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("locksim")
    parser.add_argument("--variant", required=True)
    parser.add_argument("--variant-file")
    parser.add_argument("--signature", action="append", required=True,
                        help="a finding that counts as the bug (any of them; limits never count)")
    parser.add_argument("--runs", type=int, default=30, help="explorations K = 0..RUNS-1")
    parser.add_argument("--budgets", default="100,300", help="schedules, comma-separated")
    args = parser.parse_args()
    budgets = sorted(int(b) for b in args.budgets.split(","))
    with tempfile.TemporaryDirectory(prefix="locksim-steer-measure.") as work:
        for steer in (True, False):
            offsets = [first_offset(args.locksim, args, k, steer, budgets[-1], work)
                       for k in range(args.runs)]
            counts = ", ".join(
                f"{sum(o is not None and o < b for o in offsets)}/{args.runs} within {b}"
                for b in budgets)
            print(f"{'steered' if steer else 'plain  '}: {counts}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
