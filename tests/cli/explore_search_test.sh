#!/usr/bin/env bash
# explore_search_test.sh LOCKSIM SOURCE_DIR: what explore's drawn schedules find that one fault
# drawn from the whole menu did not (issue 42), end to end, as a user drives it.
# Proves: three buggy queue locks of our own (tests/cli/fair_queue_*.json: one that lets anyone
# take the free key, one that looks at the second waiter instead of the head, one that never drops
# a dead waiter) are each found from drawn schedules within 10 s, as their own finding (the queue
# reference lua_fair_queue does not show it), shrunk, and confirmed on a real redis-server; the
# correct lua_fair_queue shows no finding of its own under the queue schedules; Redlock's
# majority losses (restarts without persistence on a majority, a clock jump ahead on a majority,
# a pause past validity) are found from drawn schedules with no scenario file within 10 s each,
# with the faults aimed at a majority in what explore prints as exercised and in the minimal
# scenario, and confirmed on five real servers.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-explore-search-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"

# in_section OUTPUT HEADER SIGNATURE: SIGNATURE is listed in the section of OUTPUT that starts with
# a line beginning HEADER ("Findings of", "Limits every lock").
in_section() {
  awk -v head="$2" -v sig="  $3: " 'index($0, head) == 1 {on = 1; next}
    /^[A-Z]/ || /^$/ {on = 0} on && index($0, sig) == 1 {found = 1} END {exit !found}' "$1"
}
# first_seed OUTPUT SIGNATURE: the first seed explore names for SIGNATURE.
first_seed() { grep -m1 "^  $2: " "$1" | sed -n 's/.*first seed \([0-9]*\).*/\1/p'; }
# distinct_servers FILE ACTION: how many distinct servers the steps of scenario FILE do ACTION to.
distinct_servers() {
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(len({s["server"] for s in d["steps"] if s.get("do") == sys.argv[2]}))' "$1" "$2"
}

# --- three buggy queue locks: found within 10 s, their own, shrunk, confirmed -------------------
# A queue lock is judged against lua_fair_queue; each run draws only the faults its bug needs, so
# that explore shrinks and confirms little besides it.
while read -r variant faults signature; do
  out="$WORK/$variant"
  file="$SOURCE/tests/cli/$variant.json"
  "$LOCKSIM" explore --variant-file "$file" --variant "$variant" --faults "$faults" \
    --schedules 20000 --time 10s -j 2 --first-own --confirm 2 --out "$out" --no-progress >"$out.out" 2>&1
  expect_code "$variant: explore finds a finding of its own" 1 $? "$out.out"
  if in_section "$out.out" "Findings of $variant's own" "$signature"; then
    pass "$variant: $signature is its own (lua_fair_queue does not show it)"
  else
    fail "$variant: $signature is not listed as its own"; sed 's/^/    /' "$out.out" | head -30
  fi
  seed=$(first_seed "$out.out" "$signature")
  if [[ -n $seed && $seed -lt 20000 ]]; then
    pass "$variant: found in the first 20000 schedules (first seed $seed), within 10 s"
  else
    fail "$variant: $signature not found within the budget"
  fi
  expect_grep "$variant: explore drew waiters queued while the lock was held" \
    "waiter queued while held (" "$out.out"
  if confirmed "$out.out" "$signature"; then
    pass "$variant: $signature shrunk and confirmed on a real redis-server"
  else
    fail "$variant: $signature was not confirmed"; sed 's/^/    /' "$out.out" | tail -40
  fi
done <<'EOF'
fair_queue_barging crash barging
fair_queue_second_waiter crash barging
fair_queue_no_purge dead_waiter deadlock (never_recovered)
EOF

# The correct queue: every queue fault and a lost reply, none of it its own.
out="$WORK/lua_fair_queue"
"$LOCKSIM" explore --variant lua_fair_queue --faults dead_waiter,cut_waiter,lost_reply,restart \
  --schedules 4000 -j 2 --no-shrink --no-progress --out "$out" >"$out.out" 2>&1
expect_code "lua_fair_queue: no finding of its own under the queue schedules" 0 $? "$out.out"
expect_grep "lua_fair_queue: dead and cut-off waiters were drawn" \
  "cut_waiter ([0-9]*) dead_waiter ([0-9]*)" "$out.out"
if in_section "$out.out" "Limits every lock" "barging (queue_lost)"; then
  pass "lua_fair_queue: a queue forgotten by a restarted server is a limit, said apart"
else
  fail "lua_fair_queue: barging (queue_lost) is not listed as a limit"; sed 's/^/    /' "$out.out"
fi

# --- Redlock's majority losses: drawn, aimed at a majority, shrunk, confirmed on five servers -----
# A restart takes tens of milliseconds, so three of them fit in a lease of 1000 ms, not of 100.
while IFS='|' read -r faults ttl signature aimed action; do
  out="$WORK/redlock-$faults"
  "$LOCKSIM" explore --variant redlock --faults "$faults" --ttl-ms "$ttl" --schedules 20000 \
    --time 10s --confirm 2 --out "$out" --no-progress >"$out.out" 2>&1
  expect_code "redlock/$faults: only limits of the kind (redlock is its own reference)" 0 $? "$out.out"
  if in_section "$out.out" "Limits every lock" "$signature"; then
    pass "redlock/$faults: $signature found from drawn schedules, within 10 s"
  else
    fail "redlock/$faults: $signature not found"; sed 's/^/    /' "$out.out" | head -30
  fi
  if [[ $aimed != - ]]; then
    expect_grep "redlock/$faults: exercised shows the fault aimed at a majority" "$aimed (" "$out.out"
    minimal="$out/explore-redlock-$(echo "$signature" | tr -c 'a-z0-9\n' '-' | sed 's/--*/-/g; s/-$//').json"
    if [[ -f $minimal && $(distinct_servers "$minimal" "$action") -ge 3 ]]; then
      pass "redlock/$faults: the minimal scenario does $action to a majority of the five"
    else
      fail "redlock/$faults: no minimal scenario with $action on three servers ($minimal)"
      ls "$out" | sed 's/^/    /'
    fi
  fi
  if confirmed "$out.out" "$signature"; then
    pass "redlock/$faults: $signature confirmed on five real redis-servers"
  else
    fail "redlock/$faults: $signature was not confirmed"; sed 's/^/    /' "$out.out" | tail -30
  fi
done <<'EOF'
restart|1000|mutex_violation (lock_lost)|restart on a majority|restart_server
clock_jump|100|mutex_violation (lock_lost)|clock_jump on a majority|clock_jump
pause|100|mutex_violation (lease_expired)|-|-
EOF

finish
