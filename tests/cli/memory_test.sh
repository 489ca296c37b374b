#!/usr/bin/env bash
# memory_test.sh LOCKSIM SOURCE_DIR: a run's memory is bounded per recorded event, and a run that
# would not fit is refused before anything runs.
# Proves: the peak resident memory of a 100-client x 500-cycle workload (350k events; the whole
# run's, its reports included) minus that of a 1-event run, per event, is at most kEventMemoryBytes (the
# figure locksim's up-front estimate uses, read from sim/history/recorder.h); a workload whose
# estimate exceeds --max-memory exits 2 with the estimate in the message and writes nothing; the
# default limit refuses a 256 x 10^6 workload the same way; `explore` keeps its memory as it runs
# schedules (its peak after 40,000 schedules is within 2 MB of its peak after 2,000).
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-memory-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); echo "FAILED: $1"; }

budget=$(sed -n 's/^inline constexpr std::size_t kEventMemoryBytes = \([0-9]*\);.*/\1/p' \
  "$SOURCE/sim/history/recorder.h")
[[ -n $budget ]] || { echo "cannot read kEventMemoryBytes from recorder.h"; exit 1; }

scenario() {  # scenario NAME CLIENTS CYCLES
  cat >"$WORK/$1.json" <<JSON
{"name": "$1", "description": "memory per recorded event",
 "source": {"doc": "none", "claim": "a run's memory is bounded per event"},
 "variants": ["lua_owner"],
 "lock": {"ttl_ms": 5000, "acquire_timeout_ms": 20000, "wait": {"strategy": "poll", "interval_ms": 1}},
 "workload": {"clients": $2, "cycles": $3, "keys": $2, "work_ms": 0, "rest_ms": 0},
 "expect": {"lua_owner": "ok"}}
JSON
}
scenario memory-one 1 1
scenario memory-big 100 500
scenario memory-huge 256 1000000

run_peak_kb() {  # run_peak_kb NAME: runs the scenario; prints the peak resident memory of the
  # whole run in KB, from its start to its last report (summary.md, report.html), not only to
  # results.json's context.peak_rss_mb
  /usr/bin/python3 - "$LOCKSIM" "$WORK/$1.json" "$WORK/out" "$WORK/$1.log" <<'PY'
import resource, subprocess, sys
locksim, scenario, out, log = sys.argv[1:]
with open(log, "w") as sink:
    done = subprocess.run([locksim, "run", scenario, "--out", out, "--seed", "1", "--no-progress"],
                          stdout=sink, stderr=subprocess.STDOUT)
if done.returncode != 0:
    sys.exit(1)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
one_kb=$(run_peak_kb memory-one) || { fail "memory-one ran"; sed 's/^/    /' "$WORK/memory-one.log"; }
big_kb=$(run_peak_kb memory-big) || { fail "memory-big ran"; sed 's/^/    /' "$WORK/memory-big.log"; }
big_dir="$WORK/out/memory-big/latest/lua_owner"
if [[ -n $one_kb && -n $big_kb && -f $big_dir/history.jsonl ]]; then
  events=$(($(wc -l <"$big_dir/history.jsonl") - 1))
  read -r per_event verdict < <(/usr/bin/python3 - "$one_kb" "$big_kb" "$events" "$budget" <<'PY'
import sys
one, big, events, budget = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
per_event = (big - one) * 1024 / events
print(f"{per_event:.0f}", "within" if per_event <= budget else "over")
PY
  )
  echo "    $events events; $per_event bytes an event at the peak (budget $budget); peaks $one_kb and $big_kb KB"
  if [[ $events -ge 300000 ]]; then pass "the workload recorded $events events"; else fail "only $events events"; fi
  if [[ $verdict == within ]]; then
    pass "memory per event $per_event <= $budget bytes"
  else
    fail "memory per event $per_event > $budget bytes (kEventMemoryBytes)"
  fi
fi

"$LOCKSIM" run "$WORK/memory-big.json" --out "$WORK/refused" --max-memory 10 >"$WORK/refused.log" 2>&1
code=$?
if [[ $code == 2 ]]; then pass "--max-memory 10 refuses (exit 2)"; else fail "--max-memory 10: exit $code"; fi
if grep -q "memory-big.json: \$.workload: memory-big with lua_owner would record about [0-9.e+]* events, about [0-9]* MB of memory ($budget bytes an event), more than the 10 MB allowed (--max-memory)" "$WORK/refused.log"; then
  pass "the refusal gives the estimate"
else
  fail "refusal message:"; sed 's/^/    /' "$WORK/refused.log"
fi
if [[ ! -e $WORK/refused ]]; then pass "nothing written when refused"; else fail "$WORK/refused exists"; fi

"$LOCKSIM" run "$WORK/memory-huge.json" --out "$WORK/huge" >"$WORK/huge.log" 2>&1
code=$?
if [[ $code == 2 ]] && grep -q "would record about [0-9.]*e+09 events, about [0-9]* MB.*80% of the memory available" "$WORK/huge.log" \
   && [[ ! -e $WORK/huge ]]; then
  pass "256 x 10^6 refused by the default limit"
else
  fail "256 x 10^6: exit $code"; sed 's/^/    /' "$WORK/huge.log"
fi

# explore folds each schedule into its summary as it goes: memory does not grow with schedules.
cat >"$WORK/explored.json" <<'JSON'
{"name": "explored", "description": "three clients, two cycles, A crashes in its second",
 "source": {"doc": "none", "claim": "explore's memory does not grow with its schedules"},
 "variants": ["lua_owner"],
 "lock": {"ttl_ms": 100, "acquire_timeout_ms": 1000, "wait": {"strategy": "poll", "interval_ms": 5}},
 "clients": ["A", "B", "C"],
 "steps": [
  {"client": "A", "do": "acquire"}, {"client": "A", "do": "work", "work_ms": 10}, {"client": "A", "do": "release"},
  {"client": "B", "do": "acquire"}, {"client": "B", "do": "work", "work_ms": 10}, {"client": "B", "do": "release"},
  {"client": "C", "do": "acquire"}, {"client": "C", "do": "work", "work_ms": 10}, {"client": "C", "do": "release"},
  {"client": "A", "do": "acquire"}, {"client": "A", "do": "work", "work_ms": 10}, {"client": "A", "do": "crash"},
  {"client": "B", "do": "acquire"}, {"client": "B", "do": "work", "work_ms": 10}, {"client": "B", "do": "release"},
  {"client": "C", "do": "acquire"}, {"client": "C", "do": "work", "work_ms": 10}, {"client": "C", "do": "release"}],
 "expect": {"lua_owner": "any"}}
JSON
explore_peak_kb() {  # explore_peak_kb SCHEDULES: the peak resident memory of one explore, in KB
  /usr/bin/python3 - "$LOCKSIM" "$WORK/explored.json" "$1" "$WORK/explore-$1" <<'PY'
import resource, subprocess, sys
locksim, scenario, schedules, out = sys.argv[1:]
done = subprocess.run([locksim, "explore", "--variant", "lua_owner", scenario, "--schedules", schedules,
                       "--out", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
if done.returncode != 0 or f"{schedules} schedules" not in done.stdout:
    print("explore failed:", done.stdout, file=sys.stderr)
    sys.exit(1)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
if small=$(explore_peak_kb 2000) && large=$(explore_peak_kb 40000); then
  echo "    explore peak: $small KB after 2,000 schedules, $large KB after 40,000"
  if [[ $((large - small)) -le 2048 ]]; then
    pass "explore's memory stays flat over its schedules"
  else
    fail "explore grew by $((large - small)) KB from 2,000 to 40,000 schedules"
  fi
else
  fail "explore ran"
fi

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
