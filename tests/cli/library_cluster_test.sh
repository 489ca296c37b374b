#!/usr/bin/env bash
# library_cluster_test.sh LOCKSIM SOURCE_DIR: lock libraries on a real Redis Cluster of six
# servers. Proves: connect carries "cluster" (every node, the lock's primary first) to a library
# whose adapter has a cluster client, which then runs the cluster scenarios with its reference's
# verdicts: redlock (ioredis's Cluster) and redis-py (RedisCluster) lose the lock in a failover
# (lock_lost) and keep it through a slot move, redis-py's client following ASK and MOVED itself;
# a library without a cluster client is skipped with its reason (its own, when its libraries.json
# entry gives one); a quorum library never runs on a cluster; and no redis-server is left behind.
# Without the adapters' cluster clients the same runs end in MOVED and ASK errors.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-library-cluster-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"
cd "$SOURCE" || exit 1

before=$(count_orphans)

# --- what connect carries: redis-py's adapter behind a tee of its input --------------------------
mkdir -p "$WORK/adapters"
cp -r adapters/python adapters/python-redis-py "$WORK/adapters/"
cat >"$WORK/tee.sh" <<EOF
#!/bin/bash
tee -a "$WORK/input.jsonl" | /usr/bin/python3 "$WORK/adapters/python-redis-py/adapter.py"
EOF
chmod +x "$WORK/tee.sh"
/usr/bin/python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
libraries = json.load(open("adapters/libraries.json"))["libraries"]
entry = next(lib for lib in libraries if lib["name"] == "lib:redis-py")
entry["command"] = [work + "/tee.sh"]
json.dump({"libraries": [entry]}, open(work + "/adapters/libraries.json", "w"))
PY
LOCKSIM_ADAPTERS_DIR="$WORK/adapters" timeout 300 "$LOCKSIM" run \
  scenarios/cluster-slot-move-during-hold.json --variant lib:redis-py --out "$WORK/tee" \
  --no-progress >"$WORK/tee.out" 2>&1
expect_code "redis-py runs the slot move behind the tee" 0 $? "$WORK/tee.out"
if /usr/bin/python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
connects = [json.loads(line) for line in open(work + "/input.jsonl") if '"connect"' in line]
assert len(connects) == 2, connects
for connect in connects:
    nodes = connect["cluster"]
    assert [n["name"] for n in nodes] == ["p1", "p2", "p3"], nodes
    assert nodes[0]["port"] == connect["redis"]["port"], connect
PY
then pass "connect carries every node of the cluster, the lock's primary (p1) first"
else fail "connect's cluster: $(grep '"connect"' "$WORK/input.jsonl" | head -c 600)"; fi

# --- the libraries through a failover and a slot move ---------------------------------------------
timeout 600 "$LOCKSIM" run scenarios/cluster-failover-loses-lock.json \
  scenarios/cluster-slot-move-during-hold.json --variant lib:redlock --variant lib:redis-py \
  --out "$WORK/run" --no-progress >"$WORK/run.out" 2>&1
expect_code "redlock and redis-py run the cluster scenarios as expected" 0 $? "$WORK/run.out"
for lib in lib:redlock lib:redis-py; do
  expect_grep "$lib loses the lock in the failover" \
    "cluster-failover-loses-lock *$lib *mutex_violation (lock_lost) *mutex_violation (lock_lost) *yes" \
    "$WORK/run.out"
  expect_grep "$lib keeps it through the slot move" \
    "cluster-slot-move-during-hold *$lib *ok *ok *yes" "$WORK/run.out"
  expect_grep "$lib: B gets the lock from the elected replica" '"client":"B","type":"ok","f":"acquire"' \
    "$WORK/run/cluster-failover-loses-lock/latest/$lib/history.jsonl"
done
stderr=$(cat "$WORK"/run/cluster-slot-move-during-hold/latest/lib:redis-py/*.stderr 2>/dev/null)
if grep -q "AskError" <<<"$stderr" && grep -q "MovedError" <<<"$stderr"; then
  pass "redis-py's cluster client followed ASK and MOVED (its log, in the run directory)"
else
  fail "no ASK and MOVED in redis-py's stderr: ${stderr:0:400}"
fi

# --- who is skipped, and why -----------------------------------------------------------------------
"$LOCKSIM" list --json scenarios/cluster-failover-loses-lock.json \
  scenarios/cluster-redlock-over-primaries.json >"$WORK/list.json" 2>"$WORK/list.err"
expect_code "list reads the cluster scenarios" 0 $? "$WORK/list.err"
/usr/bin/python3 -c '
import json, sys
for lib in json.load(open(sys.argv[1]))["libraries"]:
    for skip in lib["skips"]:
        print(skip)
' "$WORK/list.json" >"$WORK/skips.out"
expect_grep "a library without a cluster client is skipped, saying so" \
  'lib:warlock skips cluster-failover-loses-lock: its topology is a Redis Cluster, and the adapter connects to one server (it has no cluster client' \
  "$WORK/skips.out"
expect_grep "a library that says why it cannot is skipped with its own reason" \
  "lib:tooz skips cluster-failover-loses-lock: .*tooz 3.1.0's Redis driver makes a redis.StrictRedis" \
  "$WORK/skips.out"
expect_grep "a quorum library never runs on a cluster" \
  'lib:redlock-quorum skips cluster-redlock-over-primaries: its topology is a Redis Cluster, whose nodes a quorum library' \
  "$WORK/skips.out"
expect_no_grep "a library with a cluster client is not skipped" \
  'lib:\(redis-py\|redlock\|ioredis-lock\) skips cluster-failover-loses-lock' "$WORK/skips.out"

after=$(orphans_after "$before")
[[ $after -le $before ]] && pass "no redis-server left behind ($before orphans before, $after after)" \
  || fail "$((after - before)) redis-server(s) outlived the runs"
finish
