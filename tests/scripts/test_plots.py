"""test_plots: plot_timeline.py, catalogue.py and plot_sweep.py on checked-in locksim output (a
real stale-release run, a real ttl_over_work sweep without a map, and a real pause_ms sweep with
the map `locksim run --repeat 20` wrote): the PNGs are written and linked, the catalogue matrix
shows each variant's observed verdict, and the sweep page quotes the map and marks its boundary."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
FIXTURE = os.path.join(HERE, "fixtures", "reports")


class ReportsFixture(unittest.TestCase):
    """A temporary copy of the checked-in reports, with `latest` links as locksim makes them."""

    def setUp(self):
        self.reports = os.path.join(tempfile.mkdtemp(prefix="locksim-plot-test-"), "reports")
        shutil.copytree(FIXTURE, self.reports)
        scenario = os.path.join(self.reports, "stale-release")
        os.symlink("20261122-run", os.path.join(scenario, "latest"))
        self.run_dir = os.path.join(scenario, "latest")
        for name in os.listdir(self.reports):
            if name.startswith(("doc-e-ttl-ratio-ttl-x", "pause-sweep-pause_ms-")):
                os.symlink("run", os.path.join(self.reports, name, "latest"))

    def tearDown(self):
        shutil.rmtree(os.path.dirname(self.reports))

    def script(self, name, *args):
        return subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *args],
                              capture_output=True, text=True, check=False)


class PlotScripts(ReportsFixture):

    def test_timeline_png_per_variant(self):
        """Each variant directory gets a non-empty PNG."""
        result = self.script("plot_timeline.py", self.run_dir)
        self.assertEqual(result.returncode, 0, result.stderr)
        for variant in ("set_nx_ex", "lua_owner"):
            png = os.path.join(self.run_dir, variant, "timeline.png")
            self.assertTrue(os.path.isfile(png), png)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_timeline_linked_in_summary(self):
        """summary.md links each drawn timeline, only those, and a second run changes nothing."""
        summary = os.path.join(self.run_dir, "summary.md")
        with open(summary, encoding="utf-8") as f:
            before = f.read()
        self.assertNotIn("timeline.png)", before)  # locksim links no timeline it did not draw
        self.assertEqual(before.count("timeline: not drawn yet"), 3)
        result = self.script("plot_timeline.py", self.run_dir)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(summary, encoding="utf-8") as f:
            after = f.read()
        for variant in ("set_nx_ex", "lua_owner"):
            self.assertIn(f"(open in ui.perfetto.dev), timeline: ![{variant} timeline]"
                          f"({variant}/timeline.png)\n", after)
        # naive has no variant directory in the fixture: no image, so no link.
        self.assertIn("draws `naive/timeline.png` and links it here)", after)
        self.assertEqual(after.count("timeline: not drawn yet"), 1)
        self.assertEqual(len(after.splitlines()), len(before.splitlines()))
        self.assertEqual(self.script("plot_timeline.py", self.run_dir).returncode, 0)
        with open(summary, encoding="utf-8") as f:
            self.assertEqual(f.read(), after)

    def test_timeline_of_one_variant_directory(self):
        """Given one variant's directory, only that variant's line in summary.md is linked."""
        result = self.script("plot_timeline.py", os.path.join(self.run_dir, "lua_owner") + "/")
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.run_dir, "summary.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("![lua_owner timeline](lua_owner/timeline.png)", text)
        self.assertNotIn("![set_nx_ex timeline]", text)

    def test_unplanned_death_on_its_server_row(self):
        """A real run in which n3 was killed from outside: the timeline finds the server_died
        event (a row for n3, the death marked there, A's hold on n3 cut at it), the servers each
        grant came from (the typed `granted_on`), and draws."""
        scenario = os.path.join(self.reports, "redlock-long-hold")
        os.symlink("20261125-died", os.path.join(scenario, "latest"))
        run = os.path.join(scenario, "latest")
        sys.path.insert(0, SCRIPTS)
        try:
            import plot_timeline  # pylint: disable=import-outside-toplevel
        finally:
            sys.path.pop(0)
        events = plot_timeline.read_history(os.path.join(run, "redlock", "history.jsonl"))
        deaths = plot_timeline.server_deaths(events)
        self.assertEqual([name for name, _ in deaths], ["n3"])
        self.assertGreater(deaths[0][1], 0)
        grants = plot_timeline.grants_by_client(events)
        self.assertEqual({client: [names for _, names in g] for client, g in grants.items()},
                         {"A": [["n1", "n2", "n3", "n4", "n5"]], "B": [["n1", "n2", "n4", "n5"]]})
        result = self.script("plot_timeline.py", run)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(os.path.isfile(os.path.join(run, "redlock", "timeline.png")))

    def test_timeline_rejects_missing_directory(self):
        """A path that is not a run directory is an error, not an empty success."""
        result = self.script("plot_timeline.py", os.path.join(self.reports, "nope"))
        self.assertEqual(result.returncode, 2)

    def test_catalogue_matrix(self):
        """The matrix names the scenario and each variant's observed verdict with causes."""
        result = self.script("catalogue.py", self.reports)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.reports, "catalogue.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("[stale-release](stale-release/latest/summary.md)", text)
        self.assertIn("mutex_violation (lease_expired, stale_release)", text)
        self.assertIn("| set_nx_ex | lua_owner |", text)

    def test_catalogue_marks_mismatch(self):
        """An outcome that differs from its expectation is shown in bold with the expectation."""
        path = os.path.join(self.run_dir, "results.json")
        with open(path, encoding="utf-8") as f:
            results = json.load(f)
        results["variants"][1]["matches"] = False
        with open(path, "w", encoding="utf-8") as f:
            json.dump(results, f)
        result = self.script("catalogue.py", self.reports)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("**mutex_violation", result.stdout)


class SweepScript(ReportsFixture):
    def test_sweep_table_and_plot(self):
        """The four points of a real sweep become one table row each and a PNG."""
        result = self.script("plot_sweep.py", self.reports)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.reports, "doc-e-ttl-ratio-sweep.md"), encoding="utf-8") as f:
            text = f.read()
        for value in ("| 0.5 |", "| 1 |", "| 2 |", "| 30 |"):
            self.assertIn(value, text)
        self.assertIn("| ttl_over_work | set_nx_ex | lua_owner |", text)
        with open(os.path.join(self.reports, "doc-e-ttl-ratio-sweep.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_sweep_without_map_is_plotted_from_latest_runs(self):
        """A sweep whose reports have no map.json (an older run) says so and is still drawn."""
        result = self.script("plot_sweep.py", self.reports)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.reports, "doc-e-ttl-ratio-sweep.md"), encoding="utf-8") as f:
            self.assertIn("No doc-e-ttl-ratio.map.json", f.read())

    def test_map_lines_and_unit(self):
        """A general sweep's page quotes the map locksim wrote (every repetition counted), names
        the parameter with its unit, and links the map and the plot."""
        result = self.script("plot_sweep.py", self.reports)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.reports, "pause-sweep-sweep.md"), encoding="utf-8") as f:
            text = f.read()
        with open(os.path.join(self.reports, "pause-sweep.map.json"), encoding="utf-8") as f:
            sweep_map = json.load(f)
        for entry in sweep_map["variants"]:
            self.assertIn(f"- {entry['line']}\n", text)
        self.assertIn("seed 1, 20 repetitions", text)
        self.assertIn("| pause_ms (ms) | lua_owner_renew | lua_owner |", text)
        for value in ("| 100 |", "| 700 |", "| 1500 |"):
            self.assertIn(value, text)
        self.assertIn("[pause-sweep.map.md](pause-sweep.map.md)", text)
        with open(os.path.join(self.reports, "pause-sweep-sweep.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_boundary_is_between_last_safe_and_first_breaking(self):
        """The shaded boundary spans the map's safe and breaking values nearest the boundary,
        for a variant that has both; a variant that breaks at every value has none."""
        sys.path.insert(0, SCRIPTS)
        import plot_sweep  # noqa: E402
        with open(os.path.join(self.reports, "pause-sweep.map.json"), encoding="utf-8") as f:
            self.assertEqual(plot_sweep.boundaries(json.load(f)),
                             [("lua_owner_renew", 500.0, 700.0)])
        sweep_map = {"variants": [
            {"variant": "set_nx_ex", "safe_edge": 2.0, "breaking_edge": 1.0},
            {"variant": "lua_owner", "safe_edge": 1500.0, "breaking_edge": None}]}
        self.assertEqual(plot_sweep.boundaries(sweep_map), [("set_nx_ex", 2.0, 1.0)])

    def test_map_of_another_schema_is_refused(self):
        """A map.json of an unknown schema is an error naming the file, not a wrong plot."""
        with open(os.path.join(self.reports, "pause-sweep.map.json"), "w", encoding="utf-8") as f:
            f.write('{"schema": 9}')
        result = self.script("plot_sweep.py", self.reports)
        self.assertEqual(result.returncode, 2)
        self.assertIn("pause-sweep.map.json: schema 9, expected 1", result.stderr)

    def test_no_sweep_is_an_error(self):
        """A reports directory without sweep results says so and fails."""
        for name in os.listdir(self.reports):
            if name.startswith(("doc-e", "pause-sweep")):
                path = os.path.join(self.reports, name)
                if os.path.isdir(path):
                    shutil.rmtree(path)
        self.assertEqual(self.script("plot_sweep.py", self.reports).returncode, 1)


if __name__ == "__main__":
    unittest.main()


class ContentionPlots(unittest.TestCase):
    """plot_contention.py on a checked-in `locksim contend` report (a real two-strategy study)."""

    def setUp(self):
        self.dir = os.path.join(tempfile.mkdtemp(prefix="locksim-contention-plot-"), "report")
        shutil.copytree(os.path.join(HERE, "fixtures", "contention"), self.dir)

    def tearDown(self):
        shutil.rmtree(os.path.dirname(self.dir))

    def run_script(self, *args):
        return subprocess.run([sys.executable, os.path.join(SCRIPTS, "plot_contention.py"), *args],
                              capture_output=True, text=True, check=False)

    def test_every_plot_is_drawn_and_linked_once(self):
        """Five PNGs per study, linked from contention.md; a second run links them once."""
        result = self.run_script(self.dir)
        self.assertEqual(result.returncode, 0, result.stderr)
        for kind in ("throughput", "latency", "cdf", "fairness", "handoff"):
            png = os.path.join(self.dir, f"small-{kind}.png")
            self.assertTrue(os.path.isfile(png), png)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertEqual(self.run_script(self.dir).returncode, 0)
        with open(os.path.join(self.dir, "contention.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(text.count("## Plots"), 1)
        self.assertEqual(text.count("(small-throughput.png)"), 1)

    def test_median_repetition_is_plotted(self):
        """Of three repetitions of a point, the one with the median throughput is used."""
        sys.path.insert(0, SCRIPTS)
        import plot_contention  # noqa: E402
        points = [{"variant": "v", "strategy": "s", "clients": 1, "throughput_per_s": t}
                  for t in (300, 100, 200)]
        self.assertEqual([p["throughput_per_s"] for p in plot_contention.median_points(points)],
                         [200])

    def test_a_read_share_study_runs_along_the_read_share(self):
        """A study that sweeps a read-write lock's read share at one client count is drawn along
        the share, a line per variant (the medians of its repetitions), and its shares are apart
        in the median's groups."""
        sys.path.insert(0, SCRIPTS)
        import plot_contention  # noqa: E402
        points = [{"variant": "v", "strategy": "s", "clients": 8, "read_share": share,
                   "throughput_per_s": t}
                  for share, t in ((0, 100), (0.5, 300), (0.5, 200), (0.5, 250), (0.9, 700))]
        self.assertEqual(plot_contention.x_axis(points), "read share")
        lines = plot_contention.series(points, "read share")
        self.assertEqual(list(lines), ["v / s"])
        self.assertEqual([(p["read_share"], p["throughput_per_s"]) for p in lines["v / s"]],
                         [(0, 100), (0.5, 250), (0.9, 700)])
        # Along the clients (two counts), a line per read share.
        more = points + [dict(p, clients=4) for p in points]
        self.assertEqual(plot_contention.x_axis(more), "clients")
        self.assertEqual(sorted(plot_contention.series(more, "clients")),
                         ["v / s / read share 0.00", "v / s / read share 0.50",
                          "v / s / read share 0.90"])

    def test_bad_input_is_refused(self):
        """A directory without contention.json, or another schema, exits 2 naming the file."""
        os.remove(os.path.join(self.dir, "contention.json"))
        result = self.run_script(self.dir)
        self.assertEqual(result.returncode, 2)
        self.assertIn("contention.json", result.stderr)
        with open(os.path.join(self.dir, "contention.json"), "w", encoding="utf-8") as f:
            f.write('{"schema": 7, "studies": []}')
        result = self.run_script(self.dir)
        self.assertEqual(result.returncode, 2)
        self.assertIn("schema 7", result.stderr)
