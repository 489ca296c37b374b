#!/usr/bin/python3
"""plot_sweep.py: violation rate per sweep point and variant, as a Markdown table and a plot.

Usage: /usr/bin/python3 scripts/plot_sweep.py [REPORTS_DIR]   (default: reports)

Finds every REPORTS_DIR/<scenario>/latest/results.json whose context has a sweep_point (the
scenarios a "sweep" file expands into), groups them by sweep, and for each group writes
REPORTS_DIR/<group>-sweep.md (table: rate of holds caught in a violation, and the verdict, per
point and variant) and REPORTS_DIR/<group>-sweep.png (rate against the swept value, log x axis).
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from locksim_reports import latest_results  # noqa: E402


def collect(reports):
    groups = {}
    for _, results in latest_results(reports):
        point = results["context"].get("sweep_point")
        if not point:
            continue
        group = groups.setdefault(point["group"], {"parameter": point["parameter"], "points": {}})
        for v in results["variants"]:
            group["points"].setdefault(point["value"], {})[v["context"]["variant"]] = v
    return groups


def write_group(reports, name, group):
    values = sorted(group["points"])
    variants = []
    for value in values:
        for variant in group["points"][value]:
            if variant not in variants:
                variants.append(variant)
    lines = [f"# {name}: violation rate by {group['parameter']}", "",
             "Share of hold windows that overlapped another client's window, and the verdict.", "",
             f"| {group['parameter']} | " + " | ".join(variants) + " |",
             "|---|" + "---|" * len(variants)]
    fig, ax = plt.subplots(figsize=(7, 4))
    for variant in variants:
        xs, ys = [], []
        for value in values:
            v = group["points"][value].get(variant)
            if v is not None:
                xs.append(value)
                ys.append(100.0 * v["stats"]["violation_rate"])
        ax.plot(xs, ys, marker="o", label=variant)
    for value in values:
        cells = []
        for variant in variants:
            v = group["points"][value].get(variant)
            if v is None:
                cells.append("")
                continue
            rate = 100.0 * v["stats"]["violation_rate"]
            mark = "" if v["matches"] else " (NOT as expected)"
            cells.append(f"{rate:.0f}% of {v['stats']['holds']} holds, "
                         f"{v['observed']['verdict']}{mark}")
        lines.append(f"| {value:g} | " + " | ".join(cells) + " |")
    ax.set_xscale("log")
    ax.set_xticks(values)
    ax.set_xticklabels([f"{v:g}" for v in values])
    ax.minorticks_off()
    ax.set_xlabel(group["parameter"].replace("_", " "))
    ax.set_ylabel("holds in a violation (%)")
    ax.set_ylim(-3, 103)
    ax.set_title(name)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(reports, f"{name}-sweep.png"), dpi=110)
    plt.close(fig)
    lines += ["", f"![{name}]({name}-sweep.png)", ""]
    with open(os.path.join(reports, f"{name}-sweep.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return "\n".join(lines)


def main(argv):
    reports = argv[1] if len(argv) > 1 else "reports"
    if reports in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    groups = collect(reports)
    if not groups:
        print(f"plot_sweep.py: no sweep results under {reports}", file=sys.stderr)
        return 1
    for name, group in groups.items():
        print(write_group(reports, name, group))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
