"""locksim_reports: reading locksim's run output, shared by the report scripts."""
import json
import os


def latest_results(reports):
    """Yield (scenario name, results.json dict) for every REPORTS/<scenario>/latest, by name."""
    if not os.path.isdir(reports):
        return
    for name in sorted(os.listdir(reports)):
        path = os.path.join(reports, name, "latest", "results.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                yield name, json.load(f)
