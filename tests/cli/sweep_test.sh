#!/usr/bin/env bash
# sweep_test.sh LOCKSIM SOURCE_DIR: a general sweep ("parameter", "set", "values") end to end on a
# private redis-server. Proves: a scripted file expands into one point per value of the JSON
# Pointer it sets; with --repeat 2 every repetition counts in the safe/unsafe map, whose line
# `locksim run` prints and writes to <out>/<sweep>.map.md and .map.json; each point's
# scenario.json and results.json carry its sweep_point (with the unit), and `locksim check`
# re-judges a point from it; plot_sweep.py draws the map; a pointer that names nothing is bad
# input (exit 2, the file and $.sweep.set[0] named, nothing written).
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-sweep-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

source "$(dirname "$0")/lib.sh"

# A works work_ms inside a 300 ms lease while B tries: 50 and 100 ms leave B waiting for A's
# release (ok); 600 ms outlives the lease, so B gets in beside A (mutex_violation). Margins of
# 200 ms and more either way.
cat >"$WORK/tiny.json" <<'JSON'
{
  "name": "tiny-sweep",
  "source": {"doc": "none", "claim": "A holder working past its lease lets another in."},
  "variants": ["lua_owner"],
  "lock": {"ttl_ms": 300, "acquire_timeout_ms": 3000, "wait": {"strategy": "poll", "interval_ms": 5}},
  "clients": ["A", "B"],
  "steps": [
    {"client": "A", "do": "acquire"},
    {"client": "A", "do": "work", "work_ms": 1},
    {"client": "B", "do": "acquire"},
    {"client": "A", "do": "release"},
    {"client": "B", "do": "work", "until": {"outside": "A"}, "max_ms": 3000},
    {"client": "B", "do": "release"}
  ],
  "sweep": {"parameter": "work_ms", "set": ["/steps/1/work_ms"], "values": [600, 50, 100],
            "unit": "ms"},
  "expect": {"lua_owner": {"50": "ok", "100": "ok",
                           "600": {"verdict": "mutex_violation", "causes": ["lease_expired"]}}}
}
JSON

"$LOCKSIM" run "$WORK/tiny.json" --repeat 2 --seed 1 --out "$WORK/reports" --no-progress \
  >"$WORK/run.log" 2>&1
expect_code "the sweep meets its expectations" 0 $?
expect_grep "one point per value" "tiny-sweep-work_ms-600 *lua_owner .* 2/2 yes" "$WORK/run.log"
expect_grep "the map's heading names the sweep, the parameter and the file" \
  "^Sweep tiny-sweep: runs with a violation / decided runs, by work_ms ($WORK/reports/tiny-sweep.map.md)$" \
  "$WORK/run.log"
expect_grep "the map line counts both repetitions" \
  "^  lua_owner: safe with work_ms up to 100 ms; breaks from 600 ms (rate 2/2)$" "$WORK/run.log"
expect_grep "map.md holds the line" \
  "^- lua_owner: safe with work_ms up to 100 ms; breaks from 600 ms (rate 2/2)$" \
  "$WORK/reports/tiny-sweep.map.md"
expect_grep "map.md has a row per value" "^| 600 | 2/2 |$" "$WORK/reports/tiny-sweep.map.md"
/usr/bin/python3 - "$WORK/reports/tiny-sweep.map.json" >"$WORK/map.txt" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
v = m["variants"][0]
print(m["schema"], m["parameter"], m["unit"], v["breaks_when"], v["safe_edge"], v["breaking_edge"],
      [(p["value"], p["runs"], p["decided"], p["violations"]) for p in v["points"]])
PY
expect_grep "map.json has the boundary and the counts" \
  "^1 work_ms ms larger 100.0 600.0 \[(50.0, 2, 2, 0), (100.0, 2, 2, 0), (600.0, 2, 2, 2)\]$" \
  "$WORK/map.txt"
POINT=$WORK/reports/tiny-sweep-work_ms-600/latest
expect_grep "scenario.json carries the sweep point and its unit" '"unit": "ms"' \
  "$POINT/scenario.json"
expect_grep "scenario.json has the value written at the pointer" '"work_ms": 600' \
  "$POINT/scenario.json"
expect_grep "results.json carries the sweep point" '"parameter": "work_ms"' "$POINT/results.json"
"$LOCKSIM" check "$WORK/reports/tiny-sweep-work_ms-600" >"$WORK/check.log" 2>&1
expect_code "check re-judges a scripted sweep point from its scenario.json" 0 $?
expect_grep "check finds the violation" \
  "tiny-sweep-work_ms-600 / lua_owner: observed mutex_violation (lease_expired)" "$WORK/check.log"

/usr/bin/python3 "$SOURCE/scripts/plot_sweep.py" "$WORK/reports" >"$WORK/plot.log" 2>&1
expect_code "plot_sweep.py draws the sweep" 0 $?
expect_grep "the sweep page quotes the map line" \
  "lua_owner: safe with work_ms up to 100 ms; breaks from 600 ms (rate 2/2)" \
  "$WORK/reports/tiny-sweep-sweep.md"
if [[ -s $WORK/reports/tiny-sweep-sweep.png ]]; then pass "the plot is drawn"; else
  fail "no $WORK/reports/tiny-sweep-sweep.png"; fi

# Bad input: refused before anything runs, naming the file and the pointer's path.
sed 's|"/steps/1/work_ms"|"/steps/9/work_ms"|' "$WORK/tiny.json" >"$WORK/bad.json"
"$LOCKSIM" run "$WORK/bad.json" --out "$WORK/bad-reports" --no-progress >"$WORK/bad.log" 2>&1
expect_code "a pointer that names nothing is bad input" 2 $?
expect_grep "the message names the file, the path and what was expected" \
  "$WORK/bad.json: \$.sweep.set\[0\]: \"/steps/9/work_ms\" names nothing in this file (\$.steps has 6 elements; expected an index from 0 to 5, got \"9\"); expected a JSON Pointer to a number in this file" \
  "$WORK/bad.log"
if [[ -e $WORK/bad-reports ]]; then fail "bad input wrote $WORK/bad-reports"; else
  pass "bad input writes nothing"; fi

finish
