#!/usr/bin/env bash
# cli_test.sh LOCKSIM SOURCE_DIR: the `locksim` command end to end, as a user drives it.
# Proves: --help and --version answer; bad input exits 2 before anything runs and writes nothing
# (a misspelt --variant gets a did-you-mean), and so does what an executor cannot run, named by
# file and field or by --clients; the deprecated "client_mode" runs with a note, and a run saved
# with it is still checked; an unreachable or missing Redis exits 3; passwords
# never appear; `check` re-judges a saved run (also from the scenario directory, via `latest`),
# detects a changed expectation and asks for the --variant-file of a user lock; summary.md links a
# timeline only once plot_timeline.py drew it; on the private server a user script touching another
# key is refused by the run's ACL user, visibly; --redis touches only the run's own keys, accepts an
# ACL user, and two same-seed runs at once do not collide; --jobs runs scenarios at once with the
# table in the order given, and Ctrl-C interrupts every job; Ctrl-C and SIGTERM exit 130 with reports
# written and no redis-server left, also for two SIGTERMs at once (GNU timeout); killing locksim
# leaves no redis-server.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-cli-test.XXXXXX)
EXTERNAL_PID=""
cleanup() {
  [[ -n $EXTERNAL_PID ]] && kill "$EXTERNAL_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

source "$(dirname "$0")/lib.sh"
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
redis_children() { ps -o pid=,comm= --ppid "$1" 2>/dev/null | awk '$2 ~ /redis/ {print $1}'; }
wait_gone() {  # wait_gone PID: true once the process is gone (bounded: 10 s)
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  return 1
}

# --- help -------------------------------------------------------------------------------------
"$LOCKSIM" --help >"$WORK/help" 2>&1
expect_code "--help" 0 $? "$WORK/help"
expect_grep "--help lists the subcommands" "check" "$WORK/help"
expect_grep "--help explains exit codes" "Exit codes" "$WORK/help"
"$LOCKSIM" run --help >"$WORK/run-help" 2>&1
expect_grep "run --help documents --redis" "redis://" "$WORK/run-help"
"$LOCKSIM" >/dev/null 2>&1
expect_code "no subcommand is a usage error" 2 $?
"$LOCKSIM" frob >"$WORK/frob" 2>&1
expect_code "an unknown command is a usage error" 2 $? "$WORK/frob"
expect_grep "an unknown command is named as one, with the commands" 'unknown command "frob"; the commands are run, check, list, explore, audit, contend' "$WORK/frob"
"$LOCKSIM" rnu scenarios >"$WORK/rnu" 2>&1
expect_grep "a mistyped command gets the nearest one" 'unknown command "rnu" (did you mean "run"?)' "$WORK/rnu"
"$LOCKSIM" --version >"$WORK/version" 2>&1
expect_code "--version" 0 $? "$WORK/version"
project_version=$(sed -n 's/^project(locksim VERSION \([0-9.]*\).*/\1/p' "$SOURCE/CMakeLists.txt")
expect_grep "--version prints the CMake project version and the commit" "^locksim $project_version (commit \([0-9a-f]\{7,\}\(-dirty\)\?\|unknown\))$" "$WORK/version"

# --- list -------------------------------------------------------------------------------------
(cd "$SOURCE" && "$LOCKSIM" list) >"$WORK/list" 2>&1
expect_code "list" 0 $? "$WORK/list"
expect_grep "list shows lua_owner" "lua_owner" "$WORK/list"
expect_grep "list shows the catalogue" "stale-release" "$WORK/list"
expect_grep "list groups the libraries, with whether each is installed" "^Libraries" "$WORK/list"
(cd "$SOURCE" && "$LOCKSIM" list --json) >"$WORK/list.json" 2>"$WORK/list.err"
expect_code "list --json" 0 $? "$WORK/list.json"
# Every group comes from its registry: the manifest's libraries, every scenario file, and the
# built-ins; run --help's library list is generated from the same manifest.
/usr/bin/python3 - "$WORK/list.json" "$SOURCE" >"$WORK/list.check" 2>&1 <<'PY'
import glob, json, os, sys
doc = json.load(open(sys.argv[1]))
source = sys.argv[2]
manifest = json.load(open(os.path.join(source, "adapters", "libraries.json")))
libs = manifest["libraries"] if isinstance(manifest, dict) else manifest
problems = []
if [l["name"] for l in doc["libraries"]] != [l["name"] for l in libs]:
    problems.append("libraries differ from adapters/libraries.json")
if not all(isinstance(l["installed"], bool) for l in doc["libraries"]):
    problems.append("installed is not a boolean")
names = {v["name"] for v in doc["variants"]}
if not {"naive", "lua_owner", "redlock", "lua_fair_queue"} <= names or any(n.startswith("lib:") for n in names):
    problems.append("built-in variants: %s" % sorted(names))
kinds = {v["name"]: (v["semaphore"], v["reentrant"], v["read_write"]) for v in doc["variants"]}
if kinds.get("zset_semaphore_server") != (True, False, False) or kinds.get("hash_reentrant") != (False, True, False) \
        or kinds.get("rw_lock_fair") != (False, False, True) or kinds.get("lua_owner") != (False, False, False):
    problems.append("the kinds of the variants: %s" % kinds)
files = glob.glob(os.path.join(source, "scenarios", "*.json"))
if len(doc["scenarios"]) < len(files) - 1 or not any(s["name"] == "stale-release" for s in doc["scenarios"]):
    problems.append("scenarios: %d for %d files" % (len(doc["scenarios"]), len(files)))
print("\n".join(problems) or "list ok")
PY
expect_grep "list --json has every variant, library and scenario" "list ok" "$WORK/list.check"
"$LOCKSIM" run --help >"$WORK/run-help" 2>&1
for lib in $(/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(" ".join(l["name"][4:] for l in (d["libraries"] if isinstance(d, dict) else d)))' "$SOURCE/adapters/libraries.json"); do
  expect_grep "run --help names the library $lib" "$lib" "$WORK/run-help"
done

# --- bad input: exit 2, nothing written --------------------------------------------------------
cat >"$WORK/bad.json" <<'JSON'
{"name": "bad", "source": {"doc": "none", "claim": "x"}, "variants": ["lua_owner"],
 "lock": {"ttl_ms": -5}, "clients": ["A"], "steps": [{"client": "A", "do": "acquire"}],
 "expect": {"lua_owner": "ok"}}
JSON
"$LOCKSIM" run "$WORK/bad.json" --out "$WORK/out-bad" >"$WORK/bad.out" 2>&1
expect_code "bad scenario" 2 $? "$WORK/bad.out"
expect_grep "error names the file" "bad.json" "$WORK/bad.out"
expect_grep "error names the JSON path" "\$.lock.ttl_ms" "$WORK/bad.out"
if [[ -e $WORK/out-bad ]]; then fail "bad input must not create the report directory"; else pass "bad input writes nothing"; fi
cat >"$WORK/loop.json" <<'JSON'
{"name": "loop", "source": {"doc": "none", "claim": "x"}, "variants": ["lua_owner", "setnx_then_expire"],
 "clients_run_as": "event_loop", "workload": {"clients": 2, "cycles": 2},
 "expect": {"lua_owner": "ok", "setnx_then_expire": "ok"}}
JSON
"$LOCKSIM" run "$WORK/loop.json" --out "$WORK/out-loop" >"$WORK/loop.out" 2>&1
expect_code "event loop with a multi-command variant" 2 $? "$WORK/loop.out"
expect_grep "the refusal names the file, the field and the reason" \
  'loop.json: $.clients_run_as: "event_loop" cannot run setnx_then_expire: setnx_then_expire needs several commands' "$WORK/loop.out"
if [[ -e $WORK/out-loop ]]; then fail "a refused client mode wrote reports"; else pass "a refused client mode writes nothing"; fi
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --clients event_loop --out "$WORK/out-loop" \
  >"$WORK/loop-scripted.out" 2>&1
expect_code "--clients event_loop on a scripted scenario" 2 $? "$WORK/loop-scripted.out"
expect_grep "the refusal names the flag, the file and the field" \
  '--clients event_loop: .*stale-release.json: $.steps: "clients_run_as": "event_loop" runs the clients of a workload only' \
  "$WORK/loop-scripted.out"
# The workload's "client_mode" is a deprecated spelling of "clients_run_as": it runs, with a note
# naming the file and the field; given both, they must agree.
cat >"$WORK/old-loop.json" <<'JSON'
{"name": "old-loop", "source": {"doc": "none", "claim": "x"}, "variants": ["lua_owner"],
 "workload": {"clients": 2, "cycles": 2, "client_mode": "event_loop"}, "expect": {"lua_owner": "ok"}}
JSON
"$LOCKSIM" run "$WORK/old-loop.json" --out "$WORK/out-old-loop" >"$WORK/old-loop.out" 2>"$WORK/old-loop.err"
expect_code "the deprecated client_mode still runs" 0 $? "$WORK/old-loop.out"
expect_grep "a deprecation note names the file, the field and the new spelling" \
  'old-loop.json: $.workload.client_mode is deprecated: write "clients_run_as": "event_loop" at the top level instead' \
  "$WORK/old-loop.err"
expect_grep "the resolved scenario has the new spelling" '"clients_run_as": "event_loop"' \
  "$WORK/out-old-loop/old-loop/latest/scenario.json"
expect_no_grep "the resolved scenario drops the old spelling" 'client_mode' \
  "$WORK/out-old-loop/old-loop/latest/scenario.json"
# A run saved before the new spelling ("clients_run_as": "threads" beside the workload's
# "client_mode": "event_loop") is checked as the event-loop run it was.
saved="$WORK/out-old-loop/old-loop/latest/scenario.json"
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["clients_run_as"] = "threads"; d["workload"]["client_mode"] = "event_loop"; json.dump(d, open(sys.argv[1], "w"))' "$saved"
"$LOCKSIM" check "$WORK/out-old-loop/old-loop" >"$WORK/check-old-loop.out" 2>&1
expect_code "check reads a run saved with the old spelling" 0 $? "$WORK/check-old-loop.out"
"$LOCKSIM" run "$WORK/old-loop.json" --clients processes --out "$WORK/out-old-loop" >"$WORK/old-loop-p.out" 2>&1
expect_code "--clients processes runs an event-loop workload as processes" 0 $? "$WORK/old-loop-p.out"
expect_grep "the resolved scenario says what ran" '"clients_run_as": "processes"' \
  "$WORK/out-old-loop/old-loop/latest/scenario.json"
sed 's/"variants"/"clients_run_as": "threads", "variants"/' "$WORK/old-loop.json" >"$WORK/both.json"
"$LOCKSIM" run "$WORK/both.json" --out "$WORK/out-both" >"$WORK/both.out" 2>&1
expect_code "clients_run_as and a conflicting client_mode" 2 $? "$WORK/both.out"
expect_grep "the conflict names the file and both fields" \
  'both.json: $.workload.client_mode: "event_loop" conflicts with $.clients_run_as: "threads"' "$WORK/both.out"
"$LOCKSIM" run "$SOURCE/scenarios" --variant no_such_lock --out "$WORK/out-x" >"$WORK/var.out" 2>&1
expect_code "unknown --variant" 2 $? "$WORK/var.out"
"$LOCKSIM" run "$SOURCE/scenarios" --variant lua_ownr --out "$WORK/out-x" >"$WORK/var2.out" 2>&1
expect_code "misspelt --variant" 2 $? "$WORK/var2.out"
expect_grep "a misspelt --variant gets a did-you-mean" 'lua_ownr: unknown variant (did you mean "lua_owner"?); known: ' "$WORK/var2.out"
if grep -q "did you mean" "$WORK/var.out"; then fail "no did-you-mean for a name near nothing"; else pass "no did-you-mean for a name near nothing"; fi
"$LOCKSIM" run "$WORK/missing.json" >"$WORK/missing.out" 2>&1
expect_code "missing scenario file" 2 $? "$WORK/missing.out"

# --- environment failures: exit 3; passwords never printed ---------------------------------------
closed=$(free_port)
"$LOCKSIM" run "$SOURCE/scenarios/ttl-expiry-while-working.json" --redis "redis://:hunter2@127.0.0.1:$closed" \
  --out "$WORK/out-unreach" >"$WORK/unreach.out" 2>&1
expect_code "unreachable --redis" 3 $? "$WORK/unreach.out"
if grep -q hunter2 "$WORK/unreach.out"; then fail "password printed"; else pass "password not printed"; fi
"$LOCKSIM" run "$SOURCE/scenarios/ttl-expiry-while-working.json" --redis "http://:hunter2@x" >"$WORK/url.out" 2>&1
expect_code "malformed --redis URL" 2 $? "$WORK/url.out"
if grep -q hunter2 "$WORK/url.out"; then fail "password printed for a bad URL"; else pass "bad URL message hides the password"; fi
PATH=/nonexistent "$LOCKSIM" run "$SOURCE/scenarios/ttl-expiry-while-working.json" --out "$WORK/out-nore" >"$WORK/nore.out" 2>&1
expect_code "redis-server missing" 3 $? "$WORK/nore.out"
expect_grep "says how to install redis-server" "apt-get install redis-server" "$WORK/nore.out"

# --- a real run, then `check` re-judges it -----------------------------------------------------
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --out "$WORK/out" --seed 3 >"$WORK/run.out" 2>&1
expect_code "stale-release run" 0 $? "$WORK/run.out"
run_dir=$(readlink -f "$WORK/out/stale-release/latest")
for f in scenario.json summary.md results.json lua_owner/history.jsonl lua_owner/results.json lua_owner/trace.json; do
  if [[ -s $run_dir/$f ]]; then pass "wrote $f"; else fail "missing $f"; fi
done
expect_grep "summary names the stale release" "stale_release" "$run_dir/summary.md"
if grep -q "timeline.png)" "$run_dir/summary.md"; then fail "summary.md links a timeline nobody drew"; else pass "summary.md links no undrawn timeline"; fi
expect_grep "summary.md says how to draw the timeline" "timeline: not drawn yet (\`/usr/bin/python3 scripts/plot_timeline.py\`" "$run_dir/summary.md"
/usr/bin/python3 "$SOURCE/scripts/plot_timeline.py" "$run_dir" >"$WORK/plot.out" 2>&1
expect_grep "plot_timeline.py links the timeline it drew" '!\[lua_owner timeline\](lua_owner/timeline.png)$' "$run_dir/summary.md"
"$LOCKSIM" check "$run_dir" >"$WORK/check.out" 2>&1
expect_code "check re-judges the saved run" 0 $? "$WORK/check.out"
"$LOCKSIM" check "$run_dir/set_nx_ex" >"$WORK/check1.out" 2>&1
expect_code "check one variant directory" 0 $? "$WORK/check1.out"
# Make the saved expectation for lua_owner wrong: check must now report a mismatch.
/usr/bin/python3 - "$SOURCE/scenarios/stale-release.json" "$run_dir/scenario.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["expect"]["lua_owner"] = "ok"
json.dump(doc, open(sys.argv[2], "w"))
PY
"$LOCKSIM" check "$run_dir" >"$WORK/check2.out" 2>&1
expect_code "check detects an outcome that differs" 1 $? "$WORK/check2.out"
"$LOCKSIM" check "$WORK" >"$WORK/check3.out" 2>&1
expect_code "check on a directory without history" 2 $? "$WORK/check3.out"

# --- user Lua locks (--variant-file) ---------------------------------------------------------
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --variant-file "$SOURCE/examples/my_lock.json" \
  --variant my_lock --out "$WORK/out-user" >"$WORK/user.out" 2>&1
expect_code "the example user lock behaves like lua_owner" 0 $? "$WORK/user.out"
"$LOCKSIM" check "$WORK/out-user/stale-release" --variant-file "$SOURCE/examples/my_lock.json" >"$WORK/check-user.out" 2>&1
expect_code "check on a scenario directory follows its latest link" 0 $? "$WORK/check-user.out"
expect_grep "check says it took the latest run" "latest" "$WORK/check-user.out"
"$LOCKSIM" check "$WORK/out-user/stale-release/latest/" >"$WORK/check-nofile.out" 2>&1
expect_code "check of a user lock's run without its --variant-file" 2 $? "$WORK/check-nofile.out"
expect_grep "check suggests --variant-file, naming the lock" 'lock "my_lock".*--variant-file' "$WORK/check-nofile.out"
expect_grep "check says it must be the same file" "same file the run used" "$WORK/check-nofile.out"
/usr/bin/python3 - "$SOURCE/examples/my_lock.json" "$WORK" <<'PY'
import json, sys
base = json.load(open(sys.argv[1]))
def variant(name, **changes):
    doc = json.loads(json.dumps(base)); doc["name"] = name
    for part, value in changes.items(): doc[part] = value
    json.dump(doc, open(f"{sys.argv[2]}/{name}.json", "w"))
variant("bad_syntax", acquire={"script": "if then return 1", "keys": ["{key}"], "args": []})
variant("typo", acquire={"script": "return 1", "keys": ["{key}"], "args": ["{tokn}"]})
variant("unsafe_del", release={"script": "return redis.call('DEL', KEYS[1])", "keys": ["{key}"]})
variant("sneaky", acquire={"script": "redis.call('SET', 'other', 1) "
                           "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0",
                           "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]})
PY
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --variant-file "$WORK/bad_syntax.json" --out "$WORK/out-u" >"$WORK/syntax.out" 2>&1
expect_code "a Lua syntax error is bad input" 2 $? "$WORK/syntax.out"
expect_grep "the syntax error names the script" "bad_syntax.acquire" "$WORK/syntax.out"
# Every command that reads the file says so before it runs anything: explore ran a lock that did
# not compile for 20,000 schedules and called its errors the lock's own findings (exit 1).
for command in "explore --variant bad_syntax --schedules 50 --no-shrink --out $WORK/out-c --variant-file" \
  "audit --out $WORK/out-c" "list --variant-file"; do
  # shellcheck disable=SC2086
  "$LOCKSIM" $command "$WORK/bad_syntax.json" >"$WORK/syntax-cmd.out" 2>&1
  expect_code "${command%% *}: a Lua syntax error is bad input" 2 $? "$WORK/syntax-cmd.out"
  expect_grep "${command%% *}: it names the file and the script" \
    "bad_syntax.json: .*script bad_syntax.acquire: ERR Error compiling script" "$WORK/syntax-cmd.out"
done
# {token} is one per acquire call: a lock that grants a token only on its second ask grants A's
# second attempt, with threads, with client processes and on the simulator (with a token per
# attempt it granted none of 199: a lock keying a waiting writer's intent by its token broke so).
for how in "" "--clients processes" "--backend sim --seed 3"; do
  # shellcheck disable=SC2086
  "$LOCKSIM" run "$SOURCE/tests/cli/token_per_call.json" --variant-file \
    "$SOURCE/tests/cli/user_second_ask.json" $how --out "$WORK/per-call" --no-progress \
    >"$WORK/per-call.out" 2>&1
  expect_code "a token per acquire call (${how:-threads})" 0 $? "$WORK/per-call.out"
  expect_grep "its second attempt is granted (${how:-threads})" \
    '"type":"ok","f":"acquire".*"attempts":2,' \
    "$WORK/per-call/token-per-call/latest/user_second_ask/history.jsonl"
done
# locksim list names each user lock's reference, after a summary of the user's own too.
"$LOCKSIM" list --variant-file "$SOURCE/tests/cli/user_semaphore_off_by_one.json" \
  >"$WORK/list-user.out" 2>&1
expect_code "list with a user lock" 0 $? "$WORK/list-user.out"
expect_grep "list shows its summary and its reference" \
  "^  user_off_by_one_semaphore .*(a test's lock); judged as zset_semaphore_server$" \
  "$WORK/list-user.out"
# A --variant that none of the scenarios lists is said so, on either backend (the simulator's run
# once said it "can run none of the 0 selected outcome(s) (each is skipped above)", above which
# nothing was).
for how in "" "--backend sim"; do
  # shellcheck disable=SC2086
  "$LOCKSIM" run "$SOURCE/scenarios/rw-readers-share.json" --variant lua_owner $how \
    --out "$WORK/unlisted" --no-progress >"$WORK/unlisted.out" 2>&1
  expect_code "a variant no scenario lists is bad input (${how:-real})" 2 $? "$WORK/unlisted.out"
  expect_grep "it says none of the variants is listed (${how:-real})" \
    "^locksim: --variant: none of the given variants is listed by these scenarios" \
    "$WORK/unlisted.out"
done
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --variant-file "$WORK/typo.json" --out "$WORK/out-u" >"$WORK/typo.out" 2>&1
expect_code "an unknown placeholder is bad input" 2 $? "$WORK/typo.out"
expect_grep "the placeholder error names the path" "\$.acquire.args\[0\]" "$WORK/typo.out"
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --variant-file "$WORK/unsafe_del.json" --variant unsafe_del --out "$WORK/out-u" >"$WORK/unsafe.out" 2>&1
expect_code "an unsafe user lock claiming to be like lua_owner is caught" 1 $? "$WORK/unsafe.out"
expect_grep "its stale release is named" "stale_release" "$WORK/unsafe.out"
# On the private server the clients are an ACL user limited to the run's keys: a script that also
# writes another key fails, and the error is shown and recorded (Redis 7.0 words it as ERR).
cat >"$WORK/once.json" <<'JSON'
{"name": "once", "source": {"doc": "none", "claim": "one client takes the lock once and releases it"},
 "variants": ["lua_owner"], "lock": {"ttl_ms": 1000, "acquire_timeout_ms": 0},
 "clients": ["A"], "steps": [{"client": "A", "do": "acquire"}, {"client": "A", "do": "release"}],
 "expect": {"lua_owner": "ok"}}
JSON
"$LOCKSIM" run "$WORK/once.json" --variant-file "$WORK/sneaky.json" --out "$WORK/out-sneaky" >"$WORK/sneaky.out" 2>&1
acl_denial="NOPERM\|user executing the script can't access"
expect_grep "a user script writing another key fails, named" "script sneaky.acquire: .*\($acl_denial\)" "$WORK/sneaky.out"
expect_grep "the refusal is the acquire's recorded error" "\"error\":.*\($acl_denial\)" "$WORK/out-sneaky/once/latest/sneaky/history.jsonl"

# --- no silent ok: every run that could not decide says so ------------------------------------
observed() {  # observed RESULTS_JSON VARIANT: the observed verdict of one variant
  /usr/bin/python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
print(next(v["observed"]["verdict"] for v in r["variants"] if v["context"]["variant"] == sys.argv[2]))' "$1" "$2"
}
expect_verdict() {  # expect_verdict NAME EXPECTED RESULTS_JSON VARIANT
  local got; got=$(observed "$3" "$4" 2>/dev/null)
  if [[ $got == "$2" ]]; then pass "$1 ($got)"; else fail "$1: expected verdict $2, got '$got'"; fi
}
cat >"$WORK/stuck.json" <<'JSON'
{"name": "stuck", "source": {"doc": "none", "claim": "a condition that never holds"},
 "variants": ["lua_owner"], "time_limit_ms": 1500, "lock": {"ttl_ms": 500},
 "clients": ["A", "B"],
 "steps": [{"client": "A", "do": "acquire"},
           {"client": "A", "do": "work", "until": {"crashed": "B"}, "max_ms": 100000},
           {"client": "A", "do": "release"}],
 "expect": {"lua_owner": "ok"}}
JSON
"$LOCKSIM" run "$WORK/stuck.json" --out "$WORK/out-stuck" >"$WORK/stuck.out" 2>&1
expect_code "a run stopped by its time limit does not pass as ok" 1 $? "$WORK/stuck.out"
expect_verdict "a run stopped by its time limit is unknown" unknown "$WORK/out-stuck/stuck/latest/results.json" lua_owner
expect_grep "the summary says the time limit stopped it" "Incomplete run.*time_limit" "$WORK/out-stuck/stuck/latest/summary.md"
cat >"$WORK/table_lock.json" <<'JSON'
{"name": "table_lock", "like": "lua_owner", "acquire": {"script": "return {1, 2}"},
 "release": {"script": "return redis.call('DEL', KEYS[1])", "args": []}}
JSON
cat >"$WORK/loop_lock.json" <<'JSON'
{"name": "loop_lock", "like": "lua_owner", "acquire": {"script": "while true do end"},
 "release": {"script": "return redis.call('DEL', KEYS[1])", "args": []}}
JSON
cat >"$WORK/twice.json" <<'JSON'
{"name": "twice", "source": {"doc": "none", "claim": "two clients, one cycle each"},
 "variants": ["lua_owner"], "workload": {"clients": 2, "cycles": 1}, "expect": {"lua_owner": "ok"}}
JSON
"$LOCKSIM" run "$WORK/twice.json" "$WORK/once.json" --variant-file "$WORK/table_lock.json" \
  --variant-file "$WORK/loop_lock.json" --out "$WORK/out-err" >"$WORK/err.out" 2>&1
expect_verdict "a lock whose acquire returns a table is an error" error "$WORK/out-err/twice/latest/results.json" table_lock
expect_verdict "a lock whose acquire loops is an error" error "$WORK/out-err/twice/latest/results.json" loop_lock
expect_grep "the wrong reply is named under the row" "table_lock.acquire returned an array" "$WORK/err.out"
expect_grep "a looping script was ended with SCRIPT KILL" "SCRIPT KILL" "$WORK/out-err/twice/latest/summary.md"
expect_verdict "after a looping script the server serves the next scenario" ok "$WORK/out-err/once/latest/results.json" lua_owner
cat >"$WORK/waits.json" <<'JSON'
{"name": "waits", "source": {"doc": "none", "claim": "B waits while the server dies"},
 "variants": ["lua_owner", "set_nx_ex"], "lock": {"ttl_ms": 20000, "acquire_timeout_ms": 20000},
 "clients": ["A", "B"],
 "steps": [{"client": "A", "do": "acquire"}, {"client": "B", "do": "acquire"},
           {"client": "A", "do": "work", "work_ms": 15000}, {"client": "A", "do": "release"},
           {"client": "B", "do": "release"}],
 "expect": {"lua_owner": "ok", "set_nx_ex": "ok"}}
JSON
"$LOCKSIM" run "$WORK/waits.json" --out "$WORK/out-dies" >"$WORK/dies.out" 2>&1 &
dies_pid=$!
for _ in $(seq 100); do [[ -n $(redis_children "$dies_pid") ]] && break; sleep 0.1; done
sleep 1
kill -9 $(redis_children "$dies_pid") 2>/dev/null
wait "$dies_pid"
expect_code "a server killed while a client waits is an environment failure" 3 $?
expect_verdict "the run it killed is an error" error "$WORK/out-dies/waits/latest/results.json" lua_owner
expect_grep "the run-level summary is written" "Server lost" "$WORK/out-dies/waits/latest/summary.md"
expect_grep "the outcome table is printed" "^waits .*lua_owner .*error" "$WORK/dies.out"
expect_grep "it says the rest was not run" "the rest was not run" "$WORK/dies.out"

# --- --redis: only the run's own keys are touched ----------------------------------------------
port=$(free_port)
redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --daemonize no \
  --dir "$WORK" >/dev/null 2>&1 &
EXTERNAL_PID=$!
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$port" set foreign:key keep-me >/dev/null
"$LOCKSIM" run "$SOURCE/scenarios/ttl-expiry-while-working.json" --redis "redis://127.0.0.1:$port" \
  --out "$WORK/out-ext" >"$WORK/ext.out" 2>&1
expect_code "run against --redis" 0 $? "$WORK/ext.out"
if [[ $(redis-cli -p "$port" get foreign:key) == keep-me && $(redis-cli -p "$port" dbsize) == 1 ]]; then
  pass "--redis left foreign keys alone and removed its own"
else
  fail "--redis keyspace after the run: $(redis-cli -p "$port" keys '*' | tr '\n' ' ')"
fi
# A directory on --redis runs what the server can and lists each scenario that needs servers of
# its own, with the reason; the closing line names the one report written.
mkdir -p "$WORK/mixed"
cp "$SOURCE/scenarios/ttl-expiry-while-working.json" "$SOURCE/scenarios/server-clock-jump.json" \
  "$WORK/mixed/"
"$LOCKSIM" run "$WORK/mixed" --redis "redis://127.0.0.1:$port" --out "$WORK/out-mixed" \
  >"$WORK/mixed.out" 2>&1
expect_code "a directory on --redis runs what the server can" 0 $? "$WORK/mixed.out"
expect_grep "--redis says what it skipped" "skipped 1 scenario file" "$WORK/mixed.out"
expect_grep "--redis says why, by scenario" "^  server-clock-jump: harms its servers (single topology)" "$WORK/mixed.out"
expect_no_grep "the skipped scenario did not run" "server-clock-jump  *set_nx_ex" "$WORK/mixed.out"
report=$(sed -n 's/^Report: //p' "$WORK/mixed.out")
if [[ -n $report && -f $report ]]; then pass "the closing line names the report written ($report)"; else fail "closing line: no report at '$report'"; fi
# --dry-run resolves everything, reaches the server, runs and writes nothing.
"$LOCKSIM" run "$WORK/mixed" --redis "redis://127.0.0.1:$port" --out "$WORK/out-dry" --dry-run \
  >"$WORK/dry.out" 2>&1
expect_code "--dry-run on --redis" 0 $? "$WORK/dry.out"
expect_grep "--dry-run lists what would run" "^  ttl-expiry-while-working: naive set_nx_ex lua_owner lua_owner_renew" "$WORK/dry.out"
expect_grep "--dry-run reached the server" "at redis://127.0.0.1:$port (reached)" "$WORK/dry.out"
if [[ -e $WORK/out-dry ]]; then fail "--dry-run wrote $WORK/out-dry"; else pass "--dry-run wrote nothing"; fi
"$LOCKSIM" run "$WORK/mixed" --redis "redis://127.0.0.1:$closed" --dry-run >"$WORK/dry3.out" 2>&1
expect_code "--dry-run on an unreachable --redis" 3 $? "$WORK/dry3.out"
# An ACL user in the URL logs in as that user; its password appears nowhere.
redis-cli -p "$port" acl setuser app on '>app-secret-77' '~locksim:*' '&*' '+@all' >/dev/null
"$LOCKSIM" run "$WORK/once.json" --redis "redis://app:app-secret-77@127.0.0.1:$port" \
  --out "$WORK/out-acl" >"$WORK/acl.out" 2>&1
expect_code "run against --redis as an ACL user" 0 $? "$WORK/acl.out"
if grep -rq app-secret-77 "$WORK/acl.out" "$WORK/out-acl"; then fail "ACL user's password printed or written"; else pass "ACL user's password neither printed nor written"; fi
expect_grep "the report names the user, redacted" "redis://app:\*\*\*@127.0.0.1" "$WORK/out-acl/once/latest/results.json"
"$LOCKSIM" run "$WORK/once.json" --redis "redis://app:wrong-pass-88@127.0.0.1:$port" \
  --out "$WORK/out-acl2" >"$WORK/acl2.out" 2>&1
expect_code "a wrong ACL password is an environment failure" 3 $? "$WORK/acl2.out"
expect_grep "the AUTH failure names the user" "AUTH as user app failed" "$WORK/acl2.out"

# Two runs with the same seed on the same server in the same second must not share keys (one's
# cleanup would delete the other's lock and counter) nor a report directory.
for twin in 1 2; do
  "$LOCKSIM" run "$SOURCE/scenarios/stock-deduction.json" --redis "redis://127.0.0.1:$port" --seed 5 \
    --out "$WORK/out-twins" >"$WORK/twin-$twin.out" 2>&1 &
  eval "twin_pid_$twin=\$!"
done
wait "$twin_pid_1"; twin_code_1=$?
wait "$twin_pid_2"; twin_code_2=$?
expect_code "first of two concurrent same-seed runs" 0 "$twin_code_1"
expect_code "second of two concurrent same-seed runs" 0 "$twin_code_2"
[[ $twin_code_1 == 0 && $twin_code_2 == 0 ]] || cat "$WORK/twin-1.out" "$WORK/twin-2.out"
twin_dirs=$(find "$WORK/out-twins/stock-deduction" -mindepth 1 -maxdepth 1 -type d | wc -l)
if [[ $twin_dirs == 2 ]]; then pass "two concurrent same-seed runs got two report directories"; else fail "two concurrent same-seed runs: $twin_dirs report directories"; fi
if [[ $(redis-cli -p "$port" dbsize) == 1 ]]; then pass "both runs removed their own keys"; else fail "keys left by the two runs: $(redis-cli -p "$port" keys '*' | tr '\n' ' ')"; fi

# The server stops answering for longer than the TTL while a renewing lock's holder works, with no
# fault planned: the lease is lost to the machine, not the lock. The outcome that differs from its
# expectation is run again, and the run says why (an unplanned_stall in the first attempt).
"$LOCKSIM" run "$SOURCE/scenarios/stock-deduction.json" --variant lua_owner_renew \
  --redis "redis://127.0.0.1:$port" --out "$WORK/out-stall" --no-progress >"$WORK/stall.out" 2>&1 &
stall_run=$!
for _ in $(seq 500); do  # until A holds the lock: its key exists
  [[ -n $(redis-cli -p "$port" --scan --pattern '*lua_owner_renew:stock_lock_1') ]] && break
  sleep 0.01
done
kill -STOP "$EXTERNAL_PID"
sleep 0.4
kill -CONT "$EXTERNAL_PID"
wait "$stall_run"
stall_code=$?
expect_code "a lease lost to a stalled server is run again" 0 "$stall_code" "$WORK/stall.out"
if [[ $stall_code != 0 ]]; then  # (seen once on a loaded fresh clone: what each attempt found)
  grep -h '"words"' "$WORK"/out-stall/stock-deduction/latest/lua_owner_renew/results.json | sed 's/^/    /'
fi
expect_grep "the stalled attempt is named" "while the machine stalled; running it again (attempt 2 of 3)" "$WORK/stall.out"
expect_grep "the stall is explained" "answered only at .* no fault was planned there" "$WORK/stall.out"
expect_grep "the report keeps the stalled attempt" "attempt 1 of this run differed from its expectation while the machine stalled" \
  "$WORK/out-stall/stock-deduction/latest/lua_owner_renew/results.json"

# --- --jobs: scenarios at once; the table in the order given, whatever ends first ----------------
for speed in slow:2500 fast:10; do
  cat >"$WORK/jobs-${speed%%:*}.json" <<JSON
{"name": "jobs-${speed%%:*}", "source": {"doc": "none", "claim": "x"}, "variants": ["lua_owner", "set_nx_ex"],
 "lock": {"ttl_ms": 10000}, "clients": ["A"],
 "steps": [{"client": "A", "do": "acquire"}, {"client": "A", "do": "work", "work_ms": ${speed##*:}},
           {"client": "A", "do": "release"}],
 "expect": {"lua_owner": "ok", "set_nx_ex": "ok"}}
JSON
done
"$LOCKSIM" run "$WORK/jobs-slow.json" "$WORK/jobs-fast.json" --jobs 2 --out "$WORK/out-jobs" \
  --no-progress >"$WORK/jobs.out" 2>&1
expect_code "--jobs 2" 0 $? "$WORK/jobs.out"
# jobs-fast was started second and ends first: the two ran at once.
first_done=$(grep -m1 -E '^\[[0-9]/4\]' "$WORK/jobs.out")
if [[ $first_done == *jobs-fast* ]]; then pass "--jobs 2 runs the second scenario beside the first"; else fail "--jobs 2: the first run to end was: $first_done"; cat "$WORK/jobs.out"; fi
table=$(sed -n '/^scenario /,/^$/p' "$WORK/jobs.out" | awk 'NR > 1 && NF {print $1 "/" $2}' | tr '\n' ' ')
if [[ $table == "jobs-slow/lua_owner jobs-slow/set_nx_ex jobs-fast/lua_owner jobs-fast/set_nx_ex " ]]; then
  pass "--jobs: the table is in the order given"
else
  fail "--jobs: the table's order: $table"
fi
for name in slow fast; do
  expect_grep "--jobs: jobs-$name's report" "lua_owner" "$WORK/out-jobs/jobs-$name/latest/summary.md"
done
"$LOCKSIM" run "$WORK/jobs-fast.json" --jobs 0 >"$WORK/jobs0.out" 2>&1
expect_code "--jobs 0 is a usage error" 2 $? "$WORK/jobs0.out"
# Ctrl-C stops every job: both partial summaries say so, and no redis-server is left.
sed 's/"jobs-slow"/"jobs-slow-2"/' "$WORK/jobs-slow.json" >"$WORK/jobs-slow-2.json"
"$LOCKSIM" run "$WORK/jobs-slow.json" "$WORK/jobs-slow-2.json" --jobs 2 --out "$WORK/out-jobs-int" \
  --no-progress >"$WORK/jobs-int.out" 2>&1 &
jobs_pid=$!
for _ in $(seq 200); do  # until both runs have begun (bounded: 20 s)
  [[ $(find "$WORK/out-jobs-int" -name scenario.json 2>/dev/null | wc -l) == 2 ]] && break
  sleep 0.1
done
sleep 0.3
signal_run INT "$jobs_pid" "$WORK/out-jobs-int"
interrupted=$(grep -l interrupted "$WORK"/out-jobs-int/jobs-slow*/[0-9]*/summary.md 2>/dev/null | wc -l)
if [[ $interrupted == 2 ]]; then pass "--jobs: Ctrl-C interrupts both runs"; else fail "--jobs: $interrupted of 2 summaries say interrupted"; fi
kill "$EXTERNAL_PID"; wait "$EXTERNAL_PID" 2>/dev/null; EXTERNAL_PID=""

# --- signals: reports written, exit 130, no redis-server left ----------------------------------
cat >"$WORK/long.json" <<'JSON'
{"name": "long", "source": {"doc": "none", "claim": "runs long enough to be interrupted"},
 "variants": ["lua_owner"], "lock": {"ttl_ms": 1000, "wait": {"interval_ms": 2}},
 "workload": {"clients": 2, "cycles": 100000, "work_ms": 2},
 "expect": {"lua_owner": "ok"}}
JSON
for signal in INT TERM KILL; do
  "$LOCKSIM" run "$WORK/long.json" --out "$WORK/out-$signal" >"$WORK/sig-$signal.out" 2>&1 &
  pid=$!
  server=""
  for _ in $(seq 100); do server=$(redis_children "$pid"); [[ -n $server ]] && break; sleep 0.1; done
  if [[ -z $server ]]; then fail "SIG$signal: no private redis-server seen"; kill -9 "$pid"; continue; fi
  sleep 1
  signal_run "$signal" "$pid" "$WORK/out-$signal"
  if wait_gone "$server"; then pass "SIG$signal: redis-server $server is gone"; else fail "SIG$signal: redis-server $server orphaned"; kill -9 "$server"; fi
done

# Two SIGTERMs at once, as GNU timeout sends them (one to locksim, one to its process group): the
# second, within the grace period, must not lose the reports. First by hand, 10 ms apart, to the
# process and then its own process group (setsid); then under timeout itself.
expect_interrupted_reports() {  # expect_interrupted_reports NAME OUT_DIR
  local run_dir
  run_dir=$(ls -d "$2"/long/*/ 2>/dev/null | head -1)
  if [[ -n $run_dir && -s $run_dir/summary.md && -s $run_dir/results.json ]] &&
    grep -q interrupted "$run_dir/summary.md" && grep -q '"interrupted": true' "$run_dir/results.json"; then
    pass "$1: summary.md and results.json written, marked interrupted"
  else
    fail "$1: no interrupted summary.md and results.json in $2: $(ls -R "$2" 2>/dev/null | tr '\n' ' ')"
  fi
}
setsid "$LOCKSIM" run "$WORK/long.json" --out "$WORK/out-TERM2" >"$WORK/sig-TERM2.out" 2>&1 &
pid=$!
server=""
for _ in $(seq 100); do server=$(redis_children "$pid"); [[ -n $server ]] && break; sleep 0.1; done
sleep 1
kill -TERM "$pid"; sleep 0.01; kill -TERM -- "-$pid"
wait "$pid"
expect_code "two SIGTERMs 10 ms apart stop the run" 130 $?
expect_interrupted_reports "two SIGTERMs 10 ms apart" "$WORK/out-TERM2"
if [[ -n $server ]] && wait_gone "$server"; then pass "two SIGTERMs: redis-server is gone"; else fail "two SIGTERMs: redis-server ${server:-?} orphaned or never seen"; [[ -n $server ]] && kill -9 "$server"; fi
timeout --preserve-status -s TERM 2 "$LOCKSIM" run "$WORK/long.json" --out "$WORK/out-timeout" >"$WORK/sig-timeout.out" 2>&1
expect_code "timeout -s TERM stops the run" 130 $? "$WORK/sig-timeout.out"
expect_interrupted_reports "timeout -s TERM" "$WORK/out-timeout"

echo
echo "$passed passed, $failed failed"
((failed == 0))
