#!/usr/bin/python3
"""libraries.py: the lock library x scenario matrix of the latest library runs, as Markdown.

Usage: /usr/bin/python3 scripts/libraries.py [LIBRARY_REPORTS_DIR] [OUT_FILE]
       (defaults: reports/libraries and reports/libraries.md)

Reads LIBRARY_REPORTS_DIR/<scenario>/latest/results.json (a `locksim run --library ...` output),
writes one row per library (lib:* variant) and one column per scenario (the fault it injects):
survived, violated (causes), deadlocked, unknown, error or corrupted, each linked to the run's
summary; marked where it differs from the library's expectation.
"""
import json
import os
import sys

from locksim_reports import latest_results

WORDS = {"ok": "survived", "mutex_violation": "violated", "deadlock": "deadlocked",
         "unknown": "unknown", "error": "error", "resource_corrupted": "corrupted"}


def cell(name, variant, v):
    observed = v["observed"]
    text = WORDS.get(observed["verdict"], observed["verdict"])
    if observed.get("causes"):
        text += " (" + ", ".join(observed["causes"]) + ")"
    expected = v["expected"]["verdict"]
    if not v["matches"]:
        text = f"**{text}** (expected {WORDS.get(expected, expected)})"
    elif expected == "any":
        text += " *"
    return f"[{text}]({name}/latest/summary.md)"


def main(argv):
    if len(argv) > 1 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    reports = argv[1] if len(argv) > 1 else os.path.join("reports", "libraries")
    out = argv[2] if len(argv) > 2 else os.path.join(os.path.dirname(reports) or ".",
                                                     "libraries.md")
    columns, libraries, runs, claims = [], [], {}, {}
    for name, results in latest_results(reports):
        found = False
        for v in results["variants"]:
            variant = v["context"]["variant"]
            if not variant.startswith("lib:"):
                continue
            found = True
            if variant not in libraries:
                libraries.append(variant)
            runs[(variant, name)] = v
        if found:
            columns.append(name)
            claims[name] = results["context"]["source"].get("claim", "")
    # Rows in the order of adapters/libraries.json.
    manifest = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adapters",
                            "libraries.json")
    if os.path.isfile(manifest):
        with open(manifest, encoding="utf-8") as f:
            order = [entry["name"] for entry in json.load(f)["libraries"]]
        libraries.sort(key=lambda name: order.index(name) if name in order else len(order))
    if not columns:
        print(f"libraries.py: no lib:* runs under {reports}/<scenario>/latest/", file=sys.stderr)
        return 1
    base = os.path.relpath(reports, os.path.dirname(out) or ".")
    lines = ["# Lock libraries: latest verdicts", "",
             "One row per library behind its adapter (adapters/), one column per scenario. Each "
             "cell: survived, violated (causes), deadlocked, unknown or error, linked to the run; "
             "**bold** where it differs from what the library's design predicts (the built-in it "
             "is judged like); * where nothing is predicted (the run is the finding); empty "
             "where the adapter cannot run the scenario (a checkpoint inside a call, Doc C's "
             "unsaved token) or the library is not judged there.", "",
             "| library | " + " | ".join(f"[{c}]({base}/{c}/latest/summary.md)" for c in columns)
             + " |",
             "|---|" + "---|" * len(columns)]
    for library in libraries:
        cells = []
        for name in columns:
            v = runs.get((library, name))
            cells.append(cell(f"{base}/{name}", library, v) if v else "")
        lines.append(f"| {library} | " + " | ".join(cells) + " |")
    lines += ["", "Scenarios:", ""]
    lines += [f"- **{name}**: {claims[name]}" for name in columns]
    text = "\n".join(lines) + "\n"
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
