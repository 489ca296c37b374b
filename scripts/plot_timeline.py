#!/usr/bin/python3
"""plot_timeline.py: draw each variant's hold windows as a Gantt chart (timeline.png).

Usage: /usr/bin/python3 scripts/plot_timeline.py RUN_DIR [RUN_DIR ...]

RUN_DIR is reports/<scenario>/<run-id> (or its `latest` link) as written by `locksim run`; for every
variant directory in it (one holding history.jsonl and results.json) this writes
<variant>/timeline.png: one row per client, acquire waits in grey, hold windows in blue (the
`holds` of results.json), the overlapping part of every mutual-exclusion violation in red (its
`findings`), crashes as black crosses, the nemesis's fault windows (`fault_windows`: pauses,
partitions, delayed commands; lost replies as instants) as hatched bars on the row of the client
they were aimed at, and each hold's lease end (`lease_end_ms`) as a tick. Reads only locksim's
JSON output (results.json).
It then makes that variant's "Files:" line in the run's summary.md link the image (locksim writes
"timeline: not drawn yet" there); running it again changes nothing more.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_history(path):
    """The events of history.jsonl (its header line, if any, skipped)."""
    with open(path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return [e for e in lines if "history_schema" not in e]


def waits_and_crashes(events):
    """Acquire waits [invoke, ok|fail|info] and crashes per client, from the history."""
    waits, crashes = [], []
    invoked = {}
    for e in events:
        t, c, f, kind = e["time_ns"] / 1e6, e["client"], e["f"], e["type"]
        if f == "crash":
            crashes.append((c, t))
        elif f == "acquire" and kind == "invoke":
            invoked[c] = t
        elif f == "acquire" and c in invoked:
            waits.append((c, invoked.pop(c), t, kind))
    return waits, crashes


def grants_by_client(events):
    """{client: [(ok time ms, [servers])]} from the acquire oks of a multi-server lock, which
    name the servers that granted them (`granted_on`)."""
    grants = {}
    for e in events:
        if e.get("f") == "acquire" and e.get("type") == "ok" and e.get("granted_on"):
            grants.setdefault(e["client"], []).append((e["time_ns"] / 1e6, e["granted_on"]))
    return grants


def server_deaths(events):
    """[(server, time ms)] of the servers (or Sentinel) that died without the scenario killing
    them: the harness's server_died events."""
    return [(e["server"], e["time_ns"] / 1e6) for e in events
            if e.get("f") == "server_died" and e.get("server")]


def plot_variant(variant_dir):
    history_path = os.path.join(variant_dir, "history.jsonl")
    results_path = os.path.join(variant_dir, "results.json")
    events = read_history(history_path)
    with open(results_path, encoding="utf-8") as f:
        results = json.load(f)
    # The nemesis and the harness get no row: their events are drawn on the clients they concern.
    clients = [c for c in (results.get("clients") or sorted({e["client"] for e in events}))
               if c not in ("nemesis", "harness")]
    row = {name: i for i, name in enumerate(clients)}
    # Servers (a topology's) get rows of their own below the clients: their fault windows, and
    # which client holds the key on which server (a multi-server grant names them: `granted_on`).
    grants = grants_by_client(events)
    # (A client's link fault names the servers of its links, "n1,n2": drawn on the client's row.)
    deaths = server_deaths(events)
    servers = sorted({w["server"] for w in results.get("fault_windows", [])
                      if "server" in w and w["client"] not in row} |
                     {s for g in grants.values() for _, names in g for s in names} |
                     {name for name, _ in deaths})
    server_row = {name: len(clients) + i for i, name in enumerate(servers)}
    waits, crashes = waits_and_crashes(events)
    holds = [(h["client"], h["start_ms"], h["end_ms"]) for h in results.get("holds", [])]
    lease_ends = [(h["client"], h["lease_end_ms"]) for h in results.get("holds", [])
                  if "lease_end_ms" in h and h["lease_end_ms"] < h["end_ms"]]
    faults = [w for w in results.get("fault_windows", []) if w["client"] in row]
    findings = results.get("findings", [])

    height = max(2.2, 0.45 * (len(clients) + len(servers)) + 1.4)
    fig, ax = plt.subplots(figsize=(11, height))
    palette = ["#4a7ebb", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
    for w in (w for w in results.get("fault_windows", [])
              if w.get("server") in server_row and w["client"] not in row):
        width = max(w["end_ms"] - w["start_ms"], 0.05)
        ax.barh(server_row[w["server"]], width, left=w["start_ms"], height=0.85, color="none",
                edgecolor="#7f7f7f", hatch="//", linewidth=0.6)
        if w["fault"] != "down":  # a kill's window: its instant says "kill_server"
            ax.text(w["start_ms"], server_row[w["server"]] - 0.45, w["fault"], fontsize=7,
                    color="#555555", va="bottom")
    # A server that is killed or whose clock jumps loses the key there (a restart without
    # persistence comes back empty): the holder's bar on it ends then.
    forgets = {}
    for w in results.get("fault_windows", []):
        if w.get("server") and w["client"] not in row and w["fault"] in ("kill_server", "clock_jump"):
            forgets.setdefault(w["server"], []).append(w["start_ms"])
    for name, t in deaths:
        forgets.setdefault(name, []).append(t)
        ax.plot([t], [server_row[name]], marker="X", color="#d62728", markersize=11,
                markeredgecolor="black")
        ax.text(t, server_row[name] - 0.45, "died (unplanned)", fontsize=7, color="#d62728",
                va="bottom")
    for h in results.get("holds", []):
        color = palette[row.get(h["client"], 0) % len(palette)]
        end = min(h["end_ms"], h.get("lease_end_ms", h["end_ms"]))
        # The grant behind a hold: the client's last acquire ok at or before the hold began.
        before = [names for ok_ms, names in grants.get(h["client"], []) if ok_ms <= h["start_ms"]]
        if before:
            for name in before[-1]:
                if name in server_row:
                    lost = [t for t in forgets.get(name, []) if h["start_ms"] <= t < end]
                    server_end = min(lost) if lost else end
                    ax.barh(server_row[name], max(server_end - h["start_ms"], 0.05),
                            left=h["start_ms"], height=0.3, color=color)
                    ax.text(h["start_ms"], server_row[name] + 0.38, h["client"] + " holds",
                            fontsize=6, color=color)
    for w in faults:
        width = max(w["end_ms"] - w["start_ms"], 0.05)
        ax.barh(row[w["client"]], width, left=w["start_ms"], height=0.85, color="none",
                edgecolor="#7f7f7f", hatch="//", linewidth=0.6)
        label = w["fault"] + (" (links to " + w["server"] + ")" if w.get("server") else "")
        ax.text(w["start_ms"], row[w["client"]] - 0.45, label, fontsize=7, color="#555555",
                va="bottom")
    for c, start, end, kind in waits:
        if c not in row:
            continue
        color = "#d9d9d9" if kind == "ok" else "#f4b183"
        ax.barh(row[c], end - start, left=start, height=0.35, color=color, edgecolor="none")
    for c, start, end in holds:
        ax.barh(row[c], max(end - start, 0.05), left=start, height=0.6, color="#4a7ebb")
    for v in (f for f in findings if f["kind"] == "mutex_violation"):
        start, end = v["from_ms"], v["to_ms"]
        for client in v["clients"][:2]:  # the earlier and the later holder
            ax.barh(row[client], end - start, left=start, height=0.6, color="#d62728")
        ax.axvspan(start, end, color="#d62728", alpha=0.08)
    for c, t in lease_ends:
        ax.plot([t, t], [row[c] - 0.35, row[c] + 0.35], color="#ff7f0e", linewidth=2)
    for c, t in crashes:
        ax.plot([t], [row[c]], marker="x", color="black", markersize=10, mew=2)
    for s in (f for f in findings if f["kind"] == "stale_release"):
        ax.plot([s["from_ms"]], [row[s["clients"][0]]], marker="v", color="#d62728",
                markersize=9)

    ax.set_yticks(range(len(clients) + len(servers)))
    ax.set_yticklabels(clients + ["server " + s for s in servers])
    ax.invert_yaxis()
    ax.set_xlabel("time since run start (ms)")
    context = results["context"]
    observed = results["observed"]
    causes = ", ".join(observed.get("causes", []))
    verdict = observed["verdict"] + (f" ({causes})" if causes else "")
    mark = "as expected" if results.get("matches") else "NOT as expected"
    ax.set_title(f"{context['scenario']} / {context['variant']}: {verdict}, {mark}", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in ("#4a7ebb", "#d62728", "#d9d9d9",
                                                               "#f4b183")]
    handles.append(plt.Line2D([], [], marker="x", color="black", linestyle="none", mew=2))
    handles.append(plt.Line2D([], [], marker="v", color="#d62728", linestyle="none"))
    handles.append(plt.Line2D([], [], color="#ff7f0e", linewidth=2))
    handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="none", edgecolor="#7f7f7f", hatch="//"))
    fig.legend(handles, ["holds the lock", "overlap (violation)", "waiting (acquired)",
                         "waiting (gave up)", "crash", "stale release", "lease ended",
                         "fault (nemesis)"],
               loc="lower center", ncol=8, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    out = os.path.join(variant_dir, "timeline.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def link_timeline_in_summary(variant_dir):
    """Point the variant's "Files:" line in ../summary.md at its timeline.png.

    The line is `Files: [`<variant>/history.jsonl`](...), ..., timeline: <anything>`; everything
    after "timeline: " becomes the image link, so a second run rewrites the same text. Returns
    True if summary.md now links the image, False if there is no summary or no such line.
    """
    variant_dir = os.path.normpath(variant_dir)
    variant = os.path.basename(variant_dir)
    summary = os.path.join(os.path.dirname(variant_dir), "summary.md")
    if not os.path.isfile(summary):
        return False
    with open(summary, encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = f"Files: [`{variant}/history.jsonl`]"
    marker = ", timeline: "
    link = f"![{variant} timeline]({variant}/timeline.png)"
    found = False
    for i, line in enumerate(lines):
        if line.startswith(start) and marker in line:
            lines[i] = line[:line.index(marker) + len(marker)] + link
            found = True
    if not found:
        return False
    temporary = summary + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    os.replace(temporary, summary)  # a reader sees the old summary or the new one, never half
    return True


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    written = 0
    for run_dir in argv[1:]:
        if not os.path.isdir(run_dir):
            print(f"plot_timeline.py: {run_dir}: not a directory", file=sys.stderr)
            return 2
        candidates = [run_dir] + [os.path.join(run_dir, d) for d in sorted(os.listdir(run_dir))]
        for d in candidates:
            if os.path.isfile(os.path.join(d, "history.jsonl")) and os.path.isfile(
                    os.path.join(d, "results.json")):
                plot_variant(d)
                link_timeline_in_summary(d)
                written += 1
    print(f"wrote {written} timeline PNG(s)")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
