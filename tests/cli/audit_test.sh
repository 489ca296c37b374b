#!/usr/bin/env bash
# audit_test.sh LOCKSIM SOURCE_DIR: `locksim audit` judges a user's Lua lock property by property
# against its reference, on a private redis-server. Proves: a correct lock (with and without
# renewal) gets YES on every line and exit 0; each of seven broken locks gets NO on exactly the
# property it breaks, worded against the reference, and exit 1 (a release that deletes nothing
# is a NO, not UNDECIDED; a lock that declares a queue but lets newcomers barge is a NO); audit.md is written; a lock
# without an extend script gets n/a on the renewal lines; a run worse than the reference's (a racy
# acquire in the stale-release scenario) is a NO even with --explore 0; `run --variant-file` fails a
# renewing lock with a blind release (no finding of its own, in lua_owner's scenarios too); a lock that uses what the simulator's
# model lacks gets n/a on the exploration line, with the reason; a bad lock file exits 2 and
# writes nothing.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-audit-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

source "$(dirname "$0")/lib.sh"

# lock NAME ACQUIRE RELEASE [EXTEND]: writes $WORK/NAME.json, a lock file with these scripts.
lock() {
  local extend=""
  if [[ $# -ge 4 ]]; then
    extend=", \"extend\": {\"script\": \"$4\", \"keys\": [\"{key}\"], \"args\": [\"{token}\", \"{ttl_ms}\"]}"
  fi
  cat >"$WORK/$1.json" <<JSON
{"name": "$1",
 "acquire": {"script": "$2", "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]},
 "release": {"script": "$3", "keys": ["{key}"], "args": ["{token}"]}$extend}
JSON
}
SET_NX="if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0"
OWNER_DEL="if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
SET_NX_TAKEOVER="if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) / 2 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end return 0"
OWNER_PEXPIRE="if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"
lock good "$SET_NX" "$OWNER_DEL"
lock good_renew "$SET_NX" "$OWNER_DEL" "$OWNER_PEXPIRE"
# Broken, one property each.
lock not_exclusive "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1" "$OWNER_DEL"
lock blind_release "$SET_NX" "return redis.call('DEL', KEYS[1])"
lock long_ttl "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', tonumber(ARGV[2]) * 100) then return 1 end return 0" "$OWNER_DEL"
lock steal_renew "$SET_NX" "$OWNER_DEL" "return redis.call('PEXPIRE', KEYS[1], ARGV[2])"
lock lazy_renew "$SET_NX" "$OWNER_DEL" "return 1"
# A release whose owner compare never matches: it deletes nothing while the lease runs.
lock never_release "$SET_NX" "if redis.call('GET', KEYS[1]) == 'x' .. ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
# Declares a queue ({waiter}) but takes any free key: a newcomer barges past the waiters.
cat >"$WORK/barging_queue.json" <<JSON
{"name": "barging_queue",
 "acquire": {"script": "$SET_NX", "keys": ["{key}"], "args": ["{token}", "{ttl_ms}", "{waiter}"]},
 "release": {"script": "$OWNER_DEL", "keys": ["{key}"], "args": ["{token}"]}}
JSON

# The audits run three at a time (each waits mostly on leases and on its scenarios' steps, not on
# the CPU); each writes $WORK/NAME.log and its exit code to $WORK/NAME.code.
run_audit() {
  "$LOCKSIM" audit "$WORK/$1.json" --scenarios "$SOURCE/scenarios" --out "$WORK/out" --seed 1 --jobs 2 \
    --no-progress --junit "$WORK/$1.xml" >"$WORK/$1.log" 2>&1
  echo $? >"$WORK/$1.code"
}
LOCKS=(good good_renew not_exclusive blind_release long_ttl steal_renew lazy_renew never_release
       barging_queue)
for ((i = 0; i < ${#LOCKS[@]}; i += 3)); do
  for name in "${LOCKS[@]:i:3}"; do run_audit "$name" & done
  wait
done
# audit NAME: the audit of $WORK/NAME.json, run above; its exit code in $code.
audit() { code=$(cat "$WORK/$1.code" 2>/dev/null || echo "none"); }
line() { grep -- "^  $2 " "$WORK/$1.log" >"$WORK/$1.line" || echo "(no line '$2')" >"$WORK/$1.line"; }

audit good
expect_code "a correct lock passes the audit" 0 "$code"
expect_grep "its reference is lua_owner" "reference lua_owner)" "$WORK/good.log"
for p in "exclusive without faults" "survives a crash of the holder" "refuses a stale release" \
         "recovers after the TTL"; do
  line good "$p"; expect_grep "good: $p is YES" "YES" "$WORK/good.line"
done
line good "renewal keeps a live holder"
expect_grep "good: renewal lines are n/a without an extend script" "n/a" "$WORK/good.line"
expect_grep "audit.md is written" "| exclusive without faults | YES |" "$WORK/out/audit-good/audit.md"
# An all-YES answer still says what no YES removes: the limits of every lease, with what helps.
expect_grep "good: the limits that remain are listed" "^Limits that remain" "$WORK/good.log"
expect_grep "good: ... with what helps against an outlived lease" "only fencing" "$WORK/good.log"
expect_grep "audit.md lists them too" "^## Limits that remain" "$WORK/out/audit-good/audit.md"
expect_grep "audit explores first, on the simulator" "explored on the simulator: 1000 schedules each" "$WORK/good.log"
line good "explored: no worse than the reference"
expect_grep "good: explored, nothing worse than lua_owner" "YES" "$WORK/good.line"

audit good_renew
expect_code "a correct renewing lock passes the audit" 0 "$code"
expect_grep "its reference is lua_owner_renew" "reference lua_owner_renew)" "$WORK/good_renew.log"
expect_no_grep "good_renew: no NO" " NO " "$WORK/good_renew.log"
line good_renew "renewal keeps a live holder"
expect_grep "good_renew: renewal keeps a live holder is YES" "YES" "$WORK/good_renew.line"

audit not_exclusive
expect_code "a lock without NX fails the audit" 1 "$code"
line not_exclusive "explored: no worse than the reference"
expect_grep "not_exclusive: exploring finds the racy acquire, confirmed on a real server" \
  "NO .*mutex_violation (racy_acquire).*confirmed on a real redis-server [1-3] of 3" "$WORK/not_exclusive.line"
line not_exclusive "exclusive without faults"
expect_grep "not_exclusive: exclusive is NO, worse than lua_owner" "NO .*mutex_violation.*worse than lua_owner, which is ok" "$WORK/not_exclusive.line"

audit blind_release
expect_code "a release without owner check fails the audit" 1 "$code"
# --junit: a case per property, each NO line a failure, and the file validates.
if xmllint --noout --schema "$SOURCE/tests/junit/junit.xsd" "$WORK/blind_release.xml" 2>"$WORK/lint.log"; then
  pass "audit --junit validates against the schema"
else
  fail "audit --junit does not validate:"; sed 's/^/    /' "$WORK/lint.log"
fi
nos=$(grep -c "^  .* NO " "$WORK/blind_release.log")
failures=$(/usr/bin/python3 -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); print(len(r.findall(".//testcase/failure")), len(r.findall(".//testcase")))' "$WORK/blind_release.xml")
read -r nfail ncases <<<"$failures"
[[ $nos -ge 1 && $nfail == "$nos" && $ncases -ge $nos ]] && pass "audit --junit: one failure per NO line ($nfail of $ncases cases)" || fail "audit --junit: $nfail failure(s) in $ncases case(s) for $nos NO line(s)"
line blind_release "refuses a stale release"
expect_grep "blind_release: stale release is NO" "NO .*a release deleted another client's key; worse than lua_owner" "$WORK/blind_release.line"
line blind_release "exclusive without faults"
expect_grep "blind_release: still exclusive without faults" "YES" "$WORK/blind_release.line"
line blind_release "explored: no worse than the reference"
expect_grep "blind_release: exploring finds the stale release, confirmed on a real server" \
  "NO .*stale_release (.*confirmed on a real redis-server [1-3] of 3" "$WORK/blind_release.line"

audit long_ttl
expect_code "a lock that sets a hundredfold TTL fails the audit" 1 "$code"
line long_ttl "explored: no worse than the reference"
expect_grep "long_ttl: exploring finds the deadlock after a crash, confirmed on a real server" \
  "NO .*deadlock (never_recovered).*confirmed on a real redis-server [1-3] of 3" "$WORK/long_ttl.line"
line long_ttl "recovers after the TTL"
expect_grep "long_ttl: recovers after the TTL is NO (deadlock)" "NO .*deadlock.*worse than lua_owner" "$WORK/long_ttl.line"

audit steal_renew
expect_code "a renewal without owner check fails the audit" 1 "$code"
line steal_renew "renewal never extends someone else's lock"
expect_grep "steal_renew: stolen renewal is NO" "NO .*an extend succeeded on another client's key; worse than lua_owner_renew" "$WORK/steal_renew.line"

audit lazy_renew
expect_code "a renewal that extends nothing fails the audit" 1 "$code"
line lazy_renew "renewal keeps a live holder"
expect_grep "lazy_renew: renewal keeps a live holder is NO" "NO .*worse than lua_owner_renew" "$WORK/lazy_renew.line"

audit never_release
expect_code "a release that never deletes fails the audit" 1 "$code"
line never_release "the holder's release frees the lock"
expect_grep "never_release: release frees the lock is NO (idle), not UNDECIDED" "NO .*the holder's release deleted nothing while its lease ran: the lock sat idle; worse than lua_owner" "$WORK/never_release.line"
line good "the holder's release frees the lock"
expect_grep "good: release frees the lock is YES" "YES" "$WORK/good.line"

audit barging_queue
expect_code "a queue that lets newcomers barge fails the audit" 1 "$code"
expect_grep "barging_queue: its reference is lua_fair_queue" "reference lua_fair_queue)" "$WORK/barging_queue.log"
line barging_queue "fair: no barging past a waiter"
expect_grep "barging_queue: fair is NO, worse than lua_fair_queue" "NO .*a newcomer got the lock while a client that asked earlier still waited; worse than lua_fair_queue, which is ok" "$WORK/barging_queue.line"
line barging_queue "survives a waiter dying in the queue"
expect_grep "barging_queue: a dead waiter blocks nobody (it never queues)" "YES" "$WORK/barging_queue.line"
line good "fair: no barging past a waiter"
expect_grep "good: fairness is n/a without a queue" "n/a" "$WORK/good.line"

# A lock that uses what the simulator's model lacks (LPOS): its exploration is n/a, with the
# reason, never a NO or a YES, and the real server judges the rest (one scenario, to be quick).
cat >"$WORK/uses_lpos.json" <<JSON
{"name": "uses_lpos",
 "acquire": {"script": "redis.call('LPOS', KEYS[1] .. ':seen', ARGV[1]) $SET_NX", "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]},
 "release": {"script": "$OWNER_DEL", "keys": ["{key}"], "args": ["{token}"]}}
JSON
mkdir -p "$WORK/one-scenario" && cp "$SOURCE/scenarios/stale-release.json" "$WORK/one-scenario/"
"$LOCKSIM" audit "$WORK/uses_lpos.json" --scenarios "$WORK/one-scenario" --out "$WORK/out" --seed 1 \
  --no-progress >"$WORK/uses_lpos.log" 2>&1
expect_code "a lock the model cannot run is audited on the real server alone" 0 $? "$WORK/uses_lpos.log"
line uses_lpos "explored: no worse than the reference"
expect_grep "uses_lpos: exploring is n/a, naming what the model lacks" \
  "n/a .*not explored: .*unknown command 'LPOS'.*runs on a real redis-server only" "$WORK/uses_lpos.line"
line uses_lpos "refuses a stale release"
expect_grep "uses_lpos: the real server still judges it" "YES" "$WORK/uses_lpos.line"

# A run worse than the reference's reaches a property line even when it is not the failure the
# scenario was written for: a lock that takes over a key whose lease is half over (half, not the
# last 30 ms: a waiter held off that long under ThreadSanitizer on a loaded machine never polled
# inside so short a window, and the lock got YES) shows a racy
# acquire in the stale-release scenario (where lua_owner only outlives its lease), and gets NO
# there with --explore 0 (it got YES on every line, exit 0).
cat >"$WORK/takeover.json" <<JSON
{"name": "takeover",
 "acquire": {"script": "$SET_NX_TAKEOVER", "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]},
 "release": {"script": "$OWNER_DEL", "keys": ["{key}"], "args": ["{token}"]}}
JSON
"$LOCKSIM" audit "$WORK/takeover.json" --scenarios "$WORK/one-scenario" --explore 0 --out "$WORK/out" \
  --seed 1 --no-progress >"$WORK/takeover.log" 2>&1
expect_code "a lock worse than its reference in a scenario fails the audit" 1 $? "$WORK/takeover.log"
line takeover "refuses a stale release"
expect_grep "takeover: NO, worse than lua_owner, naming what it showed" \
  "NO .*racy_acquire.*worse than lua_owner" "$WORK/takeover.line"

# run --variant-file judges a user lock on its own merits too: a renewing lock whose release is a
# blind DEL fails `run` (it passed 23 of 23: the scenarios that catch a blind release did not list
# renewing locks, and renewal-after-pause showed its stale release under an "as expected");
# the same lock with an owner-checked release passes.
mkdir -p "$WORK/run-scenarios"
cp "$SOURCE/scenarios/stale-release.json" "$SOURCE/scenarios/renewal-after-pause.json" "$WORK/run-scenarios/"
lock blind_renew "$SET_NX" "return redis.call('DEL', KEYS[1])" "$OWNER_PEXPIRE"
for name in blind_renew good_renew; do
  "$LOCKSIM" run "$WORK/run-scenarios" --variant-file "$WORK/$name.json" --variant "$name" \
    --out "$WORK/run-out" --no-progress >"$WORK/run-$name.log" 2>&1
  echo $? >"$WORK/run-$name.code"
done
expect_code "run: a renewing lock with a blind release fails" 1 "$(cat "$WORK/run-blind_renew.code")" "$WORK/run-blind_renew.log"
expect_grep "run: it is held to no finding of its own" "no finding of its own .* NO" "$WORK/run-blind_renew.log"
expect_grep "run: it also runs lua_owner's stale-release scenario" "^stale-release *blind_renew" "$WORK/run-blind_renew.log"
expect_code "run: the same lock with an owner-checked release passes" 0 "$(cat "$WORK/run-good_renew.code")" "$WORK/run-good_renew.log"

# Bad input: exit 2, nothing written.
echo '{"name": "broken", "acquire": {"script": 7}}' >"$WORK/broken.json"
"$LOCKSIM" audit "$WORK/broken.json" --scenarios "$SOURCE/scenarios" --out "$WORK/bad-out" \
  >"$WORK/broken.log" 2>&1
expect_code "a bad lock file is a usage error" 2 $?
expect_grep "the error names the file" "broken.json" "$WORK/broken.log"
if [[ -e $WORK/bad-out ]]; then fail "a bad lock file wrote $WORK/bad-out"; else pass "a bad lock file writes nothing"; fi

finish
