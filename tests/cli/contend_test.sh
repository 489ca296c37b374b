#!/usr/bin/env bash
# contend_test.sh LOCKSIM SOURCE_DIR: `locksim contend` end to end on a private redis-server.
# Proves: a small study writes contention.json (schema 1, the limit, a point per variant x
# strategy x clients with its metrics) and contention.md (a table row per point), exit 0 for a
# correct lock; a point where the lock fails (TTL shorter than the work) is reported with its
# verdict and exits 1, never dropped; a bad study exits 2 naming the file and the JSON path, and
# writes nothing; --help answers; a semaphore's study of two permit counts has a point and a row
# per count, and more permits let more clients in at once (measured from the history).
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-contend-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

source "$(dirname "$0")/lib.sh"

json() {  # json FILE EXPRESSION: prints a Python expression over the document `d`
  /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

"$LOCKSIM" contend --help >"$WORK/help" 2>&1
expect_code "contend --help" 0 $?
expect_grep "contend --help names the report" "contention.json" "$WORK/help"

cat >"$WORK/small.json" <<'JSON'
{"name": "small", "description": "two strategies, one and three clients",
 "variants": ["lua_owner"],
 "strategies": [{"strategy": "poll", "interval_ms": 1}, {"strategy": "notify"}],
 "clients": [1, 3], "keys": 1, "work_ms": 1, "warmup_ms": 100, "duration_ms": 300}
JSON
"$LOCKSIM" contend "$WORK/small.json" --out "$WORK/out" --seed 3 --rtt-samples 200 --no-plots \
  >"$WORK/small.out" 2>&1
expect_code "a correct lock's study passes" 0 $?
report="$WORK/out/contention/latest"
expect_grep "the round trip is measured" "round trip p50 PING" "$WORK/small.out"
[[ $(json "$report/contention.json" 'd["schema"]') == 1 ]] && pass "contention.json has schema 1" || fail "contention.json schema"
[[ $(json "$report/contention.json" 'len(d["studies"][0]["points"])') == 4 ]] && pass "one point per strategy x clients" || fail "points: $(json "$report/contention.json" 'len(d["studies"][0]["points"])')"
[[ $(json "$report/contention.json" 'd["limit"]["set_nx_px"]["count"]') == 200 ]] && pass "--rtt-samples is honoured" || fail "rtt samples"
[[ $(json "$report/contention.json" 'd["limit"]["round_trips_per_cycle"]["lua_owner"]') == 2.0 ]] && pass "lua_owner takes two round trips a cycle" || fail "round trips: $(json "$report/contention.json" 'd["limit"]["round_trips_per_cycle"]')"
[[ $(json "$report/contention.json" 'all(p["acquisitions"] > 0 and p["verdict"] == "ok" and p["latency"]["count"] == p["acquisitions"] for p in d["studies"][0]["points"])') == True ]] && pass "every point acquired, ok, one latency per acquisition" || fail "points' metrics"
[[ $(json "$report/contention.json" 'all(p["contended_handoffs"] > 0 for p in d["studies"][0]["points"] if p["clients"] == 3)') == True ]] && pass "three clients on one key hand over while others wait" || fail "no contended handoffs at 3 clients"
[[ $(json "$report/contention.json" 'all(0 < p["throughput_over_limit"] < 1.5 for p in d["studies"][0]["points"])') == True ]] && pass "throughput is read against the limit" || fail "throughput_over_limit: $(json "$report/contention.json" '[p["throughput_over_limit"] for p in d["studies"][0]["points"]]')"
expect_grep "contention.md has a row per point" "| notify | 3 |" "$report/contention.md"
expect_grep "contention.md states the limit" "The limit of a point is" "$report/contention.md"

# A lock that fails under the study's timing is reported with its verdict, not dropped.
cat >"$WORK/short-ttl.json" <<'JSON'
{"name": "short-ttl", "variants": ["set_nx_ex"], "strategies": [{"strategy": "poll", "interval_ms": 1}],
 "clients": [3], "keys": 1, "work_ms": 30, "ttl_ms": 10, "warmup_ms": 0, "duration_ms": 300}
JSON
"$LOCKSIM" contend "$WORK/short-ttl.json" --out "$WORK/out2" --seed 3 --rtt-samples 50 --no-plots \
  --junit "$WORK/short.xml" >"$WORK/short.out" 2>&1
expect_code "a point with a violation exits 1" 1 $?
xmllint --noout --schema "$SOURCE/tests/junit/junit.xsd" "$WORK/short.xml" 2>/dev/null
expect_code "contend --junit validates against the schema" 0 $?
[[ $(/usr/bin/python3 -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); f = r.findall(".//testcase/failure"); print(len(r.findall(".//testcase")), len(f), f[0].get("message") if f else "")' "$WORK/short.xml") == "1 1 observed mutex_violation"* ]] && pass "contend --junit: the violating point is a failure" || fail "contend --junit: $(cat "$WORK/short.xml")"
expect_grep "the violation is printed" "mutex_violation" "$WORK/short.out"
expect_grep "the violation is in the table" "mutex_violation" "$WORK/out2/contention/latest/contention.md"

# Bad studies: exit 2, the file and the path named, nothing written.
bad() {  # bad NAME JSON PATTERN
  echo "$2" >"$WORK/bad.json"
  "$LOCKSIM" contend "$WORK/bad.json" --out "$WORK/bad-out" >"$WORK/bad.out" 2>&1
  expect_code "bad study: $1" 2 $?
  expect_grep "bad study: $1 names the path" "bad.json: $3" "$WORK/bad.out"
}
bad "unknown key" '{"name": "x", "variants": ["lua_owner"], "strategies": [{"strategy": "poll"}], "clients": [1], "duraton_ms": 5}' '\$.duraton_ms: unknown key (did you mean "duration_ms"?)'
bad "unknown strategy" '{"name": "x", "variants": ["lua_owner"], "strategies": [{"strategy": "pol"}], "clients": [1]}' '\$.strategies\[0\].strategy: unknown'
bad "decreasing clients" '{"name": "x", "variants": ["lua_owner"], "strategies": [{"strategy": "poll"}], "clients": [4, 2]}' '\$.clients\[1\]: client counts must increase'
bad "unknown variant" '{"name": "x", "variants": ["lua_ownr"], "strategies": [{"strategy": "poll"}], "clients": [1]}' '\$.variants\[0\]: unknown variant "lua_ownr" (did you mean "lua_owner"?)'
bad "bad work range" '{"name": "x", "variants": ["lua_owner"], "strategies": [{"strategy": "poll"}], "clients": [1], "work_ms": {"min": 5, "max": 1}}' '\$.work_ms: "min" (5) must not exceed "max" (1)'
bad "event loop, multi-command variant" '{"name": "x", "variants": ["lua_owner", "get_then_del"], "strategies": [{"strategy": "poll"}], "clients": [1], "clients_run_as": "event_loop"}' '\$.clients_run_as: "event_loop" cannot run get_then_del: get_then_del needs several commands'
bad "a library on threads" '{"name": "x", "variants": ["lua_owner", "lib:redis-py"], "strategies": [{"strategy": "poll"}], "clients": [1]}' '\$.variants: "lib:redis-py" is a lock library, whose clients are its adapter'"'"'s processes'
bad "permits for a mutex" '{"name": "x", "variants": ["zset_semaphore_server", "lua_owner"], "strategies": [{"strategy": "poll"}], "clients": [1], "permits": [1, 2]}' '\$.permits: expected only semaphore variants when permits are swept, but "lua_owner" is a mutex (semaphores: zset_semaphore, zset_semaphore_server, fair_semaphore'
bad "decreasing permits" '{"name": "x", "variants": ["zset_semaphore_server"], "strategies": [{"strategy": "poll"}], "clients": [1], "permits": [2, 1]}' '\$.permits\[1\]: permit counts must increase'
bad "a read share above 1" '{"name": "x", "variants": ["rw_lock_fair"], "strategies": [{"strategy": "poll"}], "clients": [1], "read_share": [0, 1.5]}' '\$.read_share\[1\]: expected a share of read holds between 0 and 1, got 1.5'
if [[ -e $WORK/bad-out ]]; then fail "a bad study wrote $WORK/bad-out"; else pass "a bad study writes nothing"; fi

# A semaphore's study sweeps its permits: a point and a table row per permit count, and with more
# permits more of the six clients are inside at once, the most and the mean over the window, both
# counted from the history's enter and exit events (no timing is asserted).
cat >"$WORK/permits.json" <<'JSON'
{"name": "permits", "variants": ["zset_semaphore_server"], "permits": [1, 3],
 "strategies": [{"strategy": "poll", "interval_ms": 1}], "clients": [6],
 "work_ms": 5, "warmup_ms": 100, "duration_ms": 500}
JSON
"$LOCKSIM" contend "$WORK/permits.json" --out "$WORK/permits-out" --seed 3 --rtt-samples 50 \
  --no-plots >"$WORK/permits.out" 2>&1
expect_code "a semaphore's permits study passes" 0 $?
points="$WORK/permits-out/contention/latest/contention.json"
permit_points='d["studies"][0]["points"]'
if [[ $(json "$points" "[(p['permits'], p['clients'], p['verdict']) for p in $permit_points]") == \
      "[(1, 6, 'ok'), (3, 6, 'ok')]" ]]; then
  pass "one ok point per permit count"
else
  fail "permits points: $(json "$points" "[(p['permits'], p['clients'], p['verdict']) for p in $permit_points]")"
fi
holders=$(json "$points" "[(p['most_holders'], round(p['mean_holders'], 2)) for p in $permit_points]")
if [[ $(json "$points" "(lambda p: p[0]['most_holders'] == 1 and 1 < p[1]['most_holders'] <= 3 and p[1]['mean_holders'] > p[0]['mean_holders'])($permit_points)") == True ]]; then
  pass "more permits, more holders inside at once: $holders"
else
  fail "holders inside (most, mean) per permit count: $holders"
fi
expect_grep "contention.md has a row for 1 permit" "| poll-1ms | 1 | 6 |" \
  "$WORK/permits-out/contention/latest/contention.md"
expect_grep "contention.md has a row for 3 permits" "| poll-1ms | 3 | 6 |" \
  "$WORK/permits-out/contention/latest/contention.md"
expect_grep "the progress line names the permits" "permits zset_semaphore_server poll-1ms p=3 c=6" \
  "$WORK/permits.out"

# A read-write lock's study sweeps its read share: a point per share, each hold drawn read or
# write. With writer preference (rw_lock_fair) readers share the lock (more holders inside at
# once as the share grows) and every point is ok; the writers' latency is reported apart (how
# long reader preference keeps a writer out depends on the machine's timing, so rw_lock's
# starvation is the scenario rw-reader-stream-starves-writer's to show, not this test's). A mutex
# in such a study is refused, naming the field.
cat >"$WORK/reads.json" <<'JSON'
{"name": "reads", "variants": ["rw_lock_fair"], "read_share": [0, 0.9],
 "strategies": [{"strategy": "poll", "interval_ms": 1}], "clients": [6],
 "work_ms": 5, "warmup_ms": 100, "duration_ms": 500}
JSON
"$LOCKSIM" contend "$WORK/reads.json" --out "$WORK/reads-out" --seed 3 --rtt-samples 50 \
  --no-plots >"$WORK/reads.out" 2>&1
expect_code "a read-write lock's read share study passes" 0 $?
points="$WORK/reads-out/contention/latest/contention.json"
read_points='d["studies"][0]["points"]'
shares=$(json "$points" "[(p['read_share'], p['verdict'], p['most_holders'], p['write_acquisitions'] <= p['acquisitions'], p['write_latency']['count'] == p['write_acquisitions']) for p in $read_points]")
if [[ $(json "$points" "(lambda p: [x['read_share'] for x in p] == [0, 0.9] and all(x['verdict'] == 'ok' for x in p) and p[0]['most_holders'] == 1 and p[1]['most_holders'] > 1 and p[0]['write_acquisitions'] == p[0]['acquisitions'] and p[1]['write_acquisitions'] < p[1]['acquisitions'])($read_points)") == True ]]; then
  pass "read share 0: every hold a write, one inside; 0.9: readers share: $shares"
else
  fail "read share points (share, verdict, most inside, writes <= all, write latency count): $shares"
fi
expect_grep "contention.md has a row per read share" "| poll-1ms | 0.90 | 6 |" \
  "$WORK/reads-out/contention/latest/contention.md"
expect_grep "contention.md shows the writers' latency" "write p99 ms" \
  "$WORK/reads-out/contention/latest/contention.md"
expect_grep "the progress line names the read share" "reads rw_lock_fair poll-1ms r=0.90 c=6" \
  "$WORK/reads.out"
sed 's/"rw_lock_fair"/"lua_owner"/' "$WORK/reads.json" >"$WORK/reads-mutex.json"
"$LOCKSIM" contend "$WORK/reads-mutex.json" --out "$WORK/reads-mutex-out" >"$WORK/reads-mutex.out" 2>&1
expect_code "a read share for a mutex is refused" 2 $?
expect_grep "the refusal names the field" 'reads-mutex.json: $.read_share: expected only read-write variants' \
  "$WORK/reads-mutex.out"

# A library study: processes, one series per library labelled "library", beside lua_owner's
# `locksim worker` processes. (A 400 ms window once ended with no acquisition of redis-py's on a
# fresh clone's loaded start; a second of it is ample on a loaded machine.)
cat >"$WORK/lib.json" <<'JSON'
{"name": "lib", "variants": ["lua_owner", "lib:redis-py"], "clients_run_as": "processes",
 "strategies": [{"strategy": "poll", "interval_ms": 1}], "clients": [2],
 "work_ms": 1, "warmup_ms": 100, "duration_ms": 1000}
JSON
"$LOCKSIM" contend "$WORK/lib.json" --out "$WORK/lib-out" --no-progress >"$WORK/lib.out" 2>&1
expect_code "a library study runs" 0 $?
points="$WORK/lib-out/contention/latest/contention.json"
if [[ $(json "$points" '[(p["variant"], p["strategy"]) for p in d["studies"][0]["points"]]') == \
      "[('lua_owner', 'poll-1ms'), ('lib:redis-py', 'library')]" ]]; then
  pass "the library's point is labelled library"
else
  fail "library study points: $(json "$points" '[(p["variant"], p["strategy"]) for p in d["studies"][0]["points"]]')"
fi
if [[ $(json "$points" 'min(p["acquisitions"] for p in d["studies"][0]["points"])') -gt 0 ]]; then
  pass "both processes series acquire in the window"
else
  fail "a series without acquisitions: $(json "$points" '[p["acquisitions"] for p in d["studies"][0]["points"]]')"
  sed 's/^/    /' "$WORK/lib.out"
  json "$points" 'json.dumps(d["studies"][0]["points"], indent=1)' | head -80 | sed 's/^/    /'
fi

finish
