#!/usr/bin/env bash
# messages_test.sh LOCKSIM SOURCE_DIR: what locksim says, in one voice. Proves: a usage error names
# the argument as the user types it (`audit` without a file: "missing FILE", never an internal
# name), a misspelt flag of every command gets "did you mean" (and --versoin gets --version, not
# "A subcommand is required"), a flag of another command says whose it is, a bad value is worded
# by locksim (a range, a word from a list with its nearest), each exits 2 and points at the
# command's --help; `explore --variant` suggests the nearest variant as `run` does; `check` prints
# plain text to a file or a pipe and ANSI bold (never Markdown's **) to a terminal unless NO_COLOR;
# the progress line (forced by --progress, parsed from stderr) counts `run`'s outcomes done of all
# with the time left and the repetition under --repeat, `explore`'s schedules of --schedules N or
# its time of --time T, `contend`'s points and `audit`'s exploration; --no-progress and a stderr
# that is no terminal show none; `audit --junit` records each property's real time.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-messages-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

source "$(dirname "$0")/lib.sh"
cd "$WORK" || exit 1

# --- usage errors -------------------------------------------------------------------------------
# usage NAME EXIT PATTERN ARGS...: locksim ARGS exits EXIT and says PATTERN on stderr.
usage() {
  local name=$1 code=$2 pattern=$3
  shift 3
  "$LOCKSIM" "$@" >"$WORK/usage.out" 2>"$WORK/usage.err"
  expect_code "$name" "$code" $? "$WORK/usage.err"
  expect_grep "$name: says it" "$pattern" "$WORK/usage.err"
}
usage "audit without a file" 2 \
  "^locksim: audit: missing FILE (the variant file(s) of the lock(s) to audit); see locksim audit --help$" audit
expect_no_grep "audit without a file: no internal name" "variant_file" "$WORK/usage.err"
usage "no command" 2 "^locksim: missing command; the commands are run, check, list, explore, audit, contend" 
expect_no_grep "no command: not CLI11's words" "A subcommand is required" "$WORK/usage.err"
usage "--versoin" 2 '^locksim: unknown flag --versoin (did you mean "--version"?); see locksim --help$' --versoin
expect_no_grep "--versoin: not CLI11's words" "subcommand" "$WORK/usage.err"
# A misspelt flag of every command, with the flag it meant.
while read -r command typo meant; do
  usage "$command $typo" 2 \
    "^locksim: $command: unknown flag ${typo%%=*} (did you mean \"$meant\"?); see locksim $command --help$" \
    $command $typo x
done <<'EOF'
run --varient --variant
explore --varient --variant
audit --junti --junit
contend --no-plot --no-plots
check --variant-fil --variant-file
list --jsn --json
export --fromat --format
report --hepl --help
run --repeet=3 --repeat
EOF
usage "a flag of another command" 2 \
  "^locksim: explore: unknown flag --repeat (a flag of run, not of this command)" \
  explore --variant lua_owner --repeat 3
usage "a flag without its value" 2 "^locksim: run: --variant: needs a value; see locksim run --help$" \
  run x.json --variant
usage "a number out of range" 2 \
  '^locksim: run: --repeat: expected a whole number from 1 to 100000, got "0"; see locksim run --help$' \
  run x.json --repeat 0
usage "a word from a list" 2 \
  '^locksim: run: --clients: expected one of threads, processes, event_loop, got "thread" (did you mean "threads"?)' \
  run x.json --clients thread
usage "an argument too many" 2 '^locksim: check: unexpected argument "b"; see locksim check --help$' \
  check a b
usage "--progress and --no-progress" 2 "^locksim: run: give --[a-z-]*progress or --[a-z-]*progress, not both" \
  run x.json --progress --no-progress
usage "explore: a misspelt variant" 2 \
  '^locksim: --variant lua_ownr: unknown variant (did you mean "lua_owner"?)' \
  explore --variant lua_ownr
usage "run: a misspelt variant" 2 '^locksim: --variant lua_ownr: unknown variant (did you mean "lua_owner"?)' \
  run "$SOURCE/scenarios/stale-release.json" --variant lua_ownr
"$LOCKSIM" audit --help >"$WORK/audit-help" 2>&1
expect_code "audit --help" 0 $? "$WORK/audit-help"
expect_grep "audit --help names the argument as errors do" "^Usage: .* FILE" "$WORK/audit-help"

# --- check: plain text, bold only on a terminal -------------------------------------------------
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --backend sim --seed 1 --out "$WORK/sim" \
  --no-progress >"$WORK/sim.out" 2>&1
expect_code "a run to check" 0 $? "$WORK/sim.out"
"$LOCKSIM" check "$WORK/sim/stale-release" >"$WORK/check.out" 2>&1
expect_code "check" 0 $? "$WORK/check.out"
expect_grep "check names a violation" "set_nx_ex: observed mutex_violation" "$WORK/check.out"
expect_grep "check lists its findings" "^  - " "$WORK/check.out"
expect_no_grep "check writes no Markdown to a file" '\*\*' "$WORK/check.out"
ESC=$(printf '\033')
script -qec "'$LOCKSIM' check '$WORK/sim/stale-release'" /dev/null >"$WORK/check.tty" 2>&1
expect_code "check on a terminal" 0 $? "$WORK/check.tty"
expect_grep "check on a terminal: bold as ANSI bold" "${ESC}\[1m" "$WORK/check.tty"
expect_no_grep "check on a terminal: no Markdown" '\*\*' "$WORK/check.tty"
NO_COLOR=1 script -qec "'$LOCKSIM' check '$WORK/sim/stale-release'" /dev/null >"$WORK/check.nocolor" 2>&1
expect_grep "check under NO_COLOR: the findings" "^  - " "$WORK/check.nocolor"
expect_no_grep "check under NO_COLOR: no escape" "$ESC" "$WORK/check.nocolor"
expect_no_grep "check under NO_COLOR: no Markdown" '\*\*' "$WORK/check.nocolor"

# --- progress ----------------------------------------------------------------------------------
# progress_check FILE PYTHON: runs PYTHON over the "progress: " lines of FILE (in `lines`, the
# prefix dropped); it prints "ok" or what is wrong.
progress_check() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import re, sys
lines = [l.rstrip("\n")[len("progress: "):] for l in open(sys.argv[1]) if l.startswith("progress: ")]
problems = []
exec(sys.argv[2])
print("\n".join(problems) if problems else "ok")
PY
}
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --backend sim --seed 1 --repeat 2 \
  --out "$WORK/sim" --progress >"$WORK/run.out" 2>"$WORK/run.err"
expect_code "run --progress" 0 $? "$WORK/run.err"
total=$(sed -n 's/.*, \([0-9]*\) variant run(s)$/\1/p' "$WORK/run.out")
progress_check "$WORK/run.err" "
total = int('$total' or 0)
counts = [(int(m.group(1)), int(m.group(2))) for m in (re.match(r'(\d+)/(\d+) outcomes', l) for l in lines) if m]
if not counts or len(counts) != len(lines): problems.append('a line without done/total outcomes: %r' % lines)
if total != 8 or any(t != total for _, t in counts): problems.append('the total is not the %s runs: %r' % (total, counts))
done = [d for d, _ in counts]
if done != sorted(done) or not done or done[-1] != total: problems.append('done does not grow to the total: %r' % done)
if not any(re.match(r'[1-7]/8 outcomes, about \d+s left', l) for l in lines): problems.append('no time left: %r' % lines)
for r in (1, 2):
  if not any('stale-release / ' in l and '(repetition %d/2)' % r in l for l in lines): problems.append('no repetition %d/2' % r)
if any(re.search(r'\d+%', l) for l in lines): problems.append('a scripted run shows a percentage: %r' % lines)
" >"$WORK/run.check"
expect_grep "run: outcomes done of all, time left, the repetition" "^ok$" "$WORK/run.check"
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --backend sim --seed 1 --out "$WORK/sim" \
  --no-progress >/dev/null 2>"$WORK/quiet.err"
expect_no_grep "run --no-progress shows none" "progress" "$WORK/quiet.err"
"$LOCKSIM" run "$SOURCE/scenarios/stale-release.json" --backend sim --seed 1 --out "$WORK/sim" \
  >/dev/null 2>"$WORK/file.err"
expect_no_grep "run to a stderr that is no terminal shows none" "progress\|outcomes" "$WORK/file.err"

"$LOCKSIM" explore --variant lua_owner --faults crash --schedules 300 --no-shrink --progress \
  --out "$WORK/explore" >"$WORK/explore.out" 2>"$WORK/explore.err"
progress_check "$WORK/explore.err" "
if not lines or lines[0] != '0/300 schedules': problems.append('first line: %r' % lines[:1])
if any(not re.match(r'\d+/300 schedules(, about \d+s left)?$', l) for l in lines): problems.append('lines: %r' % lines)
" >"$WORK/explore.check"
expect_grep "explore --schedules N: done/N" "^ok$" "$WORK/explore.check"
"$LOCKSIM" explore --variant lua_owner --faults crash --time 3s --no-shrink --progress \
  --out "$WORK/explore" >"$WORK/explore-time.out" 2>"$WORK/explore-time.err"
progress_check "$WORK/explore-time.err" "
if not lines or not re.match(r'0 schedules, 0s of 3s, about 3s left$', lines[0]): problems.append('first line: %r' % lines[:1])
if len(lines) < 2: problems.append('no line while it ran: %r' % lines)
if any(not re.match(r'\d+ schedules, \ds of 3s, about \ds left$', l) for l in lines): problems.append('lines: %r' % lines)
" >"$WORK/explore-time.check"
expect_grep "explore --time T: elapsed of T, time left" "^ok$" "$WORK/explore-time.check"

cat >"$WORK/tiny.json" <<'JSON'
{"name": "tiny", "variants": ["lua_owner"], "strategies": [{"strategy": "poll", "interval_ms": 1}],
 "clients": [1, 2], "keys": 1, "work_ms": 1, "warmup_ms": 50, "duration_ms": 200}
JSON
"$LOCKSIM" contend "$WORK/tiny.json" --out "$WORK/contend" --seed 3 --rtt-samples 20 --no-plots \
  --progress >"$WORK/contend.out" 2>"$WORK/contend.err"
expect_code "contend --progress" 0 $? "$WORK/contend.err"
progress_check "$WORK/contend.err" "
if not any(re.match(r'\[1/2\] tiny lua_owner \S+ c=1 0%$', l) for l in lines): problems.append('no first point: %r' % lines)
if not any(re.match(r'\[2/2\] tiny lua_owner \S+ c=2 \d+%, about \d+s left$', l) for l in lines): problems.append('no time left: %r' % lines)
" >"$WORK/contend.check"
expect_grep "contend: points done of all, time left" "^ok$" "$WORK/contend.check"

# audit: two property scenarios, a correct lock, a short exploration; its JUnit times are real.
mkdir -p "$WORK/props"
cp "$SOURCE/scenarios/stale-release.json" "$SOURCE/scenarios/release-frees-lock.json" "$WORK/props/"
cat >"$WORK/good.json" <<'JSON'
{"name": "good",
 "acquire": {"script": "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0", "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]},
 "release": {"script": "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", "keys": ["{key}"], "args": ["{token}"]}}
JSON
"$LOCKSIM" audit "$WORK/good.json" --scenarios "$WORK/props" --explore 200 --seed 1 --out "$WORK/audit" \
  --progress --junit "$WORK/audit.xml" >"$WORK/audit.out" 2>"$WORK/audit.err"
expect_code "audit --progress" 0 $? "$WORK/audit.out"
progress_check "$WORK/audit.err" "
if not any(l == 'exploring good on the simulator: 0/200 schedules' for l in lines): problems.append('no exploration: %r' % lines)
if not any(re.match(r'1/4 outcomes, about \d+s left', l) for l in lines): problems.append('no runs: %r' % lines)
" >"$WORK/audit.check"
expect_grep "audit: its exploration and its runs" "^ok$" "$WORK/audit.check"
/usr/bin/python3 - "$WORK/audit.xml" >"$WORK/audit-times" <<'PY'
import sys, xml.etree.ElementTree as E
cases = {c.get("name"): float(c.get("time")) for c in E.parse(sys.argv[1]).getroot().iter("testcase")}
wanted = ["explored: no worse than the reference", "refuses a stale release", "the holder's release frees the lock"]
bad = [(n, cases.get(n)) for n in wanted if not cases.get(n, 0) > 0]
print("times ok" if not bad else "no time: %r of %r" % (bad, cases))
PY
expect_grep "audit --junit: each decided property has the time of its runs" "^times ok$" "$WORK/audit-times"

finish
