#!/usr/bin/env bash
# simulator_test.sh LOCKSIM SOURCE_DIR: `locksim run --backend sim` end to end, as a user drives it.
# Proves: the catalogue runs on the simulator with every outcome it can run as expected (Redlock's
# servers, a primary with its replica and a client whose own clock runs ahead included) and every other one skipped with its reason; no redis-server is started; one seed gives the same
# history.jsonl byte for byte, another seed another schedule; `check` re-judges a simulated run;
# a client refused while a server restarts tries again and is granted the forgotten lock
# (lock_lost, as on a real server), and explore's restart fault shows lock_lost as a limit of
# every lease; a user lock runs there too and a Lua syntax error in one is bad input; explore with three faults a
# schedule ends for every built-in, and so does a simulated run where a server restart and a lost
# reply overlap; SIGTERM ends explore and run --backend sim within 2 s (exit 130); --backend sim
# with --redis, with only what it cannot run, or an unknown backend, is a usage error (exit 2).
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-sim-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"

# --- the catalogue -------------------------------------------------------------------------------
"$LOCKSIM" run "$SOURCE/scenarios" --backend sim --seed 5 --out "$WORK/cat" --no-progress \
  >"$WORK/cat.out" 2>&1 &
pid=$!
seen_server=""
while kill -0 "$pid" 2>/dev/null; do
  ps -o comm= --ppid "$pid" 2>/dev/null | grep -q redis && seen_server=yes
  sleep 0.05
done
wait "$pid"
expect_code "the catalogue on the simulator" 0 $? "$WORK/cat.out"
expect_grep "every outcome it ran was as expected" "scenario x variant outcomes as expected" "$WORK/cat.out"
expect_grep "a library is skipped with the reason" \
  "skipped on the simulator: cancelled-release / lib:redis-py-asyncio: .* is a library" "$WORK/cat.out"
expect_grep "a Sentinel topology is skipped with the reason" \
  "skipped on the simulator: sentinel-failover-loses-lock / lua_owner: .*Sentinel" "$WORK/cat.out"
expect_grep "a persisting server is skipped with the reason" \
  "skipped on the simulator: server-restart-aof-always / lua_owner: .*persists" "$WORK/cat.out"
expect_grep "Redlock's five servers run, a clock jump loses the lock" \
  "redlock-clock-jump / redlock .*expected mutex_violation (lock_lost) .*observed mutex_violation (lock_lost) .*ok" \
  "$WORK/cat.out"
expect_grep "a semaphore whose client's clock runs ahead overflows its permits" \
  "semaphore-client-clock-ahead / zset_semaphore .*observed mutex_violation (client_clock) .*ok" \
  "$WORK/cat.out"
expect_grep "the semaphore timed by the server holds to its permits" \
  "semaphore-client-clock-behind / zset_semaphore_server .*observed ok .*ok" "$WORK/cat.out"
expect_grep "a failover after a lost acknowledgement runs on a replica" \
  "failover-loses-lock / lua_owner .*observed mutex_violation.*ok" "$WORK/cat.out"
expect_grep "a violation is found on the simulator" \
  "ttl-expiry-while-working / set_nx_ex .*expected mutex_violation (lease_expired) .*observed mutex_violation (lease_expired) .*ok" \
  "$WORK/cat.out"
if [[ -z $seen_server ]]; then pass "no redis-server was started"; else fail "a redis-server ran under locksim"; fi
notes=$(ls "$WORK"/cat/stale-release/latest/set_nx_ex/results.json)
expect_grep "results.json says it ran on the simulator" "ran on the simulator (seed 5)" "$notes"

# --- a restart without persistence, with a client waiting for the server -----------------------
# B asks for the lock while the server is down: its connection is refused, and it tries again
# within its acquire timeout, as on a real server (server_faults_test.sh runs the same file there);
# once the server is back without the key, B is granted the lock A still holds. Before, B's acquire
# ended at the first refusal, and explore's restart fault never showed lock_lost (0 of 40,000
# schedules of lua_owner, lua_fair_queue and lua_owner_fenced).
refused_ok=0
for seed in 0 1 2 3; do
  "$LOCKSIM" run "$SOURCE/tests/cli/restart_refused_acquire.json" --backend sim --seed "$seed" \
    --out "$WORK/refused" --no-progress >"$WORK/refused-$seed.out" 2>&1 && refused_ok=$((refused_ok + 1))
done
if ((refused_ok == 4)); then
  pass "a client refused while the server restarts is granted the forgotten lock (lock_lost, seeds 0-3)"
else
  fail "restart_refused_acquire.json on the simulator: $refused_ok of 4 seeds as expected"
  sed 's/^/    /' "$WORK/refused-0.out"
fi
"$LOCKSIM" explore --variant lua_owner --faults restart --schedules 2000 --no-shrink --no-progress \
  --out "$WORK/explore" >"$WORK/explore-restart.out" 2>&1
expect_code "explore lua_owner under restarts: lock_lost is a limit, not its own (exit 0)" 0 $? \
  "$WORK/explore-restart.out"
if sed -n '/^Limits every lock of its kind has/,$p' "$WORK/explore-restart.out" |
  grep -q "mutex_violation (lock_lost): [0-9]* schedule"; then
  pass "explore's restart fault shows lock_lost under the limits every lease has"
else
  fail "explore --faults restart shows no lock_lost limit:"
  sed 's/^/    /' "$WORK/explore-restart.out"
fi

# --- one seed, one schedule ----------------------------------------------------------------------
for run in a b c; do
  seed=5
  [[ $run == c ]] && seed=6
  "$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" "$SOURCE/scenarios/no-fault-contention.json" \
    --backend sim --seed "$seed" --out "$WORK/$run" --no-progress >"$WORK/$run.out" 2>&1
  expect_code "seeded run $run" 0 $? "$WORK/$run.out"
done
same=0
differ=0
count=0
for file in "$WORK"/a/*/latest/*/history.jsonl; do
  relative=${file#"$WORK"/a/}
  count=$((count + 1))
  cmp -s "$file" "$WORK/b/$relative" && same=$((same + 1))
  cmp -s "$file" "$WORK/c/$relative" || differ=$((differ + 1))
done
if ((count >= 6 && same == count)); then
  pass "the same seed gives the same history.jsonl, byte for byte ($same of $count)"
else
  fail "the same seed gave different histories ($same of $count the same)"
fi
if ((differ > 0)); then pass "another seed gives another schedule ($differ of $count differ)"; else fail "seed 6 gave seed 5's histories"; fi

"$LOCKSIM" check "$WORK/a/stale-release/latest" >"$WORK/check.out" 2>&1
expect_code "check re-judges a simulated run" 0 $? "$WORK/check.out"

# --- a user lock ---------------------------------------------------------------------------------
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --variant-file "$SOURCE/examples/my_lock.json" \
  --backend sim --seed 5 --out "$WORK/user" --no-progress >"$WORK/user.out" 2>&1
expect_code "a user lock on the simulator" 0 $? "$WORK/user.out"
expect_grep "the user lock ran" "stale-release / my_lock" "$WORK/user.out"
sed 's/return 1/return (/' "$SOURCE/examples/my_lock.json" >"$WORK/broken_lock.json"
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --variant-file "$WORK/broken_lock.json" \
  --backend sim --out "$WORK/broken" --no-progress >"$WORK/broken.out" 2>&1
expect_code "a Lua syntax error in a user lock is bad input on the simulator too" 2 $? "$WORK/broken.out"
if [[ ! -e $WORK/broken ]]; then pass "nothing written for a broken user lock"; else fail "a broken user lock wrote $WORK/broken"; fi

# --- nothing hangs, and SIGTERM ends it ------------------------------------------------------------
# Every built-in explored with up to 3 faults a schedule over 3,000 seeds, each under a `timeout`:
# a fiber that blocked its thread (the nemesis held its lock across a server restart while another
# fiber partitioned a link or lost a reply) hung these for ever (redlock from seed 62, lua_owner
# from seed 191, set_nx_ex, lua_owner_renew). A schedule cut short by its bounds would be a
# harness error (exit 3), never an ok.
variants=$("$LOCKSIM" list 2>/dev/null | awk '/^Variants \(built in\)/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
if [[ $(wc -w <<<"$variants") -ge 13 ]]; then pass "list names the built-ins ($(wc -w <<<"$variants"))"; else fail "list named only: $variants"; fi
hung=""
for variant in $variants; do
  # At most 10 s of schedules (3,000 take under 2 s; a sanitizer's build takes longer): explore
  # then stops by itself, so one that is not over 120 s later is hung (its worker asleep).
  timeout -s KILL 120 "$LOCKSIM" explore --variant "$variant" --max-faults 3 --schedules 3000 \
    --time 10s -j 2 --no-shrink --no-progress --out "$WORK/explore" >"$WORK/explore-$variant.out" 2>&1
  code=$?
  if [[ $code == 137 ]]; then
    hung="$hung $variant"
    break  # one hang is enough: the others would each wait out their timeout
  elif [[ $code != 0 && $code != 1 ]]; then
    fail "explore --variant $variant --max-faults 3: exit $code"
    tail -n 20 "$WORK/explore-$variant.out" | sed 's/^/    /'
  fi
done
if [[ -z $hung ]]; then pass "3,000 schedules of every built-in with 3 faults each end"; else fail "explore hung for:$hung"; fi
cat >"$WORK/restart-lost-reply.json" <<'JSON'
{"name": "restart-lost-reply", "description": "A restart under way while a lost reply is armed.",
 "source": {"doc": "none", "claim": "a server restart and a lost reply overlap"},
 "variants": ["lua_owner"], "topology": "single",
 "lock": {"ttl_ms": 100, "acquire_timeout_ms": 1000, "reply_timeout_ms": 200,
          "wait": {"strategy": "poll", "interval_ms": 5}},
 "clients": ["A", "B"],
 "steps": [{"client": "A", "do": "acquire"}, {"do": "kill_server", "server": "n1"},
           {"do": "restart_server", "server": "n1"},
           {"client": "B", "do": "acquire", "lose_reply": true}, {"client": "A", "do": "release"}],
 "expect": {"lua_owner": "any"}}
JSON
timeout -s KILL 30 "$LOCKSIM" run "$WORK/restart-lost-reply.json" --backend sim --seed 1 \
  --out "$WORK/restart" --no-progress >"$WORK/restart.out" 2>&1
expect_code "run --backend sim: a lost reply armed while a server restarts" 0 $? "$WORK/restart.out"

# SIGTERM ends a long exploration within 2 s (its workers stop between schedules, and a schedule
# still running 500 ms after the request is cut short). Waited for at most 5 s, so that a slow
# machine does not fail it; a hang fails it.
ended_after_term() {  # ended_after_term NAME PID OUTPUT: SIGTERM to PID, then exit 130 within 5 s
  local name=$1 pid=$2 output=$3 i
  kill -TERM "$pid"
  for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    fail "$name: still running 5 s after SIGTERM"
    kill -9 "$pid"
    wait "$pid"
  else
    wait "$pid"
    expect_code "$name: SIGTERM ends it" 130 $? "$output"
  fi
}
# started PID FILE TEXT: waits (at most 60 s) until the program has printed TEXT, which it does
# after its signal handling is in place: a SIGTERM sent after a fixed sleep reached an ASan build
# still starting beside other tests and killed it (exit 143) before it could stop in order.
started() {
  local i
  for i in $(seq 600); do
    grep -q "$3" "$2" 2>/dev/null && return 0
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
}
"$LOCKSIM" explore --variant redlock --max-faults 3 --schedules 1000000000 -j 2 --no-shrink \
  --no-progress --out "$WORK/explore" >"$WORK/explore-term.out" 2>&1 &
pid=$!
started "$pid" "$WORK/explore-term.out" "locksim: exploring"
sleep 0.5  # into the schedules
ended_after_term "explore" "$pid" "$WORK/explore-term.out"
expect_grep "explore says it was interrupted" "(interrupted)" "$WORK/explore-term.out"
"$LOCKSIM" run "$SOURCE/scenarios" --backend sim --repeat 200 --out "$WORK/term" --no-progress \
  >"$WORK/run-term.out" 2>&1 &
pid=$!
started "$pid" "$WORK/run-term.out" "locksim: seed"
sleep 0.5  # into the runs
ended_after_term "run --backend sim" "$pid" "$WORK/run-term.out"

# --- usage errors --------------------------------------------------------------------------------
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --backend sim --redis redis://127.0.0.1:1 \
  >"$WORK/redis.out" 2>&1
expect_code "--backend sim with --redis" 2 $? "$WORK/redis.out"
expect_grep "it says to drop --redis" "drop --redis" "$WORK/redis.out"
"$LOCKSIM" run "$SOURCE/scenarios/cancelled-release.json" --backend sim --out "$WORK/none" \
  >"$WORK/none.out" 2>&1
expect_code "only what the simulator cannot run" 2 $? "$WORK/none.out"
expect_grep "it says none can run" "the simulator can run none of the 1 selected outcome" "$WORK/none.out"
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --backend qemu >"$WORK/qemu.out" 2>&1
expect_code "an unknown backend" 2 $? "$WORK/qemu.out"
"$LOCKSIM" run --help >"$WORK/help.out" 2>&1
expect_grep "--help explains --backend" "backend" "$WORK/help.out"

finish
