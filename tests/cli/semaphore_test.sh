#!/usr/bin/env bash
# semaphore_test.sh LOCKSIM SOURCE_DIR: a user's semaphore ("kind": "semaphore" in its variant
# file) is judged as a semaphore, against zset_semaphore_server, in the semaphore scenarios, on a
# real server and on the simulator.
# Proves: a semaphore that times its permits with its clients' clocks (tests/cli/
# user_semaphore_clocks.json: clean-up by the client's {now_ms}, ZCARD against {permits}) gets
# mutex_violation (client_clock) where C's clock runs ahead and where it drifts ahead from in sync
# (run exits 1, those rows NO: its {now_ms} drifts too), and passes the clock-behind and crash
# scenarios (in clock-behind every permit is held when C asks, and its ZCARD counts them: C is
# refused whatever its clock; with a free permit it is not, see
# semaphore_clock_behind_free_permit.json and library_test.sh); one timed by the server
# (user_semaphore_server.json) passes all four; the same rows on the simulator;
# explore (client clocks drawn) finds the first lock's overflow as its own, shrunk and confirmed
# on a real redis-server; a server-timed semaphore with one holder too many
# (user_semaphore_off_by_one.json) is never blamed on a client's clock, which it does not read
# (its overflow is a racy acquire, drawn offsets or not); the same off-by-one in a semaphore timed
# by its clients' clocks (user_semaphore_off_by_one_clock.json), whose overflow a drawn clock
# offset is blamed for, is said not to be the clocks' alone; one that reads only TIME's seconds
# (user_semaphore_whole_seconds.json) is found by 300 drawn schedules.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-semaphore-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"

for backend in real sim; do
  args=()
  [[ $backend == sim ]] && args=(--backend sim --seed 7)
  "$LOCKSIM" run "$SOURCE"/scenarios/semaphore-*.json "${args[@]}" \
    --variant-file "$SOURCE/tests/cli/user_semaphore_clocks.json" \
    --variant-file "$SOURCE/tests/cli/user_semaphore_server.json" \
    --out "$WORK/$backend" --no-progress >"$WORK/$backend.out" 2>&1
  expect_code "$backend: a user semaphore that trusts client clocks fails two scenarios" 1 $? \
    "$WORK/$backend.out"
  expect_grep "$backend: the clock ahead lets a third holder into two permits" \
    "semaphore-client-clock-ahead \+user_clock_semaphore \+ok, no finding of its own \+mutex_violation (client_clock) \+NO" \
    "$WORK/$backend.out"
  expect_grep "$backend: a clock that drifts ahead lets a third holder in" \
    "semaphore-client-clock-drift \+user_clock_semaphore \+ok, no finding of its own \+mutex_violation (client_clock) \+NO" \
    "$WORK/$backend.out"
  expect_grep "$backend: a clock behind is refused by its count" \
    "semaphore-client-clock-behind \+user_clock_semaphore \+ok, no finding of its own \+ok \+yes" \
    "$WORK/$backend.out"
  expect_grep "$backend: a crashed holder's permit lapses" \
    "semaphore-crash-holding-permit \+user_clock_semaphore \+ok, no finding of its own \+ok \+yes" \
    "$WORK/$backend.out"
  for scenario in semaphore-client-clock-ahead semaphore-client-clock-behind \
                  semaphore-client-clock-drift semaphore-crash-holding-permit; do
    expect_grep "$backend: the semaphore timed by the server survives $scenario" \
      "$scenario \+user_server_semaphore \+ok, no finding of its own \+ok \+yes" "$WORK/$backend.out"
  done
  expect_grep "$backend: only those rows differ" "2 of 20 scenario x variant outcomes differ" \
    "$WORK/$backend.out"
done

# explore draws a semaphore's permits and its clients' own clocks: the clock-timed user lock's
# third holder is found as its own (zset_semaphore_server does not show it), shrunk, and
# confirmed on a real redis-server.
timeout "$(slow 120)" "$LOCKSIM" explore --variant-file "$SOURCE/tests/cli/user_semaphore_clocks.json" \
  --variant user_clock_semaphore --faults client_clock --time 10s -j 2 --first-own --confirm 2 \
  --out "$WORK/explored" --no-progress >"$WORK/explore.out" 2>&1
expect_code "explore finds the clock-timed semaphore's bug" 1 $? "$WORK/explore.out"
expect_grep "the client's clock is drawn" "client_clock \(ahead\|behind\)" "$WORK/explore.out"
if in_shrink "$WORK/explore.out" "mutex_violation (client_clock)" "Its own: zset_semaphore_server does not show it"; then
  pass "the client_clock overflow is the lock's own"
else
  fail "the client_clock overflow is not judged its own:"; sed 's/^/    /' "$WORK/explore.out"
fi
if confirmed "$WORK/explore.out" "mutex_violation (client_clock)"; then
  pass "the client_clock overflow is confirmed on a real server"
else
  fail "the client_clock overflow is not confirmed:"; sed 's/^/    /' "$WORK/explore.out"
fi
expect_grep "its minimal scenario gives the client's clock" '"client_clocks"' \
  "$WORK/explored/explore-user-clock-semaphore-mutex-violation-client-clock.json"

# A semaphore timed by the server that lets one holder too many in (ZCARD > permits,
# tests/cli/user_semaphore_off_by_one.json): it reads no client's clock, so a drawn clock offset
# is no cause of its overflow (a blind test's server-timed semaphore was blamed on one, and its
# one bug counted twice).
timeout "$(slow 120)" "$LOCKSIM" explore --variant-file "$SOURCE/tests/cli/user_semaphore_off_by_one.json" \
  --variant user_off_by_one_semaphore --schedules 40 -j 2 --out "$WORK/off_by_one" --no-progress \
  >"$WORK/off_by_one.out" 2>&1
expect_code "explore finds the off-by-one semaphore's bug" 1 $? "$WORK/off_by_one.out"
expect_grep "its overflow is its own racy acquire" "^  mutex_violation (racy_acquire): " \
  "$WORK/off_by_one.out"
expect_grep "client clocks were drawn for it" "client_clock" "$WORK/off_by_one.out"
if grep -q "(client_clock)" "$WORK/off_by_one.out"; then
  fail "a semaphore that reads no client's clock was blamed on one:"
  sed 's/^/    /' "$WORK/off_by_one.out"
else
  pass "a server-timed semaphore's overflow is not blamed on a clock"
fi
# The same off-by-one timed by its clients' clocks: where a drawn clock offset is left in a
# minimal scenario blamed on it, explore says the clocks are not the cause (without them it still
# overflows: racy_acquire).
timeout "$(slow 120)" "$LOCKSIM" explore \
  --variant-file "$SOURCE/tests/cli/user_semaphore_off_by_one_clock.json" \
  --variant user_off_by_one_clock_semaphore --schedules 40 -j 2 --out "$WORK/off_by_one_clock" \
  --no-progress >"$WORK/off_by_one_clock.out" 2>&1
expect_code "explore finds the clock-timed off-by-one semaphore's bug" 1 $? \
  "$WORK/off_by_one_clock.out"
if in_shrink "$WORK/off_by_one_clock.out" "mutex_violation (client_clock)" \
  "Not only the clocks: .* still show mutex_violation .racy_acquire."; then
  pass "a clock-timed semaphore's overflow is not blamed on a clock alone"
else
  fail "the off-by-one overflow blamed on a clock does not say the clocks are not its cause:"
  sed 's/^/    /' "$WORK/off_by_one_clock.out"
fi
# A semaphore that reads only TIME's seconds (tests/cli/user_semaphore_whole_seconds.json): its
# permits expire early once a second's boundary passes inside a hold. The simulated servers' clock
# stands anywhere in its second at a schedule's start, drawn from the seed (wall_clock_phase_ms),
# so 300 drawn schedules cross boundaries enough to find it; when every schedule began on a whole
# second, a blind test's such lock showed it in 3 of 72,915 schedules, first at seed 37675.
timeout "$(slow 120)" "$LOCKSIM" explore \
  --variant-file "$SOURCE/tests/cli/user_semaphore_whole_seconds.json" \
  --variant user_whole_seconds_semaphore --schedules 300 -j 2 --no-shrink --out "$WORK/seconds" \
  --no-progress >"$WORK/seconds.out" 2>&1
expect_code "explore finds the whole-seconds semaphore's bug" 1 $? "$WORK/seconds.out"
expect_grep "its early expiry lets one holder too many in, its own" \
  "^  mutex_violation (racy_acquire): " "$WORK/seconds.out"
finish
