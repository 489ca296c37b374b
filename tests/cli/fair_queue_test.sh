#!/usr/bin/env bash
# fair_queue_test.sh LOCKSIM SOURCE_DIR: a waiter that dies in a fair queue, end to end on a private
# redis-server. Proves: lua_fair_queue gets ok in fair-queue-dead-waiter (the dead waiter is
# dropped after the queue timeout; exit 0); the same queue without that purge
# (fair_queue_no_purge.json, judged as lua_fair_queue because its acquire passes {waiter}) gets
# the liveness verdict deadlock, never recovered: the next waiter waits out its whole acquire
# timeout while nobody holds the lock (exit 1); and `locksim audit` answers NO for it on exactly
# "survives a waiter dying in the queue" (exit 1), while a lock without a queue gets n/a there.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-fair-queue-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

source "$(dirname "$0")/lib.sh"
SCENARIO="$SOURCE/scenarios/fair-queue-dead-waiter.json"
NO_PURGE="$SOURCE/tests/cli/fair_queue_no_purge.json"
# result FILE: "verdict cause-of-first-finding" of a variant's results.json.
result() {
  /usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["observed"]["verdict"], d["findings"][0]["cause"] if d["findings"] else "-")' "$1"
}

"$LOCKSIM" run "$SCENARIO" --out "$WORK/fair" --seed 1 --no-progress >"$WORK/fair.log" 2>&1
expect_code "lua_fair_queue drops the dead waiter" 0 $?
expect_grep "lua_fair_queue is ok" "fair-queue-dead-waiter *lua_fair_queue *ok *ok *yes" \
  "$WORK/fair.log"
expect_grep "the waiter died in the queue" "crashed at queued inside the acquire" \
  "$WORK/fair/fair-queue-dead-waiter/latest/summary.md"

"$LOCKSIM" run "$SCENARIO" --variant-file "$NO_PURGE" --variant fair_queue_no_purge \
  --out "$WORK/no-purge" --seed 1 --no-progress >"$WORK/no-purge.log" 2>&1
expect_code "a queue that keeps dead waiters fails its expectation" 1 $?
result "$WORK/no-purge/fair-queue-dead-waiter/latest/fair_queue_no_purge/results.json" \
  >"$WORK/no-purge.result"
expect_grep "its verdict is a deadlock that never recovered" "^deadlock never_recovered$" \
  "$WORK/no-purge.result"
expect_grep "the row names the liveness finding" \
  "C's acquire of lock failed after .* no live client held it" "$WORK/no-purge.log"
expect_grep "it is judged against lua_fair_queue" \
  "fair_queue_no_purge *ok, no finding of its own *deadlock *NO" "$WORK/no-purge.log"

"$LOCKSIM" audit "$NO_PURGE" --scenarios "$SOURCE/scenarios" --out "$WORK/audit" --seed 1 \
  --no-progress >"$WORK/audit.log" 2>&1
expect_code "the audit of the queue without purge fails" 1 $?
expect_grep "audit: reference lua_fair_queue" "reference lua_fair_queue)" "$WORK/audit.log"
expect_grep "audit: NO on the dead waiter" \
  "^  survives a waiter dying in the queue  *NO .*deadlock; worse than lua_fair_queue, which is ok" \
  "$WORK/audit.log"
expect_grep "audit: the crashed holder is survived" "^  survives a crash of the holder  *YES" \
  "$WORK/audit.log"
expect_grep "audit: still exclusive" "^  exclusive without faults  *YES" "$WORK/audit.log"

# A lock without a queue is not asked about dead waiters.
cat >"$WORK/plain.json" <<'JSON'
{"name": "plain",
 "acquire": {"script": "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0"},
 "release": {"script": "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"}}
JSON
"$LOCKSIM" audit "$WORK/plain.json" --scenarios "$SOURCE/scenarios" --out "$WORK/audit" --seed 1 \
  --no-progress >"$WORK/plain.log" 2>&1
expect_code "a correct lock without a queue passes the audit" 0 $?
expect_grep "audit: n/a without a queue" \
  "^  survives a waiter dying in the queue  *n/a *the lock keeps no queue" "$WORK/plain.log"

finish
