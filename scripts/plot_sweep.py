#!/usr/bin/python3
"""plot_sweep.py: the safe/unsafe map of each sweep, as a Markdown page and a plot.

Usage: /usr/bin/python3 scripts/plot_sweep.py [REPORTS_DIR]   (default: reports)

Finds every REPORTS_DIR/<scenario>/latest/results.json whose context has a sweep_point (the
scenarios a "sweep" file expands into) and groups them by sweep. For each group it reads
REPORTS_DIR/<group>.map.json, the map `locksim run` writes (per value and variant: the runs with a
mutex_violation over the runs with a decided verdict, every repetition counted, and the safe and
the breaking value nearest the boundary), and writes REPORTS_DIR/<group>-sweep.md (the map lines,
then the latest run of each point: the share of holds caught in a violation and the verdict) and
REPORTS_DIR/<group>-sweep.png (violation rate against the swept value per variant, the boundary
between the last safe and the first breaking value shaded, the parameter and its unit on the x
axis). Reports without a map.json (older runs) are plotted from the latest run of each point,
without a boundary.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from locksim_reports import latest_results  # noqa: E402

MAP_SCHEMA = 1


def collect(reports):
    groups = {}
    for _, results in latest_results(reports):
        point = results["context"].get("sweep_point")
        if not point:
            continue
        group = groups.setdefault(point["group"], {"parameter": point["parameter"],
                                                   "unit": point.get("unit", ""), "points": {}})
        for v in results["variants"]:
            group["points"].setdefault(point["value"], {})[v["context"]["variant"]] = v
    return groups


def load_map(reports, name, group):
    """The group's map: <name>.map.json, or one built from the latest run of each point."""
    path = os.path.join(reports, f"{name}.map.json")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            sweep_map = json.load(f)
        if sweep_map.get("schema") != MAP_SCHEMA:
            raise ValueError(f"{path}: schema {sweep_map.get('schema')}, expected {MAP_SCHEMA}")
        return sweep_map
    by_variant = {}
    for value in sorted(group["points"]):
        for variant, v in group["points"][value].items():
            verdict = v["observed"]["verdict"]
            decided = verdict not in ("unknown", "error")
            by_variant.setdefault(variant, []).append(
                {"value": value, "runs": 1, "decided": int(decided),
                 "violations": int(verdict == "mutex_violation")})
    return {"context": None, "variants": [
        {"variant": variant, "line": None, "safe_edge": None, "breaking_edge": None,
         "points": points} for variant, points in by_variant.items()]}


def with_unit(value, unit):
    return f"{value:g} {unit}" if unit else f"{value:g}"


def boundaries(sweep_map):
    """(variant, safe value, breaking value) nearest the boundary, for each variant with both."""
    return [(entry["variant"], entry["safe_edge"], entry["breaking_edge"])
            for entry in sweep_map["variants"]
            if entry["safe_edge"] is not None and entry["breaking_edge"] is not None]


def draw(reports, name, group, sweep_map):
    parameter, unit = group["parameter"], group["unit"]
    fig, ax = plt.subplots(figsize=(7, 4))
    values = sorted({p["value"] for entry in sweep_map["variants"] for p in entry["points"]})
    for i, entry in enumerate(sweep_map["variants"]):
        color = f"C{i % 10}"
        points = [p for p in entry["points"] if p["decided"] > 0]
        ax.plot([p["value"] for p in points],
                [100.0 * p["violations"] / p["decided"] for p in points],
                marker="o", color=color, label=entry["variant"])
        for variant, safe, breaks in boundaries(sweep_map):
            if variant == entry["variant"]:
                ax.axvspan(min(safe, breaks), max(safe, breaks), color=color, alpha=0.12,
                           label=f"{variant}: turns between {with_unit(safe, unit)} (safe) "
                                 f"and {with_unit(breaks, unit)}")
    if values and values[0] > 0 and values[-1] / values[0] >= 20:
        ax.set_xscale("log")
    ax.set_xticks(values)
    ax.set_xticklabels([f"{v:g}" for v in values])
    ax.minorticks_off()
    ax.set_xlabel(f"{parameter} ({unit})" if unit else parameter)
    ax.set_ylabel("runs with a mutex_violation (%)")
    ax.set_ylim(-3, 103)
    ax.set_title(name)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(os.path.join(reports, f"{name}-sweep.png"), dpi=110)
    plt.close(fig)


def write_group(reports, name, group):
    sweep_map = load_map(reports, name, group)
    parameter, unit = group["parameter"], group["unit"]
    column = f"{parameter} ({unit})" if unit else parameter
    lines = [f"# {name}: violations by {parameter}", ""]
    context = sweep_map.get("context")
    if context:
        how = (f"{context['repetitions']} repetitions" if context.get("repetitions", 1) > 1
               else "one run each")
        lines += [f"Map of the last `locksim run` (seed {context.get('seed')}, {how}): runs with a "
                  "mutex_violation / runs with a decided verdict per value "
                  f"([{name}.map.md]({name}.map.md)).", ""]
        lines += [f"- {entry['line']}" for entry in sweep_map["variants"]]
    else:
        lines += [f"No {name}.map.json (written by `locksim run`): the plot shows the latest run "
                  "of each point, without a boundary."]
    variants = [entry["variant"] for entry in sweep_map["variants"]]
    lines += ["", "Latest run of each point: share of hold windows that overlapped another "
              "client's window, and the verdict.", "",
              f"| {column} | " + " | ".join(variants) + " |",
              "|---|" + "---|" * len(variants)]
    for value in sorted(group["points"]):
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
    draw(reports, name, group, sweep_map)
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
        try:
            print(write_group(reports, name, group))
        except (ValueError, KeyError) as e:
            print(f"plot_sweep.py: {e}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
