#!/usr/bin/env bash
# cluster_test.sh LOCKSIM SOURCE_DIR: Redis Cluster topologies end to end, beyond the verdicts the
# catalogue asserts. Proves: a slot moved during a hold is followed through ASK and then MOVED,
# each a redirect event of the client that followed it, and `locksim check` judges that history
# again with the same verdict; Redlock handed a cluster's primaries is refused MOVED by the two
# that do not serve the lock's slot; the simulator runs cluster scenarios with the same verdicts
# and redirections; what cannot run on a cluster is refused with its reason (client processes,
# promote, a bad shape), exit 2 for bad input; and no redis-server is left behind.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-cluster-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"
cd "$SOURCE" || exit 1

before=$(count_orphans)

"$LOCKSIM" run scenarios/cluster-slot-move-during-hold.json scenarios/cluster-redlock-over-primaries.json \
  --variant lua_owner --variant redlock --out "$WORK/out" >"$WORK/run.out" 2>&1
expect_code "the cluster scenarios run as expected" 0 $? "$WORK/run.out"
history=$(ls "$WORK"/out/cluster-slot-move-during-hold/latest/lua_owner/history.jsonl)
expect_grep "B followed ASK while the slot migrated" \
  '"client":"B","type":"info","f":"redirect","message":"ASK slot [0-9]* from 127.0.0.1:[0-9]* to 127.0.0.1:[0-9]*"' "$history"
expect_grep "A followed MOVED once the slot had moved" \
  '"client":"A","type":"info","f":"redirect","message":"MOVED slot [0-9]* from' "$history"
expect_grep "the migration is a window on p1" '"fault":"slot_migration","phase":"end","server":"p1"' "$history"
"$LOCKSIM" check "$WORK/out/cluster-slot-move-during-hold/latest" >"$WORK/check.out" 2>&1
expect_code "check reads a history with redirections" 0 $? "$WORK/check.out"
expect_grep "check judges it ok again" "lua_owner: observed ok, expected ok" "$WORK/check.out"
expect_grep "Redlock over a cluster's primaries is answered MOVED" "MOVED" \
  "$WORK/out/cluster-redlock-over-primaries/latest/summary.md"
expect_grep "and never gets a majority" "cluster-redlock-over-primaries  *redlock  *error  *error  *yes" "$WORK/run.out"

# The simulator's model cluster: the same scenarios, the same verdicts, the same redirections.
"$LOCKSIM" run scenarios/cluster-crossslot.json scenarios/cluster-slot-move-during-hold.json \
  scenarios/cluster-minority-primary.json --backend sim --seed 3 --out "$WORK/sim" \
  >"$WORK/sim.out" 2>&1
code=$?
[[ $code -eq 0 ]] && pass "the simulator runs the cluster scenarios as expected (exit 0)" ||
  fail "the simulator's cluster scenarios exit $code: $(tail -5 "$WORK/sim.out")"
expect_grep "the simulator followed ASK during the move" '"message":"ASK slot' \
  "$WORK"/sim/cluster-slot-move-during-hold/latest/lua_owner/history.jsonl
expect_grep "and MOVED after it" '"message":"MOVED slot' \
  "$WORK"/sim/cluster-slot-move-during-hold/latest/lua_owner/history.jsonl
expect_grep "the minority primary's replica was elected" '"fault":"failover","server":"r1"' \
  "$WORK"/sim/cluster-minority-primary/latest/lua_owner/history.jsonl
# explore runs a cluster scenario across seeds (its topology an object, not a name).
"$LOCKSIM" explore --variant lua_owner_wait scenarios/cluster-failover-loses-lock.json \
  --schedules 20 --no-shrink --out "$WORK/explore" >"$WORK/explore.out" 2>&1
expect_code "explore runs a cluster scenario's schedules" 0 $? "$WORK/explore.out"
expect_grep "and covers the cluster's election" "failover @" "$WORK/explore.out"

python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
base = json.load(open("scenarios/cluster-crossslot.json"))
processes = dict(base, name="cluster-processes", clients_run_as="processes")
json.dump(processes, open(f"{work}/processes.json", "w"))
promote = dict(base, name="cluster-promote")
promote["steps"] = [{"do": "promote", "server": "r1"}] + base["steps"]
promote["topology"] = "cluster"
json.dump(promote, open(f"{work}/promote.json", "w"))
shape = dict(base, name="cluster-shape", topology={"cluster": {"primaries": 2}})
json.dump(shape, open(f"{work}/shape.json", "w"))
PY
"$LOCKSIM" run "$WORK/processes.json" --variant lua_owner --out "$WORK/p" >"$WORK/p.out" 2>&1
expect_grep "client processes are refused on a cluster, saying why" "have no slot-aware client yet" "$WORK/p.out"
"$LOCKSIM" run "$WORK/promote.json" --out "$WORK/q" >"$WORK/q.out" 2>&1
expect_code "promote on a cluster is bad input" 2 $? "$WORK/q.out"
expect_grep "naming the step and what to use" 'promote.json: \$.steps\[0\].do: "promote" is not for a Redis Cluster' "$WORK/q.out"
"$LOCKSIM" run "$WORK/shape.json" --out "$WORK/r" >"$WORK/r.out" 2>&1
expect_code "a cluster of two primaries is bad input" 2 $? "$WORK/r.out"
expect_grep "naming the field and the range" 'shape.json: \$.topology.cluster.primaries' "$WORK/r.out"
[[ ! -e "$WORK/r" ]] && pass "nothing is written for bad input" || fail "bad input left $WORK/r"

after=$(orphans_after "$before")
[[ $after -le $before ]] && pass "no redis-server left behind ($before orphans before, $after after)" \
  || fail "$((after - before)) redis-server(s) outlived the runs"
finish
