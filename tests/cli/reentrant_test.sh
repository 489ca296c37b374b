#!/usr/bin/env bash
# reentrant_test.sh LOCKSIM SOURCE_DIR: reentrant locks ("kind": "reentrant" in a variant file)
# are judged by their depth, against hash_reentrant, in the reentrant scenarios, on a real server
# and on the simulator; audit and explore find the bugs of reentrant locks written for the test.
# Proves: a lock whose owner's every release deletes it (tests/cli/user_reentrant_release_all.json)
# lets B in after A's inner release (mutex_violation (early_release)); a plain mutex declared
# reentrant (user_reentrant_mutex.json) refuses its owner's nested acquire (deadlock); a
# correct one (user_reentrant_hash.json) passes both; the built-in reentrant_counter's release
# after a failed tryLock deletes A's lock (stale_release) where hash_reentrant refuses it; the
# same rows on the simulator; audit answers NO for the early release and YES for the correct lock;
# explore finds the early release, the owner's refused nested acquire and a last release that
# leaves the key (user_reentrant_zero_depth.json: a waiter refused while nobody held it) as the
# locks' own,
# shrunk and confirmed on a real redis-server; a release that takes one off the caller's count
# unchecked (user_reentrant_negative_field.json, a blind test's lock) lets a client that released
# in a finally holding nothing take the held lock, and the minimal scenario says the release was
# a finally's; a reentrant variant file without {waiter} is refused.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-reentrant-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"

files=(--variant-file "$SOURCE/tests/cli/user_reentrant_hash.json"
       --variant-file "$SOURCE/tests/cli/user_reentrant_release_all.json"
       --variant-file "$SOURCE/tests/cli/user_reentrant_mutex.json")
for backend in real sim; do
  args=()
  [[ $backend == sim ]] && args=(--backend sim --seed 7)
  "$LOCKSIM" run "$SOURCE"/scenarios/reentrant-*.json "${args[@]}" "${files[@]}" \
    --out "$WORK/$backend" --no-progress >"$WORK/$backend.out" 2>&1
  expect_code "$backend: the broken user locks fail" 1 $? "$WORK/$backend.out"
  expect_grep "$backend: an inner release that frees the lock lets B in" \
    "reentrant-nested-acquire \+user_reentrant_release_all \+ok, no finding of its own \+mutex_violation (early_release), early release \+NO" \
    "$WORK/$backend.out"
  expect_grep "$backend: a mutex refuses its owner's nested acquire" \
    "reentrant-nested-acquire \+user_reentrant_mutex \+ok, no finding of its own \+deadlock \+NO" \
    "$WORK/$backend.out"
  for scenario in reentrant-nested-acquire reentrant-wrong-owner-release; do
    expect_grep "$backend: the correct user lock passes $scenario" \
      "$scenario \+user_reentrant_hash \+ok, no finding of its own \+ok \+yes" "$WORK/$backend.out"
    expect_grep "$backend: hash_reentrant passes $scenario" \
      "$scenario \+hash_reentrant \+ok \+ok \+yes" "$WORK/$backend.out"
  done
  expect_grep "$backend: reentrant_counter's release after a failed tryLock is stale" \
    "reentrant-wrong-owner-release \+reentrant_counter \+mutex_violation (stale_release) \+mutex_violation (stale_release) \+yes" \
    "$WORK/$backend.out"
done

# audit: the early release fails the reentrant property, the correct lock has it.
timeout "$(slow 240)" "$LOCKSIM" audit "$SOURCE/tests/cli/user_reentrant_release_all.json" \
  "$SOURCE/tests/cli/user_reentrant_hash.json" --scenarios "$SOURCE/scenarios" --explore 200 \
  --out "$WORK/audit" --no-progress \
  >"$WORK/audit.out" 2>&1
expect_code "audit says a property fails" 1 $? "$WORK/audit.out"
expect_grep "audit: the early release fails the reentrant property" \
  "reentrant: owner in again, others kept out  NO  *reentrant-nested-acquire: mutex_violation (early_release)" \
  "$WORK/audit.out"
expect_grep "audit: the correct lock has it" \
  "reentrant: owner in again, others kept out  YES  *reentrant-nested-acquire: ok" "$WORK/audit.out"

# explore draws nested acquires and finally releases: each broken lock's bug is its own, shrunk
# and confirmed on a real server.
explore_finds_own user_reentrant_release_all "mutex_violation (early_release)" hash_reentrant \
  "nested acquire" "$WORK/explored-release_all"
explore_finds_own user_reentrant_mutex "deadlock (nested_refused)" hash_reentrant \
  "nested acquire" "$WORK/explored-mutex"
# A last release that replies "freed" but leaves the key (its field at 0): the next waiter is
# refused while nobody holds the lock (idle_hold, refused_while_free), until the TTL.
explore_finds_own user_reentrant_zero_depth "idle_hold (refused_while_free)" hash_reentrant \
  "nested acquire" "$WORK/explored-zero_depth"

# A finally release by a client holding nothing leaves its count at -1, and its next acquire takes
# the held lock: the minimal scenario's steps say the release was made in a finally (they said "A
# release", which hid the whole point of it).
timeout "$(slow 120)" "$LOCKSIM" explore \
  --variant-file "$SOURCE/tests/cli/user_reentrant_negative_field.json" \
  --variant user_reentrant_negative_field --schedules 20 -j 2 --out "$WORK/negative" \
  --no-progress >"$WORK/negative.out" 2>&1
expect_code "explore finds the negative count's bug" 1 $? "$WORK/negative.out"
if in_shrink "$WORK/negative.out" "mutex_violation (racy_acquire)" \
  "^    [A-C] release in a finally \(whether it holds the lock or not\)$"; then
  pass "the minimal scenario says the release was a finally's"
else
  fail "the racy acquire's minimal scenario does not say its release was a finally's:"
  sed 's/^/    /' "$WORK/negative.out"
fi

# A reentrant lock knows its owner by {waiter}: a file without it is refused, naming the field.
sed 's/{waiter}/{token}/' "$SOURCE/tests/cli/user_reentrant_hash.json" >"$WORK/no_waiter.json"
"$LOCKSIM" run "$SOURCE/scenarios/reentrant-nested-acquire.json" --variant-file "$WORK/no_waiter.json" \
  --out "$WORK/bad" --no-progress >"$WORK/bad.out" 2>&1
expect_code "a reentrant lock without {waiter} is refused" 2 $? "$WORK/bad.out"
expect_grep "the refusal names the field" 'acquire.*{waiter}' "$WORK/bad.out"
finish
