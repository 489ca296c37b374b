#!/usr/bin/env bash
# read_write_test.sh LOCKSIM SOURCE_DIR: read-write locks ("kind": "read_write" in a variant file,
# asked for a hold by {mode}) are judged as such, against rw_lock_fair, in the read-write
# scenarios, on a real server and on the simulator; audit and explore find the bugs of read-write
# locks written for the test.
# Proves: a lock with reader preference (tests/cli/user_rw_reader_pref.json) starves the writer
# of rw-reader-stream-starves-writer (deadlock, a NO row) where one with writer preference
# (user_rw_fair.json) and rw_lock_fair pass; a writer that checks only for another writer
# (user_rw_write_over_read.json) gets in beside readers (mutex_violation); readers share the lock
# and every read-write lock deadlocks on an upgrade; the same rows on the simulator; audit answers
# NO on writer_not_starved for the first and YES for the fair one; explore finds the writer over
# readers as the lock's own, shrunk and confirmed on a real redis-server; a read-write lock
# without {mode} is refused.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-read-write-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"

files=(--variant-file "$SOURCE/tests/cli/user_rw_fair.json"
       --variant-file "$SOURCE/tests/cli/user_rw_reader_pref.json"
       --variant-file "$SOURCE/tests/cli/user_rw_write_over_read.json")
for backend in real sim; do
  args=()
  [[ $backend == sim ]] && args=(--backend sim --seed 7)
  "$LOCKSIM" run "$SOURCE"/scenarios/rw-*.json "${args[@]}" "${files[@]}" \
    --out "$WORK/$backend" --no-progress >"$WORK/$backend.out" 2>&1
  expect_code "$backend: the broken user locks fail" 1 $? "$WORK/$backend.out"
  expect_grep "$backend: reader preference starves the writer" \
    "rw-reader-stream-starves-writer \+user_rw_reader_pref \+ok, no finding of its own \+deadlock \+NO" \
    "$WORK/$backend.out"
  expect_grep "$backend: a writer that ignores readers gets in beside them" \
    "rw-readers-share \+user_rw_write_over_read \+ok, no finding of its own \+mutex_violation (racy_acquire) \+NO" \
    "$WORK/$backend.out"
  for scenario in rw-readers-share rw-reader-stream-starves-writer; do
    expect_grep "$backend: the fair user lock passes $scenario" \
      "$scenario \+user_rw_fair \+ok, no finding of its own \+ok \+yes" "$WORK/$backend.out"
    expect_grep "$backend: rw_lock_fair passes $scenario" "$scenario \+rw_lock_fair \+ok \+ok \+yes" \
      "$WORK/$backend.out"
  done
  expect_grep "$backend: rw_lock starves the writer" \
    "rw-reader-stream-starves-writer \+rw_lock \+deadlock \+deadlock \+yes" "$WORK/$backend.out"
  expect_grep "$backend: an upgrade deadlocks the fair lock too" \
    "rw-upgrade-deadlock \+user_rw_fair \+deadlock, no finding of its own \+deadlock \+yes" \
    "$WORK/$backend.out"
done
grep -q '"mode":"read"' "$WORK"/real/rw-readers-share/latest/rw_lock/history.jsonl &&
  pass "the history records a read acquire's mode" || fail "no \"mode\":\"read\" in the history"

timeout "$(slow 240)" "$LOCKSIM" audit "$SOURCE/tests/cli/user_rw_reader_pref.json" \
  "$SOURCE/tests/cli/user_rw_fair.json" --scenarios "$SOURCE/scenarios" --explore 200 \
  --out "$WORK/audit" --no-progress >"$WORK/audit.out" 2>&1
expect_code "audit says a property fails" 1 $? "$WORK/audit.out"
expect_grep "audit: reader preference starves a writer" \
  "a waiting writer is not starved by readers  NO  *rw-reader-stream-starves-writer: deadlock" \
  "$WORK/audit.out"
expect_grep "audit: the fair lock does not" \
  "a waiting writer is not starved by readers  YES  *rw-reader-stream-starves-writer: ok" \
  "$WORK/audit.out"

# A writer that ignores readers, and reader preference in drawn schedules: a reader stream (two
# readers taking turns while a writer asks) starves the writer past the bound explore sets (a
# TTL); the fair lock shows neither.
explore_finds_own user_rw_write_over_read "mutex_violation (racy_acquire)" rw_lock_fair \
  "read hold" "$WORK/explored"
explore_finds_own user_rw_reader_pref "deadlock (writer_starved)" rw_lock_fair "reader stream" \
  "$WORK/explored-pref"

sed 's/{mode}/{token}/' "$SOURCE/tests/cli/user_rw_fair.json" >"$WORK/no_mode.json"
"$LOCKSIM" run "$SOURCE/scenarios/rw-readers-share.json" --variant-file "$WORK/no_mode.json" \
  --out "$WORK/bad" --no-progress >"$WORK/bad.out" 2>&1
expect_code "a read-write lock without {mode} is refused" 2 $? "$WORK/bad.out"
expect_grep "the refusal names the field" 'acquire.*{mode}' "$WORK/bad.out"
finish
