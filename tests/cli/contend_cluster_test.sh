#!/usr/bin/env bash
# contend_cluster_test.sh LOCKSIM SOURCE_DIR: `locksim contend` of a study on a Redis Cluster.
# Proves: a tiny cluster study (two points) runs on a private cluster of three primaries and exits
# 0; contention.json says the study's topology is "cluster", carries its own limit (round trips,
# and redis-benchmark --cluster's capacity) and the primaries its counters are summed over; the
# keys the clients acquired were served by every primary, and each point counts them per
# primary; the commands per acquisition are summed over all the primaries (about what one
# uncontended cycle costs, not the third of it one primary sees); a waiter notified of a release
# is woken on every primary; contention.md says where the study ran; a cluster study with --redis, or with clients on the event loop, is refused (exit 2)
# naming the file and the field, and writes nothing; no redis-server is left behind.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-contend-cluster-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"
cd "$SOURCE" || exit 1

json() {  # json FILE EXPRESSION: prints a Python expression over the document `d`
  /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

before=$(count_orphans)

# Each client its own key, no contention: 3 keys at 3 clients (one per primary), 6 at 6.
cat >"$WORK/tiny.json" <<'JSON'
{"name": "tiny", "topology": {"cluster": {"primaries": 3, "replicas_per_primary": 0, "node_timeout_ms": 5000}},
 "variants": ["lua_owner"], "strategies": [{"strategy": "poll", "interval_ms": 1}],
 "clients": [3, 6], "keys": "per_client", "work_ms": 1, "warmup_ms": 100, "duration_ms": 300}
JSON
# Two clients per key, one key per primary, each waiter woken by the releaser's notify: its BLPOP
# must reach the primary of its key (a waiter's connection to p1 alone is answered MOVED for the
# others' keys, and sleeps its 100 ms fallback out instead: the handoff gap's median with it).
cat >"$WORK/wake.json" <<'JSON'
{"name": "wake", "topology": {"cluster": {"primaries": 3, "replicas_per_primary": 0, "node_timeout_ms": 5000}},
 "variants": ["lua_fair_queue"], "strategies": [{"strategy": "notify", "fallback_ms": 100}],
 "clients": [6], "keys": 3, "work_ms": 1, "warmup_ms": 100, "duration_ms": 300}
JSON
timeout "$(slow 120)" "$LOCKSIM" contend "$WORK/tiny.json" "$WORK/wake.json" --out "$WORK/out" \
  --seed 5 --rtt-samples 200 --no-plots --no-progress >"$WORK/tiny.out" 2>&1
expect_code "two cluster studies run" 0 $? "$WORK/tiny.out"
report="$WORK/out/contention/latest/contention.json"
study='d["studies"][0]'
[[ $(json "$report" "$study['topology']") == cluster ]] && pass "the study's topology is cluster" \
  || fail "topology: $(json "$report" "$study.get('topology')")"
[[ $(json "$report" "$study['cluster']['primaries']") == 3 ]] && pass "of three primaries" \
  || fail "cluster: $(json "$report" "$study.get('cluster')")"
[[ $(json "$report" "$study['counted_servers']") == "['p1', 'p2', 'p3']" ]] \
  && pass "the counters are summed over p1, p2 and p3" \
  || fail "counted_servers: $(json "$report" "$study.get('counted_servers')")"
[[ $(json "$report" "$study['limit']['set_nx_px']['count']") == 200 ]] \
  && pass "the round trip is measured on the cluster" \
  || fail "the cluster's round trips: $(json "$report" "$study['limit']['set_nx_px']['count']")"
capacity=$(json "$report" "$study['limit']['server_ops_per_s']")
[[ $(json "$report" "$study['limit']['server_ops_per_s'] > 1000") == True ]] \
  && pass "redis-benchmark --cluster measured the capacity: $capacity SET NX PX/s" \
  || fail "the cluster's capacity: $capacity"
expect_grep "the capacity is printed as the cluster's" "cluster capacity [0-9]* SET NX PX/s (redis-benchmark --cluster -c 50)" "$WORK/tiny.out"
points="$study['points']"
[[ $(json "$report" "[(p['clients'], p['verdict'], p['acquisitions'] > 0) for p in $points]") == \
   "[(3, 'ok', True), (6, 'ok', True)]" ]] && pass "two ok points that acquired" \
  || fail "points: $(json "$report" "[(p['clients'], p['verdict'], p['acquisitions']) for p in $points]")"
spread=$(json "$report" "[p['keys_per_primary'] for p in $points]")
if [[ $spread == "[{'p1': 1, 'p2': 1, 'p3': 1}, {'p1': 2, 'p2': 2, 'p3': 2}]" ]]; then
  pass "the keys the clients acquired spread evenly over the primaries: $spread"
else
  fail "keys per primary: $spread"
fi
expect_grep "the progress line counts the keys per primary" "keys p1:2 p2:2 p3:2" "$WORK/tiny.out"
# Without contention an acquisition costs what an uncontended cycle does on the whole cluster; a
# count of one primary's commands would be about a third of it.
cycle=$(json "$report" "$study['limit']['commands_per_cycle']['lua_owner']")
per_acquisition=$(json "$report" "[round(p['commands_per_acquisition'], 2) for p in $points]")
if [[ $(json "$report" "all(0.8 * $cycle <= p['commands_per_acquisition'] <= 1.5 * $cycle and p['cpu_us_per_acquisition'] > 0 for p in $points)") == True ]]; then
  pass "commands per acquisition $per_acquisition, summed over the primaries (a cycle: $cycle)"
else
  fail "commands per acquisition $per_acquisition against a cycle's $cycle"
fi
wake='d["studies"][1]["points"][0]'
# A fair queue hands each key to its two clients in turn, and a woken waiter gets in a few
# milliseconds after the release: every client acquires dozens of times in the 300 ms. A waiter
# whose wake-up never comes (its BLPOP on another primary than the key's: Jain 0.36 then) sleeps
# its 100 ms fallback out, so its key's two clients acquire about 3 times each: fewer than 6 is
# that. (Not Jain over all six clients: how fast each primary hands its key over differs with
# the machine's load, 35 against 95 acquisitions under CI's four tests at once, Jain 0.7996.)
shares=$(json "$report" "($wake['acquisitions_per_client'], round($wake['jain'], 3))")
if [[ $(json "$report" "$wake['keys_per_primary'] == {'p1': 1, 'p2': 1, 'p3': 1} and $wake['contended_handoffs'] > 0 and min($wake['acquisitions_per_client']) > 2 * 300 // 100") == True ]]; then
  pass "a notified waiter on every primary is woken by its release (acquisitions per client, Jain): $shares"
else
  fail "the notified waiters (acquisitions per client, Jain): $shares; keys per primary $(json "$report" "$wake['keys_per_primary']")"
fi
md="$WORK/out/contention/latest/contention.md"
expect_grep "contention.md says where the study ran" "On a Redis Cluster\*\* of 3 primaries" "$md"
expect_grep "contention.md has the keys per primary" "| poll-1ms | 6 | 2/2/2 |" "$md"

# Bad input: exit 2, the file and the field named, nothing written.
"$LOCKSIM" contend "$WORK/tiny.json" --redis redis://127.0.0.1:1 --out "$WORK/bad" \
  >"$WORK/redis.out" 2>&1
expect_code "a cluster study with --redis is refused" 2 $? "$WORK/redis.out"
expect_grep "naming the study file and its topology" 'tiny.json: \$.topology: study "tiny" runs on a Redis Cluster' "$WORK/redis.out"
expect_grep "and why it cannot run on --redis" "cannot run on --redis" "$WORK/redis.out"
sed 's/"keys"/"clients_run_as": "event_loop", "keys"/' "$WORK/tiny.json" >"$WORK/loop.json"
"$LOCKSIM" contend "$WORK/loop.json" --out "$WORK/bad" >"$WORK/loop.out" 2>&1
expect_code "a cluster study on the event loop is refused" 2 $? "$WORK/loop.out"
expect_grep "naming clients_run_as" 'loop.json: \$.clients_run_as: a Redis Cluster study runs its clients as threads' "$WORK/loop.out"
[[ ! -e "$WORK/bad" ]] && pass "nothing is written for bad input" || fail "bad input left $WORK/bad"

after=$(orphans_after "$before")
[[ $after -le $before ]] && pass "no redis-server left behind ($before orphans before, $after after)" \
  || fail "$((after - before)) redis-server(s) outlived the study"
finish
