#!/usr/bin/env bash
# explore_test.sh LOCKSIM SOURCE_DIR: `locksim explore` end to end, as a user drives it.
# Proves: for every failing built-in of the catalogue that runs on one server, explore finds its
# bug within a 10 s budget, shrinks it to a minimal scripted scenario and confirms it on a real
# redis-server (and Redlock's lost lock, from the catalogue's scenario, on five servers), and `locksim run --backend sim` of that scenario with a seed explore names shows
# what it expects; a correct lock has no finding of its own under every fault of the menu, only
# the limits every lease has, printed apart (exit 0); --seed replays one schedule exactly; two shards run by GNU parallel and
# added up by --merge equal one unsharded run, their coverage the sum of theirs; bad input is a
# usage error (exit 2).
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-explore-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"


# --- the failing built-ins: found, shrunk, confirmed --------------------------------------------
while read -r variant faults signature; do
  out="$WORK/$variant"
  "$LOCKSIM" explore --variant "$variant" --faults "$faults" --schedules 3000 --time 10s \
    --confirm 2 --out "$out" --no-progress >"$out.out" 2>&1
  expect_code "$variant: explore finds something" 1 $? "$out.out"
  expect_grep "$variant: it finds $signature" "^  $signature: " "$out.out"
  if confirmed "$out.out" "$signature"; then
    pass "$variant: $signature shrunk and confirmed on a real redis-server"
  else
    fail "$variant: $signature was not confirmed"; sed 's/^/    /' "$out.out" | tail -40
  fi
  if in_shrink "$out.out" "$signature" "On 16 fresh seeds .*: shown by 16: it does not hang on a race"; then
    pass "$variant: the minimal scenario shows $signature under 16 of 16 fresh seeds"
  else
    fail "$variant: the minimal scenario of $signature hangs on a race"
  fi
  # Every shrunk scenario ran on both backends (the simulator's fresh seeds, the real server's
  # confirmation runs); where they differ the simulator is wrong, and explore says so.
  shrunk=$(grep -c "^Shrunk " "$out.out")
  compared=$(grep -c "^  the real server and the simulator agree" "$out.out")
  # A loaded machine (CI runs four tests at once on two cores) or a sanitizer (5 to 20 times
  # slower) runs the real clients slower than any machine the simulator's timing profiles draw,
  # so a real run may take a path the simulator never schedules: a pause whose condition came too
  # late ends at its max_ms, and get_then_del's shrunk idle_hold then also showed its stale
  # release on the real server (2 of 4 runs under two busy loops, with this build and the one
  # before; never on a quiet machine). What the simulator shows under every seed the real server
  # must still show: only a difference made of "only the real server showed" lines is slowness.
  slower=$(awk '
    /^  the real server and the simulator differ/ {if (d && !bad) n++; d = 1; bad = 0; next}
    d && /^    only the real server showed / {next}
    d && /^    the real server did not always show / {bad = 1; next}
    d {if (!bad) n++; d = 0}
    END {if (d && !bad) n++; print n + 0}' "$out.out")
  compared=$((compared + slower))
  if [[ $shrunk -gt 0 && $compared -eq $shrunk ]]; then
    pass "$variant: all $shrunk minimal scenarios agree on both backends (or the real server, slower, showed more)"
  else
    fail "$variant: $compared of $shrunk minimal scenarios agree on both backends"
    grep -B12 -A3 "^  the real server and the simulator differ" "$out.out" | sed 's/^/    /'
  fi
  minimal=$(grep -A30 "^Shrunk $signature (" "$out.out" | grep -o "Written: [^ ]*" | head -1 | cut -d' ' -f2)
  shown=$(grep -A1 "^Shrunk $signature (" "$out.out" | grep -o "under seed(s) [0-9]*" | head -1 | awk '{print $3}')
  if [[ -f $minimal && -n $shown ]]; then
    "$LOCKSIM" run "$minimal" --backend sim --seed "$shown" --out "$WORK/run-$variant" --no-progress >"$out.run" 2>&1
    expect_code "$variant: the minimal scenario, run on the simulator with seed $shown, shows it" 0 $? "$out.run"
  else
    fail "$variant: no minimal scenario written for $signature"
  fi
done <<'MENU'
naive crash deadlock (never_recovered)
setnx_then_expire checkpoint deadlock (never_recovered)
set_nx_ex pause,overrun mutex_violation (stale_release)
get_then_del checkpoint mutex_violation (stale_release)
MENU

# --- a command held past its caller's timeout: both backends deliver it ---------------------------
# A's blind DEL is held on the link past its call's 200 ms timeout and let go once B holds the
# lock: on a real server (the link proxy delivers it) and on the simulator (under one seed of each
# timing profile) it deletes B's key and lets C in, A's stale release; lua_owner's compare-and-
# delete does nothing and it stays ok.
cat >"$WORK/held.json" <<'JSON'
{
  "name": "held-release-past-timeout",
  "description": "A's release is held on the link past its call's timeout; the link lets it go once B holds the lock.",
  "clients": ["A", "B", "C"],
  "variants": ["set_nx_ex", "lua_owner"],
  "expect": {"set_nx_ex": {"verdict": "any", "finding": {"signature": "mutex_violation (stale_release)", "clients": ["A", "B", "C"]}},
             "lua_owner": {"verdict": "ok"}},
  "lock": {"acquire_timeout_ms": 2000, "reply_timeout_ms": 200, "ttl_ms": 100, "wait": {"interval_ms": 5, "strategy": "poll"}},
  "source": {"doc": "none", "claim": "a command held past its caller's timeout reaches the server"},
  "steps": [
    {"client": "A", "do": "acquire"},
    {"client": "A", "do": "release", "delay": {"until": {"inside": "B"}, "max_ms": 2000}},
    {"client": "B", "do": "sleep", "sleep_ms": 250},
    {"client": "B", "do": "acquire"},
    {"client": "C", "do": "acquire", "wait_for": {"inside": "B"}},
    {"client": "B", "do": "work", "work_ms": 60},
    {"client": "B", "do": "release"}
  ]
}
JSON
"$LOCKSIM" run "$WORK/held.json" --repeat 2 --out "$WORK/held-real" --no-progress >"$WORK/held-real.out" 2>&1
expect_code "a release held past its timeout: the real server shows A's stale release, lua_owner ok" 0 $? "$WORK/held-real.out"
for seed in 0 1 2 3; do
  "$LOCKSIM" run "$WORK/held.json" --backend sim --seed "$seed" --out "$WORK/held-sim" \
    --no-progress >"$WORK/held-sim.out" 2>&1
  expect_code "a release held past its timeout: the simulator (seed $seed) shows the same" 0 $? "$WORK/held-sim.out"
done

# --- Redlock, on the simulator's five servers: the catalogue's restart without persistence ---------
out="$WORK/redlock"
"$LOCKSIM" explore --variant redlock "$SOURCE/scenarios/redlock-restart-without-persistence.json" \
  --schedules 100 --confirm 2 --out "$out" --no-progress >"$out.out" 2>&1
# A majority of nodes restarted without persistence loses any Redlock: a limit of the kind
# (redlock is its own reference), so explore says so apart and exits 0.
expect_code "redlock: the catalogue's restart scenario shows only a limit of its kind" 0 $? "$out.out"
expect_grep "redlock: lock_lost is listed as a limit" \
  "^Limits every lock of its kind has (redlock, the reference itself" "$out.out"
if confirmed "$out.out" "mutex_violation (lock_lost)" &&
   in_shrink "$out.out" "mutex_violation (lock_lost)" "shown by 16: it does not hang on a race" &&
   in_shrink "$out.out" "mutex_violation (lock_lost)" "nemesis restart_server n"; then
  pass "redlock: a lock lost to restarts without persistence, shrunk and confirmed on five real servers"
else
  fail "redlock: lock_lost was not shrunk and confirmed"; sed 's/^/    /' "$out.out" | tail -30
fi
# Drawn schedules of a multi-server lock run on five servers, with the server faults of the menu.
"$LOCKSIM" explore --variant redlock --faults restart,clock_jump,node_down --max-faults 2 \
  --schedules 300 --no-shrink --no-progress --out "$WORK/redlock-drawn" >"$WORK/redlock-drawn.out" 2>&1
expect_grep "redlock: drawn schedules restart servers, jump clocks and kill nodes, one or a majority" \
  "Exercised: clock_jump ([0-9]*) clock_jump on a majority ([0-9]*) node_down ([0-9]*) node_down on two nodes ([0-9]*) restart ([0-9]*) restart on a majority ([0-9]*)" \
  "$WORK/redlock-drawn.out"
expect_grep "redlock: the swarm draws which kinds are on" \
  "swarm: 0 kinds on ([0-9]*) swarm: 1 kind on ([0-9]*) swarm: 2 kinds on ([0-9]*) swarm: 3 kinds on ([0-9]*)" \
  "$WORK/redlock-drawn.out"
if grep -q "could not run" "$WORK/redlock-drawn.out"; then
  fail "redlock: some drawn schedule could not run"; grep "could not run" "$WORK/redlock-drawn.out" | head -3
else
  pass "redlock: every drawn schedule ran"
fi

# --- a correct lock ------------------------------------------------------------------------------
# Every fault of the menu: a holder outliving its lease and a server forgetting the key are limits
# every lease has, printed apart; nothing is the lock's own, so explore exits 0 (it can gate CI).
for variant in lua_owner lua_owner_fenced; do
  "$LOCKSIM" explore --variant "$variant" --schedules 1500 -j 2 --no-shrink --no-progress \
    --out "$WORK/menu-$variant" >"$WORK/menu-$variant.out" 2>&1
  expect_code "$variant under every fault: no finding of its own" 0 $? "$WORK/menu-$variant.out"
  expect_grep "$variant: it says so" "^Findings of $variant's own.*: none" "$WORK/menu-$variant.out"
  expect_grep "$variant: the outlived lease is a limit, with what helps" \
    "^  mutex_violation (lease_expired): " "$WORK/menu-$variant.out"
  expect_grep "$variant: ... and what helps" "what helps: no lease survives" "$WORK/menu-$variant.out"
done
expect_grep "lua_owner_fenced is judged against lua_owner" "lua_owner shows them too" \
  "$WORK/menu-lua_owner_fenced.out"
"$LOCKSIM" explore --variant lua_owner --faults crash --schedules 500 --no-progress \
  --out "$WORK/correct" >"$WORK/correct.out" 2>&1
expect_code "lua_owner under crashes: no finding" 0 $? "$WORK/correct.out"
expect_grep "it says so" "No finding" "$WORK/correct.out"
expect_grep "it says how fast" "schedules/s" "$WORK/correct.out"

# --- --first-own: stop at the first finding of the lock's own ------------------------------------
# get_then_del's stale release comes within a few dozen schedules: the search stops there (far
# short of its budget), says so, and still shrinks what it found; limits never stop it, so
# lua_owner (none of its own) runs its whole budget.
"$LOCKSIM" explore --variant get_then_del --schedules 100000 -j 2 --first-own --no-progress \
  --out "$WORK/first-own" >"$WORK/first-own.out" 2>&1
expect_code "--first-own: get_then_del's own finding" 1 $? "$WORK/first-own.out"
expect_grep "--first-own: it says it stopped there" "(stopped at the first finding of its own: --first-own)" \
  "$WORK/first-own.out"
ran=$(grep -o "^[0-9]* schedules (seeds" "$WORK/first-own.out" | awk '{print $1}')
if [[ -n $ran && $ran -lt 100000 ]]; then
  pass "--first-own: $ran of the 100000 schedules ran"
else
  fail "--first-own: ran '$ran' schedules"; sed 's/^/    /' "$WORK/first-own.out"
fi
expect_grep "--first-own: what it found is shrunk" "^Shrunk " "$WORK/first-own.out"
"$LOCKSIM" explore --variant lua_owner --schedules 400 -j 2 --first-own --no-shrink --no-progress \
  --out "$WORK/first-own-ok" >"$WORK/first-own-ok.out" 2>&1
expect_code "--first-own: lua_owner, no finding of its own" 0 $? "$WORK/first-own-ok.out"
expect_grep "--first-own: limits do not stop it (all 400 ran)" "^400 schedules (seeds 0..399)" \
  "$WORK/first-own-ok.out"

# --- replay: the first seed set_nx_ex's exploration named, twice ------------------------------
first=$(grep -o "^  mutex_violation (stale_release): [0-9]* schedule(s), first seed [0-9]*" "$WORK/set_nx_ex.out" |
        awk '{print $NF}')
for run in 1 2; do
  "$LOCKSIM" explore --variant set_nx_ex --faults pause,overrun --seed "${first:-0}" \
    --out "$WORK/replay$run" >"$WORK/replay$run.out" 2>&1
  expect_code "--seed replays the schedule of seed ${first:-?} ($run)" 1 $? "$WORK/replay$run.out"
done
expect_grep "the replay shows the finding" "verdict mutex_violation" "$WORK/replay1.out"
if cmp -s "$WORK/replay1/seed-$first/history.jsonl" "$WORK/replay2/seed-$first/history.jsonl" &&
   cmp -s "$WORK/replay1.out" <(sed "s#$WORK/replay2#$WORK/replay1#g" "$WORK/replay2.out"); then
  pass "a replay is exact: the same history and output"
else
  fail "two replays of seed $first differ"
fi
"$LOCKSIM" run "$WORK/replay1/seed-$first/scenario.json" --backend sim --seed 1 --out "$WORK/replayed" \
  --no-progress >"$WORK/replayed.out" 2>&1
expect_code "the replayed schedule's scenario.json runs" 0 $? "$WORK/replayed.out"

# --- shards: GNU parallel runs two seed ranges, --merge adds them up -------------------------
"$LOCKSIM" explore --variant set_nx_ex --faults crash,pause --seeds 0..399 --no-shrink --no-progress \
  --out "$WORK/all" --json "$WORK/whole.json" >"$WORK/all.out" 2>&1
expect_code "the unsharded run finds something" 1 $? "$WORK/all.out"
parallel -j 2 "$LOCKSIM" explore --variant set_nx_ex --faults crash,pause --seeds {} --no-shrink \
  --no-progress --out "$WORK/shard{#}" --json "$WORK/shard{#}.json" ::: 0..199 200..399 \
  >"$WORK/parallel.out" 2>&1
if [[ -f $WORK/shard1.json && -f $WORK/shard2.json ]]; then
  pass "GNU parallel ran two shards"
else
  fail "GNU parallel did not write both shards' summaries"; sed 's/^/    /' "$WORK/parallel.out"
fi
"$LOCKSIM" explore --merge "$WORK/shard2.json" "$WORK/shard1.json" --json "$WORK/merged.json" \
  >"$WORK/merge.out" 2>&1
expect_code "the merge finds what the shards found" 1 $? "$WORK/merge.out"
if /usr/bin/python3 - "$WORK/whole.json" "$WORK/merged.json" <<'PY'
import json, sys
whole, merged = (json.load(open(p)) for p in sys.argv[1:3])
keys = ["settings", "seeds", "schedules", "findings", "exercised", "with_no_fault", "coverage"]
sys.exit(0 if all(whole[k] == merged[k] for k in keys) and whole["findings"] else 1)
PY
then
  pass "the merge of two shards equals one unsharded run (counts, first seeds, exercised, coverage)"
else
  fail "the merge differs from the unsharded run"; cat "$WORK/whole.json" "$WORK/merged.json"
fi
# Coverage: the merged counts are the shards' sums, item by item, and are printed with the holes.
if /usr/bin/python3 - "$WORK/shard1.json" "$WORK/shard2.json" "$WORK/merged.json" <<'PY'
import json, sys
one, two, merged = (json.load(open(p))["coverage"] for p in sys.argv[1:4])
items = set(one["schedules"]) | set(two["schedules"])
summed = {i: one["schedules"].get(i, 0) + two["schedules"].get(i, 0) for i in items}
sys.exit(0 if summed == merged["schedules"] and "crash @ inside" in summed
         and merged["menu"] == one["menu"] else 1)
PY
then
  pass "the merged coverage is the sum of the shards' coverage"
else
  fail "the merged coverage is not the shards' sum"; cat "$WORK/shard1.json" "$WORK/merged.json"
fi
expect_grep "the merge prints what was covered" "^Covered (.* of the menu's [0-9]*):" "$WORK/merge.out"
expect_grep "and what was not" "^  not covered: " "$WORK/merge.out"
# A summary written without coverage still merges; the coverage of the whole is then unknown.
/usr/bin/python3 - "$WORK/shard2.json" "$WORK/uncovered.json" <<'PY'
import json, sys
shard = json.load(open(sys.argv[1]))
del shard["coverage"]
json.dump(shard, open(sys.argv[2], "w"))
PY
"$LOCKSIM" explore --merge "$WORK/shard1.json" "$WORK/uncovered.json" --json "$WORK/unknown.json" \
  >"$WORK/uncovered.out" 2>&1
expect_code "a summary without coverage merges" 1 $? "$WORK/uncovered.out"
expect_grep "it says coverage is not known" "^Covered: not known (.*uncovered.json" \
  "$WORK/uncovered.out"
if /usr/bin/python3 -c 'import json, sys; sys.exit("coverage" in json.load(open(sys.argv[1])))' \
  "$WORK/unknown.json"; then
  pass "the merged summary claims no coverage"
else
  fail "the merged summary claims coverage it does not know"
fi
"$LOCKSIM" explore --merge "$WORK/shard1.json" "$WORK/shard1.json" >"$WORK/overlap.out" 2>&1
expect_code "merging a shard twice" 2 $? "$WORK/overlap.out"
expect_grep "it names the overlap" "overlaps 0..199" "$WORK/overlap.out"
"$LOCKSIM" explore --variant set_nx_ex --faults crash --seeds 400..409 --no-shrink --no-progress \
  --out "$WORK/other" --json "$WORK/other.json" >/dev/null 2>&1
"$LOCKSIM" explore --merge "$WORK/shard1.json" "$WORK/other.json" >"$WORK/mismatch.out" 2>&1
expect_code "merging shards of different settings" 2 $? "$WORK/mismatch.out"
expect_grep "it names the setting" "settings" "$WORK/mismatch.out"
# A shard of another build of locksim (which may draw a seed's schedule differently) is refused.
/usr/bin/python3 - "$WORK/shard2.json" "$WORK/elsewhere.json" <<'PY'
import json, sys
shard = json.load(open(sys.argv[1]))
shard["settings"]["build"] = "0000000"
json.dump(shard, open(sys.argv[2], "w"))
PY
"$LOCKSIM" explore --merge "$WORK/shard1.json" "$WORK/elsewhere.json" >"$WORK/build.out" 2>&1
expect_code "merging shards of two builds" 2 $? "$WORK/build.out"
expect_grep "it names the build" '"build"' "$WORK/build.out"
# Whether the search was steered is a setting: a steered shard runs variations in place of some of
# its seeds' own schedules, so it is not merged with a plain one.
"$LOCKSIM" explore --variant set_nx_ex --faults crash,pause --seeds 400..599 --no-shrink \
  --no-progress --steer --out "$WORK/steered" --json "$WORK/steered.json" >/dev/null 2>&1
if /usr/bin/python3 - "$WORK/steered.json" "$WORK/shard1.json" <<'PY'
import json, sys
steered, plain = (json.load(open(p))["settings"] for p in sys.argv[1:3])
sys.exit(0 if steered.get("steer") is True and plain.get("steer") is False else 1)
PY
then
  pass "the --json settings say whether the search was steered"
else
  fail "the --json settings do not say whether the search was steered"
  cat "$WORK/steered.json" "$WORK/shard1.json"
fi
"$LOCKSIM" explore --merge "$WORK/shard1.json" "$WORK/steered.json" >"$WORK/steer-mix.out" 2>&1
expect_code "merging a steered shard with a plain one" 2 $? "$WORK/steer-mix.out"
expect_grep "it names the setting" '"steer":true' "$WORK/steer-mix.out"

# --- bad input -----------------------------------------------------------------------------------
"$LOCKSIM" explore --variant nope >"$WORK/bad1.out" 2>&1
expect_code "an unknown variant" 2 $? "$WORK/bad1.out"
"$LOCKSIM" explore --variant lua_owner --faults crash,fire >"$WORK/bad2.out" 2>&1
expect_code "an unknown fault" 2 $? "$WORK/bad2.out"
expect_grep "it lists the menu" "crash, checkpoint, pause, overrun" "$WORK/bad2.out"
"$LOCKSIM" explore --variant lua_owner --seeds 9..3 >"$WORK/bad3.out" 2>&1
expect_code "--seeds backwards" 2 $? "$WORK/bad3.out"
"$LOCKSIM" explore --variant lua_owner --time soon >"$WORK/bad4.out" 2>&1
expect_code "--time without a unit" 2 $? "$WORK/bad4.out"
"$LOCKSIM" explore --variant lua_owner "$SOURCE/scenarios/sentinel-failover-loses-lock.json" >"$WORK/bad5.out" 2>&1
expect_code "a scenario the simulator cannot run" 2 $? "$WORK/bad5.out"
expect_grep "it says why" "simulator cannot run it" "$WORK/bad5.out"
expect_grep "an unknown fault's message lists the whole menu" "restart, clock_jump, node_down" "$WORK/bad2.out"
# A menu of faults that do not apply to the lock ran every schedule without one and said "No
# finding", exit 0.
"$LOCKSIM" explore --variant lua_owner --faults node_down --schedules 50 >"$WORK/bad6.out" 2>&1
expect_code "a fault menu none of whose faults applies" 2 $? "$WORK/bad6.out"
expect_grep "it says why" "none of it applies to lua_owner" "$WORK/bad6.out"
# A schedule whose verdict is unknown (a lost reply may hide a violation) is never counted as ok.
"$LOCKSIM" explore --variant lua_owner --faults lost_reply --schedules 400 --no-shrink --no-progress \
  --out "$WORK/unknown" >"$WORK/unknown.out" 2>&1
expect_grep "unknown schedules are counted apart" "schedule(s) ended with the verdict unknown" "$WORK/unknown.out"
expect_no_grep "and never called ok" "every schedule's verdict was ok" "$WORK/unknown.out"

# --- a lock that uses a command the model lacks: no finding, no ok ------------------------------
cat >"$WORK/uses_lpos.json" <<'JSON'
{"name": "uses_lpos", "summary": "looks itself up in a list (LPOS) before taking the key",
 "acquire": {"script": "redis.call('LPOS', KEYS[1] .. ':seen', ARGV[1]) if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0", "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]},
 "release": {"script": "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", "keys": ["{key}"], "args": ["{token}"]}}
JSON
"$LOCKSIM" explore --variant-file "$WORK/uses_lpos.json" --variant uses_lpos --schedules 50 \
  --no-progress --out "$WORK/lpos" >"$WORK/lpos.out" 2>&1
expect_code "a lock the model cannot run: exit 2, not an ok" 2 $? "$WORK/lpos.out"
expect_grep "it counts the schedules that could not run" "^50 of 50 schedule(s) could not run on the simulator" "$WORK/lpos.out"
expect_grep "it names what the model lacks and where the lock runs" "lacks what this lock uses (unknown command 'LPOS'): it runs on a real redis-server only" "$WORK/lpos.out"
if grep -q "lock_error\|every schedule's verdict was ok" "$WORK/lpos.out"; then
  fail "the model's gap is reported as the lock's error or as an ok"; cat "$WORK/lpos.out"
else
  pass "the model's gap is neither the lock's error nor an ok"
fi
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --backend sim --variant-file "$WORK/uses_lpos.json" \
  --variant uses_lpos --out "$WORK/lpos-run" --no-progress >"$WORK/lpos-run.out" 2>&1
expect_code "run --backend sim of that lock stops (exit 3)" 3 $? "$WORK/lpos-run.out"
expect_grep "and says why" "unknown command 'LPOS'" "$WORK/lpos-run.out"

# --- a lock whose script fails: its lock_error says what the error was ---------------------------
# (A blind test's lock_error (reply_error) listed only its signature; the error was in a replay.)
"$LOCKSIM" explore --variant-file "$SOURCE/tests/cli/user_wrongtype_release.json" \
  --variant user_wrongtype_release --schedules 20 --no-shrink --no-progress --out "$WORK/wrongtype" \
  >"$WORK/wrongtype.out" 2>&1
expect_code "a release that always errs is its own finding" 1 $? "$WORK/wrongtype.out"
expect_grep "the lock_error names the script and its error" \
  "^      there: .*script user_wrongtype_release.release: WRONGTYPE Operation against a key" \
  "$WORK/wrongtype.out"

# --- SIGTERM while a minimal scenario is confirmed on a real server: exit 130, no conclusion ------
# The confirmation runs on a real redis-server in real time; a run cut short by the signal decides
# nothing, so explore says neither "confirmed" nor "not reproduced" for it, and exits 130.
"$LOCKSIM" explore --variant set_nx_ex --faults pause,overrun --schedules 3000 --confirm 100 \
  --out "$WORK/term" --no-progress >"$WORK/term.out" 2>&1 &
term_pid=$!
for _ in $(seq 1 600); do  # until the first minimal scenario is written (its confirmation starts)
  grep -q "^  Written: " "$WORK/term.out" && break
  sleep 0.1
done
sleep 0.5  # inside the confirmation's runs
kill -TERM "$term_pid"
wait "$term_pid"
expect_code "SIGTERM during the confirmation stops explore" 130 $? "$WORK/term.out"
# Explore flushes "Written:" before it confirms: what follows the last one is the interrupted one.
if awk '/^  Written: /{after = ""; next} {after = after $0 "\n"} END {printf "%s", after}' "$WORK/term.out" |
  grep -q "confirmed on a real redis-server\|not reproduced on a real redis-server\|simulator agree\|simulator differ"; then
  fail "a conclusion was drawn from interrupted confirmation runs"; sed 's/^/    /' "$WORK/term.out" | tail -20
else
  pass "no conclusion is drawn from interrupted confirmation runs"
fi

finish
