#!/usr/bin/env bash
# readme_commands_test.sh LOCKSIM SOURCE_DIR: every command the README and the docs print works as
# printed, and so do the commands locksim's own hints print. Proves, for each command:
#
# - Which: README.md's "Using it" block, and every ```sh block of docs/*.md, each command whose
#   program is locksim (build/locksim, ./build/locksim, locksim; after VAR=value prefixes),
#   `/usr/bin/python3 scripts/...` or `cmp`, a trailing `\` joined with the next line and a
#   trailing `# comment` dropped. Other commands of those blocks are not run and are listed
#   (./scripts/sanitize and the benchmarks of docs/testing.md: the test suite and benchmarks
#   themselves). Blocks fenced ```text (the batch-engine templates of docs/simulator.md, which
#   need shell variables and several machines) are not commands.
# - Where: in a scratch directory with scenarios/, examples/, scripts/ and adapters/ linked from
#   the source, build/locksim linked to LOCKSIM and `locksim` on PATH, so relative paths mean what
#   they mean in a checkout; /tmp/ in a command becomes the scratch directory's tmp/.
# - --redis URLs go to a private redis-server this test starts on a free port, with the password,
#   database and ACL user each URL names (the URL's port is replaced by the free one).
# - What runs in full: everything but what takes minutes. `run` of a whole directory on a real
#   server (the catalogue: 2.5 min; with --repeat or --library: up to 35 min), `run --repeat N`
#   (N > 1) and every `contend` (measured studies of minutes) run with `--dry-run` appended: the
#   files, variants, libraries, user scripts and --redis (reached with its credentials) are
#   resolved exactly as the real command would, what would run and be skipped is printed, and
#   nothing runs. Each such command says "(dry run)" below. An `explore --time N` of more than 2 s
#   searches 2 s ("(searching 2 s)": explore_search proves what a 10 s search finds). The
#   contention plot then draws the
#   checked-in study of tests/scripts/fixtures/contention when no study ran.
# - Exit codes: every command must exit 0, except `locksim explore`, whose exit 1 means "findings"
#   (docs/simulator.md): it must exit 0 or 1. A command that exits otherwise fails the test, with
#   its output. A `Report:` path a run prints must exist.
# - Hints: `explore` of a user lock (--variant-file) with a finding prints the `locksim run` of its
#   minimal scenario on the simulator and on a real server, and a replayed seed prints the one of
#   its scenario; each is run as printed: the simulator's (same seed, same schedule) and the
#   replay's (which expects "any") must exit 0, the real server's 0 or 1 (1: the race did not
#   happen on this run; 2 or 3 would be the hint that does not work).
#
# Library commands need the adapters (./scripts/test installs them, as for library_adapters).
set -uo pipefail
LOCKSIM=$(realpath "$1")
SOURCE=$(realpath "$2")
WORK=$(mktemp -d /tmp/locksim-readme-test.XXXXXX)
REDIS_PIDS=()
cleanup() {
  for pid in "${REDIS_PIDS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

source "$(dirname "$0")/lib.sh"

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The scratch checkout.
mkdir -p "$WORK/build" "$WORK/bin" "$WORK/tmp"
for dir in scenarios examples scripts adapters; do ln -s "$SOURCE/$dir" "$WORK/$dir"; done
ln -s "$LOCKSIM" "$WORK/build/locksim"
ln -s "$LOCKSIM" "$WORK/bin/locksim"
export PATH="$WORK/bin:$PATH"

# The commands, one per line as FILE:LINE<TAB>COMMAND; the skipped ones on stderr.
/usr/bin/python3 - "$SOURCE" >"$WORK/commands.tsv" 2>"$WORK/not-run.txt" <<'PY'
import glob, os, re, sys
source = sys.argv[1]
PROGRAM = re.compile(r"^(?:[A-Z_]+=\S+\s+)*(?:(?:\./build/locksim|build/locksim|locksim|cmp)"
                     r"(?:\s|$)|/usr/bin/python3 scripts/)")

def blocks(path, only_section=None):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    section, fence, start = None, None, 0
    for number, line in enumerate(lines, 1):
        if fence is None and line.startswith("#"):
            section = line.lstrip("#").strip()
        if line.startswith("```"):
            if fence is None:
                fence, start, body = line[3:].strip(), number, []
            else:
                if fence == "sh" and (only_section is None or section == only_section):
                    yield start, body
                fence = None
            continue
        if fence is not None:
            body.append((number, line))

def commands(path, only_section=None):
    rel = os.path.relpath(path, source)
    for _, body in blocks(path, only_section):
        pending, first = "", 0
        for number, line in body:
            if not pending:
                first = number
            text = line.rstrip()
            if text.endswith("\\"):
                pending += text[:-1].strip() + " "
                continue
            text = (pending + text.strip()).strip()
            pending = ""
            text = re.sub(r"\s+#\s.*$", "", text).strip()
            if not text or text.startswith("#"):
                continue
            if PROGRAM.match(text):
                print(f"{rel}:{first}\t{text}")
            else:
                print(f"{rel}:{first}\t{text}", file=sys.stderr)

commands(os.path.join(source, "README.md"), "Using it")
for path in sorted(glob.glob(os.path.join(source, "docs", "*.md"))):
    commands(path)
PY
count=$(wc -l <"$WORK/commands.tsv")
if [[ $count -ge 20 ]]; then pass "$count printed commands found"; else fail "only $count printed commands found"; cat "$WORK/commands.tsv"; fi
expect_grep "the README's Using it block is read" "^README.md:.*build/locksim run scenarios/ --redis" "$WORK/commands.tsv"
echo "not run (not locksim, its plot scripts or cmp):"
sed 's/^/  /' "$WORK/not-run.txt"

# One private redis-server for every --redis URL: its default user's password, and each ACL
# user a URL names with the password it gives.
redis_port=$(free_port)
redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$WORK" \
  >"$WORK/redis.log" 2>&1 &
REDIS_PIDS+=($!)
for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
admin_password=""
admin() {
  if [[ -n $admin_password ]]; then
    redis-cli -p "$redis_port" -a "$admin_password" --no-auth-warning "$@"
  else
    redis-cli -p "$redis_port" "$@"
  fi
}
# map_redis COMMAND: sets `mapped` to the command with each redis:// URL's host and port replaced
# by the private server's, after setting up on it the password and ACL user the URL names.
map_redis() {
  local url user password
  while read -r url; do
    [[ -z $url ]] && continue
    user=$(sed -nE 's#^redis://([^:@/]*):([^@]*)@.*#\1#p' <<<"$url")
    password=$(sed -nE 's#^redis://([^:@/]*):([^@]*)@.*#\2#p' <<<"$url")
    if [[ -n $password && -z $user ]]; then
      admin config set requirepass "$password" >/dev/null
      admin_password=$password
    elif [[ -n $user ]]; then
      admin acl setuser "$user" on ">$password" '~locksim:*' '&*' '+@all' >/dev/null
    fi
  done < <(grep -oE 'redis://[^ ]+' <<<"$1")
  mapped=$(sed -E "s#(redis://([^@ /]*@)?)[^:@/ ]+:[0-9]+#\1127.0.0.1:$redis_port#g" <<<"$1")
}

# heavy COMMAND: whether it takes minutes (see the header): then it runs with --dry-run.
heavy() {
  local command=$1
  [[ $command == *--dry-run* ]] && return 1
  [[ $command =~ locksim\ contend ]] && return 0
  [[ $command =~ locksim\ run ]] || return 1
  if [[ $command =~ --repeat\ ([0-9]+) ]] && ((BASH_REMATCH[1] > 1)); then return 0; fi
  [[ $command == *--library* ]] && return 0
  [[ $command == *"--backend sim"* ]] && return 1
  # A directory among the arguments (scenarios, scenarios/, scenarios/contention/).
  local word
  for word in $command; do
    [[ $word != -* && -d $WORK/$word ]] && return 0
  done
  return 1
}

# run_printed WHERE COMMAND [ALLOWED_CODES]: runs one command as printed (mapped as the header
# says) in the scratch checkout and checks its exit code.
n=0
run_printed() {
  local where=$1 command=$2 allowed=${3:-0} how=""
  n=$((n + 1))
  command=${command//\/tmp\//$WORK/tmp/}
  if [[ $command == *redis://* ]]; then map_redis "$command"; command=$mapped; fi
  if heavy "$command"; then command="$command --dry-run"; how=" (dry run)"; fi
  # An exploration bounded by time searches 2 s here: what it finds in 10 s is explore_search's
  # to prove; that the command runs as printed is this test's.
  if [[ $command =~ locksim\ explore && $command =~ --time\ ([0-9]+)s ]] && ((BASH_REMATCH[1] > 2)); then
    command=${command/--time ${BASH_REMATCH[1]}s/--time 2s}
    how=" (searching 2 s)"
  fi
  if [[ $command == *plot_contention.py* && ! -e $WORK/reports/contention/latest ]]; then
    mkdir -p "$WORK/reports/contention/fixture"
    cp "$SOURCE"/tests/scripts/fixtures/contention/* "$WORK/reports/contention/fixture/"
    ln -sfn fixture "$WORK/reports/contention/latest"
    how=" (on the checked-in study: no study ran)"
  fi
  local out="$WORK/cmd-$n.out" code started=$SECONDS
  (cd "$WORK" && timeout -s TERM 600 bash -c "$command" </dev/null >"$out" 2>&1)
  code=$?
  if [[ " $allowed " == *" $code "* ]]; then
    pass "$where: $command$how (exit $code, $((SECONDS - started)) s)"
  else
    fail "$where: $command$how: exit $code, expected ${allowed// / or }"
    sed 's/^/    /' "$out" | tail -n 40
  fi
  local report
  report=$(sed -n 's/^Report: //p' "$out" | tail -1)
  if [[ -n $report ]]; then
    if [[ -f $WORK/$report || -f $report ]]; then pass "$where: its Report: line names a file"; else fail "$where: Report: $report does not exist"; fi
  fi
  last_out=$out
}

while IFS=$'\t' read -r where command; do
  if [[ $command =~ locksim\ explore ]]; then
    run_printed "$where" "$command" "0 1"
  else
    run_printed "$where" "$command"
  fi
done <"$WORK/commands.tsv"

# --- locksim's own hints --------------------------------------------------------------------
# A user lock with a blind release (it deletes whatever holds the key) judged like lua_owner:
# explore finds its stale release, shrinks it and prints how to run the minimal scenario.
SET_NX="if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0"
cat >"$WORK/blind_release.json" <<JSON
{"name": "blind_release", "like": "lua_owner",
 "acquire": {"script": "$SET_NX", "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]},
 "release": {"script": "return redis.call('DEL', KEYS[1])", "keys": ["{key}"], "args": ["{token}"]}}
JSON
run_printed "hint setup" "locksim explore --variant-file blind_release.json --variant blind_release --out explored --no-progress" "1"
explored=$last_out
grep -oE '\(locksim run [^)]*--backend sim --seed [0-9]+\)' "$explored" | head -1 | tr -d '()' >"$WORK/sim-hint"
grep -E '^  Written: ' "$explored" | grep -oE '\(locksim run [^)]*\)' | head -1 | tr -d '()' >"$WORK/real-hint"
for hint in sim-hint real-hint; do
  if [[ -s $WORK/$hint && $(cat "$WORK/$hint") == *"--variant-file blind_release.json"* ]]; then
    pass "explore's $hint names the lock's --variant-file: $(cat "$WORK/$hint")"
  else
    fail "explore printed no $hint with --variant-file"; sed 's/^/    /' "$explored" | tail -n 30
  fi
done
[[ -s $WORK/sim-hint ]] && run_printed "explore's hint (simulator)" "$(cat "$WORK/sim-hint")"
[[ -s $WORK/real-hint ]] && run_printed "explore's hint (real server)" "$(cat "$WORK/real-hint")" "0 1"
# A replayed seed writes its scenario and says how to run it on a real server.
run_printed "hint setup" "locksim explore --variant-file blind_release.json --variant blind_release --seed 3 --out replayed" "0 1"
grep -oE 'run it on a real server: locksim run [^)]*' "$last_out" | sed 's/^run it on a real server: //' >"$WORK/replay-hint"
if [[ -s $WORK/replay-hint ]]; then
  run_printed "explore --seed's hint" "$(cat "$WORK/replay-hint")"
else
  fail "explore --seed printed no locksim run hint"; sed 's/^/    /' "$last_out"
fi

finish
