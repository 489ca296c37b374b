#!/usr/bin/env bash
# harm_test.sh LOCKSIM SOURCE_DIR: what happens to a run that something outside harms, done by
# this test itself on observable conditions (a key on a server, a process gone), never on sleeps.
# Proves:
#  - kill -9 of the private redis-server inside a scripted run: exit 3, the loss is a
#    `server_lost` event, the run's verdict is error (never a saved ok), and `check` re-judges it
#    so (three tries; the holder stays inside until the server is gone, so the kill always lands
#    inside the run, tests/cli/server_lost_hold.json);
#  - a Redlock node killed by the test: exit 3, a `server_died` event, verdict unknown, the
#    summary names the node and the pid, and says who was granted the lock afterwards by which
#    servers; also when the nemesis had restarted that node before; and a node of a Redlock
#    topology killed during a run that shows a deadlock is unknown too, its deadlock still
#    reported (it was the verdict, beside a finding saying the run decides nothing);
#  - a run whose scenarios all bring their topology starts no private server beside it (it ran
#    unused, and could be killed unnoticed);
#  - the Sentinel or the replica killed during the failover wait: named at once, the run stops
#    within seconds (not after the 30 s wait) and keeps its history and reports;
#  - SIGTERM (twice, as GNU timeout sends it) during the failover wait, and SIGTERM during a
#    library adapter's start: exit 130 with the partial reports, not a harness failure;
#  - kill -9 of locksim leaves a server directory behind; the next locksim removes it, and only
#    directories whose owner is gone.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-harm-test.XXXXXX)
RUN_PID=""
cleanup() {
  [[ -n $RUN_PID ]] && kill -9 "$RUN_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
source "$(dirname "$0")/lib.sh"
cd "$SOURCE" || exit 1

redis_children() { ps -o pid=,comm= --ppid "$1" 2>/dev/null | awk '$2 ~ /redis/ {print $1}' | sort -n; }
# port_of PID: a redis-server's port, from its title ("redis-server 127.0.0.1:PORT") or, before it
# rewrote it just after the start, from its arguments ("--port PORT": read then, the title alone
# gave no port and the test never killed the server).
port_of() {
  tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null |
    sed -n -e 's/.*127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' -e 't' -e 's/.*--port \([0-9][0-9]*\).*/\1/p'
}
has_lock_key() { [[ -n $(redis-cli -p "$1" --scan --pattern 'locksim:*' 2>/dev/null) ]]; }
# wait_until SECONDS COMMAND...: true once COMMAND succeeds (polled every 20 ms), false after SECONDS.
wait_until() {
  local limit=$1 end
  shift
  end=$((SECONDS + limit))
  while ((SECONDS < end)); do
    "$@" && return 0
    sleep 0.02
  done
  "$@"
}
count_at_least() { [[ $(redis_children "$1" | wc -l) -ge $2 ]]; }
count_below() { [[ $(redis_children "$1" | wc -l) -lt $2 ]]; }
# node_with_key PID: the first redis child of PID (a topology's server) holding a lock key.
node_with_key() {
  local child
  for child in $(redis_children "$1"); do
    has_lock_key "$(port_of "$child")" && { echo "$child"; return 0; }
  done
  return 1
}
any_node_with_key() { node_with_key "$1" >/dev/null; }
python_child() { pgrep -P "$1" python3 >/dev/null; }

# --- 1. the private server killed inside a scripted run ----------------------------------------
for try in 1 2 3; do
  out=$WORK/lost$try
  # A holds the lock until the server is gone (at most 20 s): the kill always lands inside the run.
  "$LOCKSIM" run tests/cli/server_lost_hold.json --out "$out" --no-progress >"$out.log" 2>&1 &
  RUN_PID=$!
  wait_until 20 count_at_least "$RUN_PID" 1
  server=$(redis_children "$RUN_PID" | head -1)
  port=$(port_of "$server")
  if wait_until 20 has_lock_key "$port"; then kill -9 "$server"; fi
  wait "$RUN_PID"
  code=$?
  RUN_PID=""
  expect_code "try $try: a lost private server is an environment failure" 3 "$code"
  expect_grep "try $try: the run says so" "SERVER LOST" "$out.log"
  run=$out/server-lost-hold/latest
  expect_grep "try $try: the history records the loss" '"f":"server_lost"' "$run/lua_owner/history.jsonl"
  expect_grep "try $try: the saved verdict is error, not ok" '"verdict": "error"' "$run/lua_owner/results.json"
  expect_grep "try $try: the saved run does not match its expectation" '"matches": false' "$run/lua_owner/results.json"
  expect_no_grep "try $try: summary.md does not say as expected" '| lua_owner | ok | ok | yes |' "$run/summary.md"
  "$LOCKSIM" check "$run" >"$out.check" 2>&1
  expect_code "try $try: check re-judges the saved run as not ok" 1 $?
  expect_grep "try $try: check names the loss" "Server lost" "$out.check"
done

# --- 2. a Redlock node killed from outside -------------------------------------------------------
out=$WORK/died
"$LOCKSIM" run tests/cli/redlock_long_hold.json --out "$out" --no-progress >"$out.log" 2>&1 &
RUN_PID=$!
wait_until 30 count_at_least "$RUN_PID" 5  # n1..n5, and no private server beside them
servers_seen=$(redis_children "$RUN_PID" | wc -l)
wait_until 20 any_node_with_key "$RUN_PID"
victim=$(node_with_key "$RUN_PID" 2>/dev/null)
[[ -n $victim ]] && kill -9 "$victim"
wait "$RUN_PID"
code=$?
RUN_PID=""
expect_code "an unplanned death of a node is an environment failure" 3 "$code"
expect_grep "the run says so" "SERVER DIED" "$out.log"
run=$out/redlock-long-hold/latest
expect_grep "the history records the death" '"f":"server_died","server":"n[1-5]"' "$run/redlock/history.jsonl"
expect_grep "the summary names the node and the process" "n[1-5] was found dead at .* without the scenario having killed it (redis-server on 127.0.0.1:[0-9]*, pid $victim, was killed by signal 9 (SIGKILL))" "$run/summary.md"
expect_grep "and says how the lock fared: B granted by the four left" "Afterwards B was granted the lock at .* (granted by n[1-5], n[1-5], n[1-5], n[1-5] of 5)" "$run/summary.md"
expect_grep "the verdict is unknown, not ok" '"verdict": "unknown"' "$run/redlock/results.json"
"$LOCKSIM" check "$run" >"$out.check" 2>&1
expect_code "check re-judges it as not ok" 1 $?
expect_grep "check names the death" "Server died" "$out.check"
if [[ $servers_seen == 5 ]]; then
  pass "a run of topology scenarios only starts no private server beside the topology's five"
else
  fail "$servers_seen redis-servers under locksim for redlock_5 (a private one beside them?)"
fi
expect_grep "the run says which servers it uses" "the servers of each scenario's topology; no other" "$out.log"

# A node killed during a run that shows a deadlock (naive without a TTL on n1 of redlock_3: A
# crashes holding it, B gives up waiting, C waits on): the run is unknown, not deadlock, and the
# deadlock is still reported. The test waits for A's key and then 1.5 s, so that B has given up
# before the kill: the verdict was deadlock then; unknown is asserted whenever the kill lands.
out=$WORK/deadlock
"$LOCKSIM" run tests/cli/topology_node_deadlock.json --out "$out" --no-progress >"$out.log" 2>&1 &
RUN_PID=$!
wait_until 30 count_at_least "$RUN_PID" 3
wait_until 20 any_node_with_key "$RUN_PID"
sleep 1.5
victim=$(redis_children "$RUN_PID" | sed -n 2p)  # n2: the lock is on n1
[[ -n $victim ]] && kill -9 "$victim"
wait "$RUN_PID"
code=$?
RUN_PID=""
expect_code "a node killed during a deadlocked run is an environment failure" 3 "$code"
expect_grep "the run says so" "SERVER DIED" "$out.log"
run=$out/topology-node-deadlock/latest
expect_grep "the death is recorded" '"f":"server_died","server":"n2"' "$run/naive/history.jsonl"
expect_grep "the verdict is unknown, not deadlock" '"verdict": "unknown"' "$run/naive/results.json"
expect_grep "the deadlock is still reported" '"kind": "deadlock"' "$run/naive/results.json"
"$LOCKSIM" check "$run" >"$out.check" 2>&1
expect_code "check re-judges it as unknown too" 1 $?
expect_grep "check says unknown" "unknown" "$out.check"

# The same after the nemesis restarted the node: its new process is watched.
out=$WORK/restarted
"$LOCKSIM" run tests/cli/redlock_restarted_hold.json --out "$out" --no-progress >"$out.log" 2>&1 &
RUN_PID=$!
wait_until 30 count_at_least "$RUN_PID" 5
wait_until 20 any_node_with_key "$RUN_PID"  # A acquires once n2 is back
# The restarted n2 is the server started last: the newest process (pids grow).
restarted=$(redis_children "$RUN_PID" | tail -1)
[[ -n $restarted ]] && kill -9 "$restarted"
wait "$RUN_PID"
code=$?
RUN_PID=""
expect_code "the death of a restarted node is an environment failure" 3 "$code"
expect_grep "the summary names the restarted node" "n2 was found dead at .* pid $restarted, was killed by signal 9" \
  "$out/redlock-restarted-hold/latest/summary.md"

# --- 3. Sentinel or the replica killed during the failover wait ----------------------------------
# tests/cli/failover_wait.json waits 30 s for a failover nothing causes, so the kill lands in the
# wait however slowly this script runs (a real failover takes about 3 s: a loaded machine could
# miss it).
for victim_kind in sentinel replica; do
  out=$WORK/$victim_kind
  "$LOCKSIM" run tests/cli/failover_wait.json --out "$out" --no-progress >"$out.log" 2>&1 &
  RUN_PID=$!
  wait_until 60 count_at_least "$RUN_PID" 3  # primary, replica, sentinel
  sentinel=$(ps -o pid=,comm= --ppid "$RUN_PID" | awk '$2 ~ /sentinel/ {print $1}' | head -1)
  [[ -z $sentinel ]] && sentinel=$(pgrep -P "$RUN_PID" -f sentinel | head -1)
  wait_until 30 any_node_with_key "$RUN_PID"  # A holds the lock: the run is in the failover wait
  if [[ $victim_kind == sentinel ]]; then
    victim=$sentinel
  else
    victim=$(redis_children "$RUN_PID" | grep -vx "$sentinel" | tail -1)
  fi
  [[ -n $victim ]] && kill -9 "$victim"
  killed_at=$SECONDS
  wait "$RUN_PID"
  code=$?
  RUN_PID=""
  expect_code "$victim_kind killed during the failover wait" 3 "$code"
  # Before, the run waited out the failover's 30 s; now it stops within a second or two (20 s
  # leaves room for a loaded machine, and still tells the two apart).
  if ((SECONDS - killed_at < 20)); then
    pass "$victim_kind killed: the run stopped at once, not after the 30 s failover wait"
  else
    fail "$victim_kind killed: the run went on for $((SECONDS - killed_at)) s after the kill"
  fi
  run=$out/failover-wait/latest
  expect_grep "$victim_kind killed: the history is kept and names it" "\"f\":\"server_died\",\"server\":\"$victim_kind\"" \
    "$run/lua_owner/history.jsonl"
  expect_grep "$victim_kind killed: the summary names it" "$victim_kind was found dead at" "$run/summary.md"
done

# --- 4. interruptions win over the failures they cause -------------------------------------------
out=$WORK/term-failover
"$LOCKSIM" run tests/cli/failover_wait.json --out "$out" --no-progress >"$out.log" 2>&1 &
RUN_PID=$!
wait_until 60 count_at_least "$RUN_PID" 3
wait_until 30 any_node_with_key "$RUN_PID"
kill -TERM "$RUN_PID"  # twice at once, as GNU timeout does: one request
signal_run TERM "$RUN_PID" "$out"
RUN_PID=""
expect_grep "SIGTERM in the failover wait: the history is kept" '"reason":"interrupted"' \
  "$out/failover-wait/latest/lua_owner/history.jsonl"
expect_no_grep "SIGTERM in the failover wait: no harness failure" "server fault failed" "$out.log"

out=$WORK/term-adapter
"$LOCKSIM" run scenarios/stale-release.json --variant lib:redis-py --out "$out" \
  --no-progress >"$out.log" 2>&1 &
RUN_PID=$!
wait_until 30 python_child "$RUN_PID"  # the first adapter is starting
signal_run TERM "$RUN_PID" "$out"
RUN_PID=""
expect_grep "SIGTERM in an adapter's start: the run is interrupted" "INTERRUPTED" "$out.log"
expect_no_grep "SIGTERM in an adapter's start: no harness failure" "locksim: client" "$out.log"

# --- 5. server directories left by kill -9 of locksim -------------------------------------------
tmp=$WORK/tmp
mkdir -p "$tmp"
out=$WORK/killed
TMPDIR=$tmp "$LOCKSIM" run scenarios/ttl-expiry-while-working.json --variant lua_owner \
  --out "$out" --no-progress >"$out.log" 2>&1 &
RUN_PID=$!
wait_until 20 count_at_least "$RUN_PID" 1
server=$(redis_children "$RUN_PID" | head -1)
kill -9 "$RUN_PID"
wait "$RUN_PID" 2>/dev/null
RUN_PID=""
# Its server dies with it (PR_SET_PDEATHSIG); its directory stays.
gone() { ! kill -0 "$1" 2>/dev/null; }
wait_until 10 gone "$server"
left=$(ls -d "$tmp"/locksim-redis-* 2>/dev/null | head -1)
if [[ -n $left ]]; then pass "kill -9 of locksim leaves its server directory"; else fail "no directory was left to clean"; fi
# A directory whose owner still runs (this shell), and one without an owner file, stay.
mkdir "$tmp/locksim-redis-alive" "$tmp/locksim-redis-unowned"
echo "$$ $(sed 's/.*) //' "/proc/$$/stat" | awk '{print $20}')" >"$tmp/locksim-redis-alive/locksim-owner"
TMPDIR=$tmp "$LOCKSIM" run scenarios/stale-release.json --variant lua_owner --out "$out" \
  --no-progress >"$out.second" 2>&1
expect_code "the next run" 0 $?
if [[ -n $left && ! -e $left ]]; then pass "the next locksim removed the stale directory"; else fail "stale directory still there: $left"; fi
if [[ -d $tmp/locksim-redis-alive ]]; then pass "a directory whose owner runs stays"; else fail "a live owner's directory was removed"; fi
if [[ -d $tmp/locksim-redis-unowned ]]; then pass "a directory without an owner file stays"; else fail "an unowned directory was removed"; fi

finish
