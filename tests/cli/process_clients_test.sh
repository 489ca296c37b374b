#!/usr/bin/env bash
# process_clients_test.sh LOCKSIM SOURCE_DIR: clients run as `locksim worker` processes.
# Proves: the worker speaks its protocol (hello, errors for a wrong version, an unknown op, an op
# before connect, a server that refuses), and a run with --clients processes leaves no worker
# behind whatever ends it: Ctrl-C, SIGTERM (exit 130 with reports) and kill -9 of locksim.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-process-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# workers_of PID: the worker processes locksim PID started.
workers_of() { ps -o pid=,args= --ppid "$1" 2>/dev/null | awk '$3 == "worker" {print $1}'; }
wait_gone() {  # wait_gone PID...: true once every process is gone (bounded: 10 s)
  for _ in $(seq 100); do
    local alive=0
    for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [[ $alive == 0 ]] && return 0
    sleep 0.1
  done
  return 1
}

# --- the protocol ------------------------------------------------------------------------------
port=$(free_port)  # nothing listens there
printf '%s\n' \
  '{"v":1,"id":1,"op":"hello"}' \
  '{"v":9,"id":2,"op":"hello"}' \
  '{"v":1,"id":3,"op":"acquire","key":"k","ttl_ms":100,"timeout_ms":0}' \
  "{\"v\":1,\"id\":4,\"op\":\"connect\",\"redis\":{\"host\":\"127.0.0.1\",\"port\":$port},\"client\":\"A\",\"variant\":\"lua_owner\",\"seed\":1,\"lock\":{\"ttl_ms\":100,\"renew_period_ms\":33,\"queue_timeout_ms\":100,\"wait\":{\"strategy\":\"poll\",\"interval_ms\":5,\"initial_ms\":100,\"factor\":2,\"max_ms\":5000,\"jitter\":\"none\",\"fallback_ms\":100}}}" \
  '{"v":1,"id":5,"op":"connect","variant":"no_such_lock"}' \
  'not json' |
  timeout 20 "$LOCKSIM" worker >"$WORK/worker.out" 2>&1
expect_code "the worker ends at the end of its input" 0 $? "$WORK/worker.out"
line() { sed -n "$1p" "$WORK/worker.out"; }
if line 1 | grep -q '"id":1' && line 1 | grep -q '"protocol":1' && line 1 | grep -q '"result":"ok"'; then
  pass "hello names protocol 1"; else fail "hello: $(line 1)"; fi
if line 2 | grep -q '"id":2' && line 2 | grep -q 'speaks protocol 1'; then
  pass "another protocol version is refused"; else fail "version 9: $(line 2)"; fi
if line 3 | grep -q '"id":3' && line 3 | grep -q 'before \\"connect\\"'; then
  pass "an op before connect is refused"; else fail "acquire before connect: $(line 3)"; fi
if line 4 | grep -q '"id":4' && line 4 | grep -q '"error":"refused"'; then
  pass "a server that is not there is refused"; else fail "connect: $(line 4)"; fi
if line 5 | grep -q '"id":5' && line 5 | grep -q '"result":"fail"'; then
  pass "an unknown variant fails"; else fail "unknown variant: $(line 5)"; fi
if line 6 | grep -q 'not a JSON object'; then pass "a line that is not JSON is answered"; else fail "not json: $(line 6)"; fi

# --- no worker outlives the run ----------------------------------------------------------------
cat >"$WORK/long.json" <<'JSON'
{"name": "long", "source": {"doc": "none", "claim": "runs long enough to be interrupted"},
 "variants": ["lua_owner_renew"], "lock": {"ttl_ms": 1000, "wait": {"interval_ms": 2}},
 "workload": {"clients": 3, "cycles": 100000, "work_ms": 2},
 "expect": {"lua_owner_renew": "ok"}}
JSON
for signal in INT TERM KILL; do
  "$LOCKSIM" run "$WORK/long.json" --clients processes --out "$WORK/out-$signal" \
    >"$WORK/sig-$signal.out" 2>&1 &
  pid=$!
  workers=""
  for _ in $(seq 100); do
    workers=$(workers_of "$pid")
    [[ $(echo "$workers" | wc -w) == 3 ]] && break
    sleep 0.1
  done
  if [[ $(echo "$workers" | wc -w) != 3 ]]; then
    fail "SIG$signal: expected 3 workers, saw '$workers'"; kill -9 "$pid"; wait "$pid"; continue
  fi
  pass "SIG$signal: 3 worker processes run the clients"
  sleep 0.5
  signal_run "$signal" "$pid" "$WORK/out-$signal"
  # shellcheck disable=SC2086
  if wait_gone $workers; then pass "SIG$signal: every worker is gone"; else
    fail "SIG$signal: workers left: $workers"; kill -9 $workers 2>/dev/null; fi
done

# --- a user lock in worker processes ------------------------------------------------------------
# The --variant-file reaches every worker: a renewal without an owner check (PEXPIRE of whatever
# holds the key), resumed after a real SIGSTOP past its lease, extends the new holder's lock, and
# the checker flags it as a stolen renewal (the scenario expects none: exit 1).
cat >"$WORK/steal_renew.json" <<'JSON'
{"name": "steal_renew", "like": "lua_owner_renew",
 "acquire": {"script": "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0", "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]},
 "release": {"script": "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", "keys": ["{key}"], "args": ["{token}"]},
 "extend": {"script": "return redis.call('PEXPIRE', KEYS[1], ARGV[2])", "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]}}
JSON
timeout 120 "$LOCKSIM" run "$SOURCE/scenarios/renewal-after-pause.json" --clients processes \
  --variant-file "$WORK/steal_renew.json" --variant steal_renew --out "$WORK/user" --no-progress \
  >"$WORK/user.out" 2>&1
expect_code "a stolen renewal in a worker process is a mismatch" 1 $? "$WORK/user.out"
if /usr/bin/python3 - "$WORK"/user/renewal-after-pause/latest/steal_renew/results.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert any(f["kind"] == "stolen_renewal" for f in r["findings"]), r["findings"]
PY
then pass "the worker's stolen renewal is flagged"; else fail "no stolen_renewal: $(cat "$WORK/user.out")"; fi
finish
