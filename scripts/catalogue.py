#!/usr/bin/python3
"""catalogue.py: the scenario x variant verdict matrix of the latest runs, as Markdown.

Usage: /usr/bin/python3 scripts/catalogue.py [REPORTS_DIR]   (default: reports)

Reads REPORTS_DIR/<scenario>/latest/results.json, writes REPORTS_DIR/catalogue.md and prints it.
Each cell is the observed verdict (and causes), marked when it differs from the expectation, and
links to that run's summary and the variant's timeline PNG.
"""
import os
import sys

from locksim_reports import latest_results


def main(argv):
    reports = argv[1] if len(argv) > 1 else "reports"
    if reports in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    rows, variants = [], []
    for name, results in latest_results(reports):
        rows.append((name, results))
        for v in results["variants"]:
            if v["context"]["variant"] not in variants:
                variants.append(v["context"]["variant"])
    if not rows:
        print(f"catalogue.py: no {reports}/<scenario>/latest/results.json found", file=sys.stderr)
        return 1
    lines = ["# Scenario catalogue: latest verdicts", "",
             "Each cell: the observed verdict (causes); **bold** where it differs from the "
             "scenario's expectation. Links: the run's summary and the variant's timeline.", "",
             "| scenario | doc | " + " | ".join(variants) + " |",
             "|---|---|" + "---|" * len(variants)]
    for name, results in rows:
        by_variant = {v["context"]["variant"]: v for v in results["variants"]}
        cells = []
        for variant in variants:
            v = by_variant.get(variant)
            if v is None:
                cells.append("")
                continue
            observed = v["observed"]["verdict"]
            if v["observed"].get("causes"):
                observed += " (" + ", ".join(v["observed"]["causes"]) + ")"
            if not v["matches"]:
                observed = f"**{observed}** (expected {v['expected']['verdict']})"
            cells.append(f"{observed} [timeline]({name}/latest/{variant}/timeline.png)")
        doc = results["context"]["source"]["doc"]
        lines.append(f"| [{name}]({name}/latest/summary.md) | {doc} | " + " | ".join(cells) + " |")
    sweeps = sorted(f for f in os.listdir(reports) if f.endswith("-sweep.md"))
    if sweeps:
        lines += ["", "Sweeps: " + ", ".join(f"[{f[:-len('-sweep.md')]}]({f})" for f in sweeps)]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(reports, "catalogue.md"), "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
