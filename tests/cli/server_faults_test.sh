#!/usr/bin/env bash
# server_faults_test.sh LOCKSIM SOURCE_DIR: server faults on real redis-servers that locksim
# starts for each run (topologies). Proves, one fault at a time: kill -9 and restart without
# persistence forgets the lock (lock_lost, named in words with the server), also to a client
# that asked while the server was down (refused, it tries again), with appendfsync
# always it does not; SIGSTOP of the server expires the lease on resume; a clock jump through the
# preloaded shift expires the key early; a cut replication link then promotion loses it; the
# fault windows and their servers are in results.json; a link fault on chosen servers' links holds
# only those (a Redlock release that misses a minority); --redis refuses a topology file named on the command line (exit 2);
# a server fault without a topology, or naming an unknown server, is bad input (exit 2); and no
# redis-server or sentinel is left behind.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-server-faults-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"
cd "$SOURCE" || exit 1

before=$(count_orphans)

"$LOCKSIM" run scenarios/server-restart-forgets-lock.json scenarios/server-restart-aof-always.json \
  scenarios/server-pause-expires-lease.json scenarios/server-clock-jump.json \
  --variant lua_owner --out "$WORK/out" >"$WORK/run.out" 2>&1
expect_code "the server-fault scenarios run as expected" 0 $? "$WORK/run.out"
expect_grep "restart without persistence: lock_lost" "server-restart-forgets-lock  lua_owner  *mutex_violation (lock_lost)  *mutex_violation (lock_lost)  *yes" "$WORK/run.out"
expect_grep "appendfsync always keeps the lock" "server-restart-aof-always  *lua_owner  *ok  *ok  *yes" "$WORK/run.out"
expect_grep "a paused server expires the lease" "server-pause-expires-lease  *lua_owner  *mutex_violation (lease_expired)  *mutex_violation (lease_expired)  *yes" "$WORK/run.out"
expect_grep "a clock jump loses the lock" "server-clock-jump  *lua_owner  *mutex_violation (lock_lost)  *mutex_violation (lock_lost)  *yes" "$WORK/run.out"
expect_grep "the summary says which server restarted" "n1 was restarted at .* and came back without the key" \
  "$WORK/out/server-restart-forgets-lock/latest/summary.md"
expect_grep "the summary says whose clock jumped" "n1's clock jumped ahead" "$WORK/out/server-clock-jump/latest/summary.md"
expect_grep "results.json has the server's down window" '"server": "n1"' \
  "$WORK/out/server-restart-forgets-lock/latest/lua_owner/results.json"
expect_grep "history.jsonl records the kill" '"fault":"kill_server".*"server":"n1"' \
  "$WORK/out/server-restart-forgets-lock/latest/lua_owner/history.jsonl"

# A client that asks while the server is down (its connection refused) tries again within its
# acquire timeout and is granted the lock the restarted server forgot, with threads and with
# client processes alike; the simulator agrees (simulator_test.sh runs the same file there).
for clients in threads processes; do
  "$LOCKSIM" run tests/cli/restart_refused_acquire.json --clients "$clients" --out "$WORK/refused" \
    >"$WORK/refused-$clients.out" 2>&1
  expect_code "a refused acquire tries again ($clients)" 0 $? "$WORK/refused-$clients.out"
  expect_grep "and is granted the forgotten lock ($clients)" \
    "restart-refused-acquire  lua_owner  *mutex_violation (lock_lost)  *mutex_violation (lock_lost)  *yes" \
    "$WORK/refused-$clients.out"
done

# Replication: a cut link, then the replica promoted by REPLICAOF NO ONE.
"$LOCKSIM" run scenarios/failover-loses-lock.json --variant lua_owner --out "$WORK/out" >"$WORK/failover.out" 2>&1
expect_code "failover-loses-lock runs as expected" 0 $? "$WORK/failover.out"
expect_grep "the promoted replica never had the key" "replica was promoted to primary at .* without having received the key" \
  "$WORK/out/failover-loses-lock/latest/summary.md"

# Links per server: A's release is held on its links to n1 and n2 only; n3, n4 and n5 are a
# majority for B long before A's TTL.
"$LOCKSIM" run scenarios/redlock-release-misses-minority.json --out "$WORK/out" >"$WORK/links.out" 2>&1
expect_code "redlock-release-misses-minority runs as expected" 0 $? "$WORK/links.out"
expect_grep "B is granted by the majority A's release reached" '"client":"B","type":"ok","f":"acquire".*"granted_on":\["n3","n4","n5"\],"granted_of":5' \
  "$WORK/out/redlock-release-misses-minority/latest/redlock/history.jsonl"
expect_grep "the delay names the links it held" '"fault":"delay","target":"A","phase":"start","server":"n1,n2"' \
  "$WORK/out/redlock-release-misses-minority/latest/redlock/history.jsonl"

# Redlock: only the restart of a server that held A's key is named (n4 and n5 were down, so
# their restarts forgot nothing).
"$LOCKSIM" run scenarios/redlock-restart-without-persistence.json --out "$WORK/out" >"$WORK/redlock.out" 2>&1
expect_code "redlock-restart-without-persistence runs as expected" 0 $? "$WORK/redlock.out"
expect_grep "the summary names n3's restart" "n3 was restarted at .* and came back without the key" \
  "$WORK/out/redlock-restart-without-persistence/latest/summary.md"
expect_no_grep "not the restarts of servers that never held the key" "n[45] was restarted" \
  "$WORK/out/redlock-restart-without-persistence/latest/summary.md"

# --redis: a topology is refused before anything runs.
"$LOCKSIM" run scenarios/server-clock-jump.json --redis redis://127.0.0.1:1 --out "$WORK/refused" >"$WORK/redis.out" 2>&1
expect_code "--redis refuses a scenario that harms its servers" 2 $? "$WORK/redis.out"
expect_grep "the refusal names the file and field" "server-clock-jump.json: \$.topology" "$WORK/redis.out"
expect_grep "the refusal says why" "never restarts, pauses, fails over or shifts the clock" "$WORK/redis.out"

# Bad input.
cat >"$WORK/no-topology.json" <<'JSON'
{"name": "x", "source": {"doc": "none", "claim": "c"}, "variants": ["lua_owner"], "clients": ["A"],
 "steps": [{"client": "A", "do": "acquire"}, {"do": "kill_server", "server": "n1"}],
 "expect": {"lua_owner": "any"}}
JSON
# bad_case NAME SED PATTERN: no-topology.json edited by SED is refused (exit 2), saying PATTERN.
bad_count=0
bad_case() {
  bad_count=$((bad_count + 1))
  sed "$2" "$WORK/no-topology.json" >"$WORK/bad$bad_count.json"
  "$LOCKSIM" run "$WORK/bad$bad_count.json" --out "$WORK/bad" >"$WORK/bad$bad_count.out" 2>&1
  expect_code "$1 is bad input" 2 $? "$WORK/bad$bad_count.out"
  expect_grep "$1: the message says why" "$3" "$WORK/bad$bad_count.out"
}
bad_case "a server fault without a topology" '' \
  'steps\[1\].do: "kill_server" needs a top-level "topology"'
bad_case "an unknown server" 's/"variants"/"topology": "redlock_3", "variants"/; s/"server": "n1"/"server": "n9"/' \
  'steps\[1\].server: unknown server "n9"'
bad_case "promoting a primary" \
  's/"variants"/"topology": "single", "variants"/; s/"do": "kill_server", "server": "n1"/"do": "promote", "server": "n1"/' \
  'needs a replica; "n1" is a primary'
bad_case "a link to an unknown server" \
  's/"variants"/"topology": "redlock_3", "variants"/; s/{"do": "kill_server", "server": "n1"}/{"client": "A", "do": "partition", "partition_ms": 10, "servers": ["n1", "n4"]}/' \
  'steps\[1\].servers\[1\]: unknown server "n4"'
bad_case "links by server without a topology" \
  's/{"do": "kill_server", "server": "n1"}/{"client": "A", "do": "partition", "partition_ms": 10, "servers": ["n1"]}/' \
  'steps\[1\].servers: needs a top-level "topology"'
if [[ -d $WORK/bad ]] && find "$WORK/bad" -name results.json | grep -q .; then
  fail "bad input wrote reports"
else
  pass "bad input wrote nothing"
fi

after=$(orphans_after "$before")
if [[ $after -le $before ]]; then pass "no redis-server left behind"; else fail "$((after - before)) redis-server(s) left"; fi
finish
