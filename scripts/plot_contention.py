#!/usr/bin/python3
"""plot_contention.py: the plots of a `locksim contend` report.

Usage: /usr/bin/python3 scripts/plot_contention.py REPORT_DIR   (a reports/contention/<run-id>
or reports/contention/latest directory holding contention.json)

Writes, per study, into REPORT_DIR:
  <study>-throughput.png   acquisitions/s against clients, a line per variant/strategy, with the
                           limit the round trip allows (dashed)
A study that sweeps a semaphore's permits at one client count is drawn against the permits
instead (and with several client counts, a line per permit count); one that sweeps a read-write
lock's read share, against the read share (linear), with the writers' p99 latency beside.
  <study>-latency.png      p50 and p99 acquire latency against clients (log scale)
  <study>-cdf.png          the acquire latency CDF at the largest client count
  <study>-fairness.png     Jain's index and the barging rate against clients
  <study>-handoff.png      the handoff-gap histogram at the largest client count
and appends the plots' links to contention.md (once).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def permits_of(p):
    return p.get("permits", 1)


def share_of(p):
    return p.get("read_share", 0)


def median_points(points):
    """Per (variant, strategy, permits, read share, clients), the repetition with the median
    throughput."""
    groups = {}
    for p in points:
        groups.setdefault((p["variant"], p["strategy"], permits_of(p), share_of(p), p["clients"]),
                          []).append(p)
    out = []
    for group in groups.values():
        group.sort(key=lambda p: p["throughput_per_s"])
        out.append(group[(len(group) - 1) // 2])
    return out


def x_axis(points):
    """What the plots run along: "permits" for a study that sweeps a semaphore's permits at one
    client count, "read share" for one that sweeps a read-write lock's read share, else
    "clients"."""
    permits = {permits_of(p) for p in points}
    shares = {share_of(p) for p in points}
    clients = {p["clients"] for p in points}
    if len(clients) == 1 and len(shares) > 1:
        return "read share"
    return "permits" if len(permits) > 1 and len(clients) == 1 else "clients"


def x_of(p, axis):
    if axis == "read share":
        return share_of(p)
    return permits_of(p) if axis == "permits" else p["clients"]


def set_x(ax, axis, x_values):
    """Counts run along a log2 axis; a read share (0 to 1) along a linear one."""
    if axis != "read share":
        ax.set_xscale("log", base=2)
    ax.set_xticks(x_values, [str(c) for c in x_values])


def series(points, axis="clients"):
    """{"variant / strategy": [points sorted along the axis]}; with permits swept along clients,
    a line per permit count ("variant / strategy / 2 permits")."""
    by_permits = axis == "clients" and len({permits_of(p) for p in points}) > 1
    by_shares = axis != "read share" and len({share_of(p) for p in points}) > 1
    lines = {}
    for p in median_points(points):
        label = f'{p["variant"]} / {p["strategy"]}'
        if by_permits:
            label += f" / {permits_of(p)} permits"
        if by_shares:
            label += f" / read share {share_of(p):.2f}"
        lines.setdefault(label, []).append(p)
    for line in lines.values():
        line.sort(key=lambda p: x_of(p, axis))
    return lines


def cdf(histogram):
    total = histogram["count"]
    xs, ys, seen = [], [], 0
    for upper, count in histogram["buckets"]:
        seen += count
        xs.append(upper / 1e6)
        ys.append(seen / total)
    return xs, ys


def save(fig, path):
    fig.tight_layout()
    # bbox "tight" keeps a legend placed beside the axes inside the picture.
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return os.path.basename(path)


def place_legend(ax, fontsize=8):
    """A legend beside the axes, so that ten lines and their labels never hide each other."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0.0)


def plot_study(directory, study):
    name = study["name"]
    axis = x_axis(study["points"])
    lines = series(study["points"], axis)
    if not lines:
        return []
    written = []
    x_values = sorted({x_of(p, axis) for p in study["points"]})

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, points in lines.items():
        xs = [x_of(p, axis) for p in points]
        line, = ax.plot(xs, [p["throughput_per_s"] for p in points], marker="o", label=label)
        ax.plot(xs, [p["limit_per_s"] for p in points], linestyle="--", color=line.get_color(),
                alpha=0.5)
    set_x(ax, axis, x_values)
    ax.set_xlabel(axis)
    ax.set_ylabel("acquisitions / s")
    ax.set_title(f"{name}: throughput (dashed: the round-trip limit)")
    place_legend(ax)
    written.append(save(fig, os.path.join(directory, f"{name}-throughput.png")))

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, points in lines.items():
        xs = [x_of(p, axis) for p in points]
        line, = ax.plot(xs, [p["latency"]["p50_ns"] / 1e6 for p in points], marker="o",
                        label=f"{label} p50")
        ax.plot(xs, [p["latency"]["p99_ns"] / 1e6 for p in points], marker="^", linestyle=":",
                color=line.get_color(), label=f"{label} p99")
        # A read-write lock's writers apart (where any wrote): readers can starve them.
        writes = [p for p in points if p.get("write_latency", {}).get("count", 0) > 0
                  and share_of(p) > 0]
        if writes:
            ax.plot([x_of(p, axis) for p in writes],
                    [p["write_latency"]["p99_ns"] / 1e6 for p in writes], marker="s",
                    linestyle="-.", color=line.get_color(), label=f"{label} write p99")
    ax.set_yscale("log")
    set_x(ax, axis, x_values)
    ax.set_xlabel(axis)
    ax.set_ylabel("acquire latency (ms)")
    ax.set_title(f"{name}: acquire latency")
    place_legend(ax, fontsize=7)
    written.append(save(fig, os.path.join(directory, f"{name}-latency.png")))

    top = max(x_values)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, points in lines.items():
        at_top = [p for p in points if x_of(p, axis) == top and p["latency"]["count"] > 0]
        if at_top:
            xs, ys = cdf(at_top[0]["latency"])
            ax.step(xs, ys, where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("acquire latency (ms)")
    ax.set_ylabel("fraction of acquisitions")
    ax.set_title(f"{name}: latency CDF at {top} {axis}")
    place_legend(ax)
    written.append(save(fig, os.path.join(directory, f"{name}-cdf.png")))

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for label, points in lines.items():
        xs = [x_of(p, axis) for p in points]
        left.plot(xs, [p["jain"] for p in points], marker="o", label=label)
        right.plot(xs, [p["barging_rate"] for p in points], marker="o", label=label)
    for ax, title in ((left, "Jain's index (1 = even)"), (right, "barging rate")):
        set_x(ax, axis, x_values)
        ax.set_xlabel(axis)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{name}: {title}")
    place_legend(right)
    written.append(save(fig, os.path.join(directory, f"{name}-fairness.png")))

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, points in lines.items():
        at_top = [p for p in points if x_of(p, axis) == top and p["handoff_gap"]["count"] > 0]
        if at_top:
            buckets = at_top[0]["handoff_gap"]["buckets"]
            ax.step([b[0] / 1e6 for b in buckets], [b[1] for b in buckets], where="mid",
                    label=label)
    ax.set_xscale("log")
    ax.set_xlabel("handoff gap (ms): exit to the next enter while someone waited")
    ax.set_ylabel("handoffs")
    ax.set_title(f"{name}: handoff gap at {top} {axis}")
    if ax.get_legend_handles_labels()[0]:
        place_legend(ax)
    else:
        ax.text(0.5, 0.5, "no contended handoffs", ha="center", va="center",
                transform=ax.transAxes)
    written.append(save(fig, os.path.join(directory, f"{name}-handoff.png")))
    return written


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    directory = argv[1]
    path = os.path.join(directory, "contention.json")
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print(f"plot_contention.py: {path}: {e}", file=sys.stderr)
        return 2
    if report.get("schema") != 1:
        print(f"plot_contention.py: {path}: schema {report.get('schema')!r}, expected 1",
              file=sys.stderr)
        return 2
    links = []
    for study in report["studies"]:
        for png in plot_study(directory, study):
            links.append((study["name"], png))
    md = os.path.join(directory, "contention.md")
    if links and os.path.exists(md):
        with open(md, encoding="utf-8") as f:
            text = f.read()
        marker = "\n## Plots\n"
        if marker in text:
            text = text[: text.index(marker)]
        text += marker + "\n" + "".join(f"![{s}: {png}]({png})\n" for s, png in links)
        tmp = md + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, md)
    print(f"plot_contention.py: {len(links)} plot(s) in {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
