#!/usr/bin/python3
"""Proves that every count README.md states (adapters, scenarios, outcomes, built-in variants)
is the tree's: counted from the tree and `locksim list --json`, never written down here.

Usage: readme_counts_test.py LOCKSIM SOURCE_DIR

Each kind must appear at least once (so deleting a count fails too), every occurrence must be
the tree's number, and the check is shown to fail on a README whose adapter count is off by one.
"""
import glob
import json
import os
import re
import subprocess
import sys

# What README.md says, by kind: "13 adapters", "48 scenarios", "134 scenario x variant outcomes"
# (or "134 outcomes"), "13 built-in variants" (a line break may fall anywhere between the words).
PATTERNS = {
    "adapters": r"(\d+)\s+adapters\b",
    "scenarios": r"(\d+)\s+scenarios\b",
    "outcomes": r"(\d+)\s+(?:scenario\s+x\s+variant\s+)?outcomes\b",
    "built-in variants": r"(\d+)\s+built-in\s+variants\b",
}


def tree_counts(locksim, source):
    listing = json.loads(subprocess.run(
        [locksim, "list", "--json", os.path.join(source, "scenarios")], check=True,
        capture_output=True, text=True, cwd=source).stdout)
    # An adapter is a directory of adapters/ with its adapter program (adapter.py, .js, .php);
    # adapters/<language>/ holds what the adapters of one language share.
    adapters = {os.path.dirname(p) for p in glob.glob(os.path.join(source, "adapters", "*",
                                                                   "adapter.*"))}
    return {
        "adapters": len(adapters),
        # The catalogue's scenario files (a sweep file is one scenario of several points).
        "scenarios": len(glob.glob(os.path.join(source, "scenarios", "*.json"))),
        # What `locksim run scenarios/` judges: each scenario (each sweep point) x its variants.
        "outcomes": sum(len(s["variants"]) for s in listing["scenarios"]),
        "built-in variants": len(listing["variants"]),
    }


def problems(text, counts):
    found = []
    for kind, pattern in PATTERNS.items():
        stated = [int(m.group(1)) for m in re.finditer(pattern, text, re.IGNORECASE)]
        if not stated:
            found.append(f"README.md states no count of {kind} (the tree has {counts[kind]})")
        for number in stated:
            if number != counts[kind]:
                found.append(f"README.md says {number} {kind}; the tree has {counts[kind]}")
    return found


def main(argv):
    locksim, source = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    counts = tree_counts(locksim, source)
    print("the tree: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
    with open(os.path.join(source, "README.md"), encoding="utf-8") as f:
        text = f.read()
    failed = problems(text, counts)
    for problem in failed:
        print("FAILED: " + problem)
    # The check can fail: one adapter more in the text is caught.
    wrong = re.sub(PATTERNS["adapters"], lambda m: f"{int(m.group(1)) + 1} adapters", text)
    if not problems(wrong, counts):
        print("FAILED: a README with a wrong adapter count passed the check")
        failed.append("self-check")
    if not failed:
        print("ok: every count README.md states is the tree's")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
