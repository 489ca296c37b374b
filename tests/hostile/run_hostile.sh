#!/usr/bin/env bash
# run_hostile.sh LOCKSIM SOURCE_DIR: every hostile input is refused cleanly.
#
# Runs each case of tests/hostile/cases.tsv (checked-in scenario files, --variant-file files and
# run directories with a hostile history.jsonl for `locksim check`; and user locks that load but
# misbehave at run time, tests/hostile/locks/, which must not pass: exit 1, verdict error or
# unknown, see run_lock_case) and the cases generated here
# (a million levels of nesting in 6 MB, a 50 MB description, a file over the size cap, a FIFO,
# /dev/zero, a socket, a directory named x.json, symlink loops, every numeric field of the valid
# bases given huge, negative, quoted, 1e400, -1e400, 1e-400 and NaN-like values, duplicate keys in
# every object, every placeholder left unclosed, --seed / --out / --redis edge cases, output
# flags (--json, --junit, export --out, --out) aimed at a directory, /proc/x or a directory that
# does not exist, --seeds of the whole range, and explore --merge summaries whose numbers cannot
# be trusted), each
# under a memory limit (ulimit -v) and a time limit (timeout), and asserts:
#   - exit code 2 (not a crash, not a kill by the memory or time limit);
#   - stderr names the file (or, for a flag, the flag);
#   - stderr holds the case's fragment: the JSON path ($...) or the "line N, column C" of what is
#     wrong, or for a file that cannot be read at all the reason (a FIFO, too large...);
#   - stderr is short (a hostile value is not echoed back in full);
#   - nothing was written: no report directory, and a checked run directory is unchanged.
# Bad input is refused before Redis starts, so no redis-server is needed. Prints one line per
# case and a summary; exits non-zero if any case fails.
set -uo pipefail
LOCKSIM=$(readlink -f "$1")
SOURCE=$(readlink -f "$2")
HOSTILE=$SOURCE/tests/hostile
BASE=$HOSTILE/valid
WORK=$(mktemp -d /tmp/locksim-hostile.XXXXXX)
SOCKET_PID=""
cleanup() {
  [[ -n $SOCKET_PID ]] && kill "$SOCKET_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

MEMORY_LIMIT_KB=$((1024 * 1024))  # 1 GiB of address space
TIME_LIMIT_S=20
MAX_STDERR_BYTES=4096
# Sanitizer runtimes reserve terabytes of address space: no ulimit -v for them.
if grep -qa -e __asan_init -e __tsan_init "$LOCKSIM"; then
  MEMORY_LIMIT_KB=unlimited
  echo "note: sanitizer build, running without the memory limit"
fi

passed=0
failed=0
failures=()

# run_case NAME NAMED FRAGMENT WATCH ARGS...: runs locksim ARGS under the limits and checks the
# assertions above. NAMED is the file or flag stderr must name; WATCH is a directory whose
# contents must not change, or "". Every `run` gets --out under $WORK/reports/NAME unless the case
# sets its own, and that directory must not exist afterwards.
run_case() {
  local name=$1 named=$2 fragment=$3 watch=$4
  shift 4
  local reports=$WORK/reports/$name
  local args=("$@")
  if [[ ${args[0]} == run ]]; then
    local arg has_out=0
    for arg in "${args[@]}"; do [[ $arg == --out ]] && has_out=1; done
    ((has_out)) || args+=(--out "$reports")
  fi
  local before=""
  [[ -n $watch ]] && before=$(find "$watch" -printf '%p %s %T@\n' 2>/dev/null | sort)
  local started=$SECONDS
  (
    ulimit -v "$MEMORY_LIMIT_KB" || exit 99
    exec timeout -k 5 "$TIME_LIMIT_S" "$LOCKSIM" "${args[@]}"
  ) </dev/null >"$WORK/stdout" 2>"$WORK/stderr"
  local code=$?
  local elapsed=$((SECONDS - started))
  local problems=()
  case $code in
    2) ;;
    124 | 137) problems+=("timed out after ${TIME_LIMIT_S} s (exit $code)") ;;
    134) problems+=("aborted (exit 134): $(grep -m1 -e what -e terminate "$WORK/stderr")") ;;
    99) problems+=("could not set the memory limit") ;;
    *) problems+=("exit $code, expected 2") ;;
  esac
  # Read in the shell itself: 791 cases, and a grep or stat per check was most of the time.
  local stderr_text="" size
  IFS= read -r -d '' stderr_text <"$WORK/stderr"
  [[ $stderr_text == *"$named"* ]] || problems+=("stderr does not name $named")
  [[ $stderr_text == *"$fragment"* ]] || problems+=("stderr lacks: $fragment")
  size=$(wc -c <"$WORK/stderr")
  ((size <= MAX_STDERR_BYTES)) || problems+=("stderr is $size bytes (at most $MAX_STDERR_BYTES)")
  [[ -e $reports ]] && problems+=("a report directory was created: $reports")
  if [[ -n $watch && $(find "$watch" -printf '%p %s %T@\n' 2>/dev/null | sort) != "$before" ]]; then
    problems+=("$watch changed")
  fi
  if ((${#problems[@]} == 0)); then
    passed=$((passed + 1))
    local first=${stderr_text:0:160}
    echo "ok   $name (${elapsed} s): ${first%%$'\n'*}"
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "FAIL $name: $(IFS=';'; echo "${problems[*]}")"
    head -c 600 "$WORK/stderr" | sed 's/^/       stderr: /'
  fi
}

# The bases must be valid, or every case below could pass for the wrong reason.
if "$LOCKSIM" list "$BASE/scripted.json" "$BASE/workload.json" "$BASE/sweep.json" \
  --variant-file "$BASE/variant.json" >"$WORK/list" 2>&1; then
  echo "ok   the valid bases load"
else
  echo "FAIL the valid bases do not load:"
  sed 's/^/       /' "$WORK/list"
  exit 1
fi

# run_lock_case NAME LOCK FRAGMENT: a user lock that loads but misbehaves at run time, run in
# scenarios/unsaved-token-release.json (whose reference, lua_owner, is ok there) on the simulator
# under the same limits: it must not pass. Asserts exit 1 (a run, not as expected: not a crash,
# not bad input), the lock's row says NO, its results.json verdict is error or unknown (never
# ok), and its summary.md says FRAGMENT (what went wrong, in the findings' words).
run_lock_case() {
  local name=$1 lock=$2 fragment=$3 variant
  variant=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["name"])' "$lock")
  local reports=$WORK/reports/$name
  local started=$SECONDS
  (
    ulimit -v "$MEMORY_LIMIT_KB" || exit 99
    exec timeout -k 5 "$TIME_LIMIT_S" "$LOCKSIM" run "$SOURCE/scenarios/unsaved-token-release.json" \
      --variant-file "$lock" --variant "$variant" --backend sim --seed 1 --out "$reports" --no-progress
  ) </dev/null >"$WORK/stdout" 2>"$WORK/stderr"
  local code=$?
  local elapsed=$((SECONDS - started))
  local problems=() verdict summary
  [[ $code == 1 ]] || problems+=("exit $code, expected 1 (the run does not pass)")
  grep -q "^unsaved-token-release  *$variant .* NO\$" "$WORK/stdout" || problems+=("no NO row for $variant")
  verdict=$(/usr/bin/python3 -c \
    'import json, sys; print(json.load(open(sys.argv[1]))["observed"]["verdict"])' \
    "$reports"/unsaved-token-release/latest/"$variant"/results.json 2>/dev/null)
  [[ $verdict == error || $verdict == unknown ]] || problems+=("verdict '$verdict', expected error or unknown")
  summary=$(cat "$reports"/unsaved-token-release/latest/summary.md 2>/dev/null)
  [[ $summary == *"$fragment"* ]] || problems+=("summary.md lacks: $fragment")
  rm -rf "$reports"
  if ((${#problems[@]} == 0)); then
    passed=$((passed + 1))
    echo "ok   $name (${elapsed} s): $variant is $verdict, not as expected"
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "FAIL $name: $(IFS=';'; echo "${problems[*]}")"
    head -c 600 "$WORK/stdout" | sed 's/^/       stdout: /'
    head -c 600 "$WORK/stderr" | sed 's/^/       stderr: /'
  fi
}

# --- the checked-in corpus ---------------------------------------------------------------------
checked_in=0
while IFS=$'\t' read -r name command input fragment; do
  [[ -z $name || $name == \#* ]] && continue
  checked_in=$((checked_in + 1))
  path=$HOSTILE/$input
  case $command in
    run) run_case "$name" "$path" "$fragment" "" run "$path" ;;
    variant) run_case "variant-$name" "$path" "$fragment" "" run "$BASE/scripted.json" \
      --variant-file "$path" ;;
    check) run_case "$name" "$path" "$fragment" "$path" check "$path" ;;
    lock) run_lock_case "$name" "$path" "$fragment" ;;
    *) echo "FAIL $name: unknown command '$command' in cases.tsv"; failed=$((failed + 1)) ;;
  esac
done <"$HOSTILE/cases.tsv"

# --- generated: what cannot or should not be checked in ----------------------------------------
G=$WORK/generated
mkdir -p "$G"

# A million levels of nesting in 6 MB (the old loader copied a path per level: killed), one just
# under the size cap (refused at level 65, not built), and the same for a variant file and a
# history line.
/usr/bin/python3 - "$G" <<'PY'
import sys
g = sys.argv[1]
open(g + "/deep-1m.json", "w").write('{"a":' * 1000000 + "1" + "}" * 1000000)
open(g + "/deep-500k.json", "w").write("[" * 500000 + "]" * 500000)
PY
run_case gen-nesting-1m-levels-6mb "$G/deep-1m.json" "6000001 bytes is larger than the limit" "" \
  run "$G/deep-1m.json"
run_case gen-nesting-500k-levels "$G/deep-500k.json" "$(printf '[0]%.0s' {1..63}): nested more than 64 levels" "" \
  run "$G/deep-500k.json"
run_case gen-variant-nesting-1m-levels "$G/deep-1m.json" "is larger than the limit for a variant file" "" \
  run "$BASE/scripted.json" --variant-file "$G/deep-1m.json"
run_case gen-variant-nesting-500k-levels "$G/deep-500k.json" "nested more than 64 levels" "" \
  run "$BASE/scripted.json" --variant-file "$G/deep-500k.json"
mkdir -p "$G/run-deep/set_nx_ex"
cp "$HOSTILE/runs/history-1e400/scenario.json" "$G/run-deep/"
{ head -2 "$HOSTILE/runs/history-1e400/set_nx_ex/history.jsonl"; cat "$G/deep-1m.json"; echo; } \
  >"$G/run-deep/set_nx_ex/history.jsonl"
run_case gen-history-line-1m-levels "$G/run-deep" "history.jsonl:3: line longer than 1048576 bytes" \
  "$G/run-deep" check "$G/run-deep"

# A 50 MB description (it was copied into two report files), and a file one byte over the cap.
/usr/bin/python3 - "$BASE/scripted.json" "$G" <<'PY'
import json, sys
base, g = sys.argv[1], sys.argv[2]
doc = json.load(open(base))
doc["description"] = "d" * (50 * 1024 * 1024)
json.dump(doc, open(g + "/description-50mb.json", "w"))
text = json.dumps(json.load(open(base)))
open(g + "/over-cap.json", "w").write(text + " " * (1024 * 1024 + 1 - len(text)))
PY
run_case gen-description-50mb "$G/description-50mb.json" "bytes is larger than the limit for a scenario file (1048576 bytes)" "" \
  run "$G/description-50mb.json"
run_case gen-one-byte-over-size-cap "$G/over-cap.json" "1048577 bytes is larger than the limit" "" \
  run "$G/over-cap.json"

# Files that are not regular files: refused at once (a FIFO used to block in open()).
mkfifo "$G/fifo.json"
run_case gen-fifo-scenario "$G/fifo.json" "not a regular file (a FIFO)" "" run "$G/fifo.json"
run_case gen-fifo-variant-file "$G/fifo.json" "not a regular file (a FIFO)" "" \
  run "$BASE/scripted.json" --variant-file "$G/fifo.json"
mkdir -p "$G/with-fifo"
cp "$BASE/scripted.json" "$G/with-fifo/a.json"
mkfifo "$G/with-fifo/b.json"
run_case gen-fifo-in-scenario-directory "$G/with-fifo/b.json" "not a regular file (a FIFO)" "" \
  run "$G/with-fifo"
mkdir -p "$G/run-fifo/set_nx_ex"
cp "$HOSTILE/runs/history-1e400/scenario.json" "$G/run-fifo/"
mkfifo "$G/run-fifo/set_nx_ex/history.jsonl"
run_case gen-fifo-history "$G/run-fifo" "history.jsonl: not a regular file (a FIFO)" "$G/run-fifo" \
  check "$G/run-fifo"
run_case gen-dev-zero-scenario /dev/zero "not a regular file (a character device)" "" run /dev/zero
run_case gen-dev-zero-variant-file /dev/zero "not a regular file (a character device)" "" \
  run "$BASE/scripted.json" --variant-file /dev/zero
mkdir -p "$G/run-zero/set_nx_ex"
cp "$HOSTILE/runs/history-1e400/scenario.json" "$G/run-zero/"
ln -s /dev/zero "$G/run-zero/set_nx_ex/history.jsonl"
run_case gen-dev-zero-history "$G/run-zero" "history.jsonl: not a regular file (a character device)" \
  "$G/run-zero" check "$G/run-zero"
mkdir -p "$G/run-zero-scenario/set_nx_ex"
cp "$HOSTILE/runs/history-1e400/set_nx_ex/history.jsonl" "$G/run-zero-scenario/set_nx_ex/"
ln -s /dev/zero "$G/run-zero-scenario/scenario.json"
run_case gen-dev-zero-run-scenario "$G/run-zero-scenario" "scenario.json: not a regular file (a character device)" \
  "$G/run-zero-scenario" check "$G/run-zero-scenario"
/usr/bin/python3 - "$G/socket.json" <<'PY' &
import signal, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen()
signal.pause()
PY
SOCKET_PID=$!
for _ in $(seq 50); do [[ -S $G/socket.json ]] && break; sleep 0.1; done
run_case gen-socket-scenario "$G/socket.json" "not a regular file (a socket)" "" run "$G/socket.json"
mkdir -p "$G/x.json"
run_case gen-directory-named-x-json "$G/x.json" "no *.json scenario files" "" run "$G/x.json"
run_case gen-directory-as-variant-file "$G/x.json" "not a regular file (a directory)" "" \
  run "$BASE/scripted.json" --variant-file "$G/x.json"
mkdir -p "$G/run-dir-history/set_nx_ex/history.jsonl"
cp "$HOSTILE/runs/history-1e400/scenario.json" "$G/run-dir-history/"
run_case gen-directory-as-history "$G/run-dir-history" "history.jsonl: not a regular file (a directory)" \
  "$G/run-dir-history" check "$G/run-dir-history"
ln -s loop.json "$G/loop.json"
run_case gen-symlink-loop-scenario "$G/loop.json" "cannot open (Too many levels of symbolic links)" "" \
  run "$G/loop.json"
run_case gen-symlink-loop-variant-file "$G/loop.json" "cannot open (Too many levels of symbolic links)" "" \
  run "$BASE/scripted.json" --variant-file "$G/loop.json"
mkdir -p "$G/with-loop"
cp "$BASE/scripted.json" "$G/with-loop/a.json"
ln -s b.json "$G/with-loop/b.json"
run_case gen-symlink-loop-in-scenario-directory "$G/with-loop/b.json" "Too many levels of symbolic links" "" \
  run "$G/with-loop"
run_case gen-missing-file "$G/absent.json" "cannot open (No such file or directory)" "" \
  run "$G/absent.json"
: >"$G/empty.json"
run_case gen-empty-file "$G/empty.json" "line 1, column 1: invalid JSON: no value" "" run "$G/empty.json"
printf '{"name": "x\xff\xfe"}' >"$G/invalid-utf8.json"
run_case gen-invalid-utf8 "$G/invalid-utf8.json" "line 1, column 12: invalid JSON" "" run "$G/invalid-utf8.json"
printf '{"name":\0"x"}' >"$G/nul.json"
run_case gen-nul-byte "$G/nul.json" "line 1, column 9: invalid JSON: a NUL byte" "" run "$G/nul.json"
# A binary file (NUL first) is named as one, not as "unexpected end of input".
printf '\0\0\0\x01{"name": "x"}' >"$G/nul-first.json"
run_case gen-nul-first-byte "$G/nul-first.json" "line 1, column 1: invalid JSON: a NUL byte (\\x00), which a JSON text never contains (is this a binary file?)" "" run "$G/nul-first.json"

# Every numeric field of the valid bases, and every object's first key given twice, and every
# KEYS/ARGV template of the variant left with an unclosed placeholder: the generator writes one
# file per case and a line "name<TAB>kind<TAB>file<TAB>fragment" for each.
/usr/bin/python3 - "$BASE" "$G" >"$G/matrix.tsv" <<'PY'
import json, os, re, sys
base_dir, out = sys.argv[1], sys.argv[2]

def path_text(path):
    """The JSON path as locksim writes it: $.a[0]["not an identifier"]."""
    text = "$"
    for p in path:
        if isinstance(p, int):
            text += "[%d]" % p
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p):
            text += "." + p
        else:
            text += "[" + json.dumps(p) + "]"
    return text

def slug(field):
    return re.sub(r"[^A-Za-z0-9_]+", "-", field[2:]).strip("-")

def leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from leaves(v, path + (i,))
    else:
        yield path, node

def objects(node, path=()):
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from objects(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from objects(v, path + (i,))

def dump(node, dup=None, path=(), raw=None):
    """JSON text of node; the object at `dup` repeats its first key, the leaf at raw[0] is raw[1]."""
    if raw is not None and path == raw[0]:
        return raw[1]
    if isinstance(node, dict):
        items = ['%s: %s' % (json.dumps(k), dump(v, dup, path + (k,), raw)) for k, v in node.items()]
        if dup == path:
            items.insert(1, items[0])
        return "{\n" + ",\n".join(items) + "}"
    if isinstance(node, list):
        return "[" + ", ".join(dump(v, dup, path + (i,), raw) for i, v in enumerate(node)) + "]"
    return json.dumps(node)

# Values that no numeric field accepts; the position kind says what the message must name.
VALUES = [("uint64-max", "18446744073709551615", "path"), ("beyond-uint64", "99999999999999999999999", "path"),
          ("below-int64", "-9223372036854775809", "path"), ("negative", "-1", "path"),
          ("string", '"5"', "path"), ("bool", "true", "path"), ("1e400", "1e400", "line"),
          ("minus-1e400", "-1e400", "line"), ("1e-400", "1e-400", "path"), ("nan", "NaN", "line"),
          ("infinity", "Infinity", "line"), ("minus-infinity", "-Infinity", "line")]
for base in ("scripted", "workload", "sweep"):
    doc = json.load(open(os.path.join(base_dir, base + ".json")))
    for path, value in leaves(doc):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        field = path_text(path)
        for label, raw, kind in VALUES:
            name = "gen-%s-%s-%s" % (base, slug(field), label)
            text = dump(doc, raw=(path, raw))
            file = os.path.join(out, name + ".json")
            open(file, "w").write(text)
            if kind == "line":
                offset = text.index(raw)
                line = text.count("\n", 0, offset) + 1
                fragment = "line %d, column" % line
            else:
                fragment = field + ": "
            print("\t".join((name, "run", file, fragment)))
    for path, node in objects(doc):
        if not node:
            continue
        key = next(iter(node))
        field = path_text(path + (key,))
        name = "gen-%s-duplicate-%s" % (base, slug(field))
        file = os.path.join(out, name + ".json")
        open(file, "w").write(dump(doc, dup=path))
        print("\t".join((name, "run", file, field + ": duplicate key")))

variant = json.load(open(os.path.join(base_dir, "variant.json")))
for path, value in leaves(variant):
    if len(path) >= 2 and path[1] in ("keys", "args"):
        field = path_text(path)
        for label, text in (("unclosed", value[:-1]), ("unclosed-prefix", "x" + value[:-1]), ("open-brace-only", "{")):
            name = "gen-variant-%s-%s" % (slug(field), label)
            file = os.path.join(out, name + ".json")
            open(file, "w").write(dump(variant, raw=(path, json.dumps(text))))
            print("\t".join((name, "variant", file, field + ": unclosed placeholder")))
for path, node in objects(variant):
    if not node:
        continue
    key = next(iter(node))
    field = path_text(path + (key,))
    name = "gen-variant-duplicate-%s" % slug(field)
    file = os.path.join(out, name + ".json")
    open(file, "w").write(dump(variant, dup=path))
    print("\t".join((name, "variant", file, field + ": duplicate key")))
PY
generated_matrix=0
while IFS=$'\t' read -r name command file fragment; do
  generated_matrix=$((generated_matrix + 1))
  if [[ $command == variant ]]; then
    run_case "$name" "$file" "$fragment" "" run "$BASE/scripted.json" --variant-file "$file"
  else
    run_case "$name" "$file" "$fragment" "" run "$file"
  fi
done <"$G/matrix.tsv"

# Flags: refused before anything runs, naming the flag.
seed_message="--seed: expected an integer from 0 to 18446744073709551615, got"
for seed in -1 18446744073709551616 99999999999999999999999 "" 1.5 0x10 " 7" "+7" "7 " abc 1e3; do
  run_case "gen-seed-'$seed'" "--seed" "$seed_message \"$seed\"" "" run "$BASE/scripted.json" --seed "$seed"
done
run_case "gen-seed-equals-minus-1" "--seed" "$seed_message \"-1\"" "" run "$BASE/scripted.json" --seed=-1
touch "$G/a-file"
run_case "gen-out-empty" "--out" "--out: expected a report directory, got \"\"" "" \
  run "$BASE/scripted.json" --out ""
run_case "gen-out-dev-null" "--out" "\"/dev/null\" exists and is not a directory" "" \
  run "$BASE/scripted.json" --out /dev/null
run_case "gen-out-regular-file" "--out" "exists and is not a directory" "" \
  run "$BASE/scripted.json" --out "$G/a-file"
run_case "gen-out-below-a-file" "--out" "\"$G/a-file\" is not a directory" "" \
  run "$BASE/scripted.json" --out "$G/a-file/reports"
run_case "gen-redis-empty" "--redis" "--redis: expected a URL" "" run "$BASE/scripted.json" --redis ""
run_case "gen-repeat-zero" "--repeat" "--repeat" "" run "$BASE/scripted.json" --repeat 0
run_case "gen-repeat-huge" "--repeat" "--repeat" "" run "$BASE/scripted.json" --repeat 99999999999999999999

# Output files and directories: refused before any work (exit 2, naming the flag), and nothing is
# left beside them (a directory given to --json used to abort after the work and leave DIR.tmp).
mkdir -p "$G/outputs/dir.json"
for target in "$G/outputs/dir.json" /proc/x /no/such/x.json; do
  label=$(basename "$target")
  run_case "gen-explore-json-$label" "--json" "\"$target\"" "$G/outputs" \
    explore --variant set_nx_ex --schedules 20 --no-progress --json "$target" --out "$WORK/reports/gen-explore-json-$label"
  run_case "gen-run-junit-$label" "--junit" "\"$target\"" "$G/outputs" \
    run "$BASE/scripted.json" --backend sim --junit "$target"
done
run_case gen-explore-out-proc "--out" "cannot create a directory in \"/proc\"" "" \
  explore --variant set_nx_ex --schedules 20 --no-progress --out /proc/x
run_case gen-run-out-proc "--out" "cannot create a directory in \"/proc\"" "" \
  run "$BASE/scripted.json" --out /proc/x
"$LOCKSIM" run "$BASE/scripted.json" --backend sim --variant naive --no-progress \
  --out "$G/export-run" >/dev/null
export_run=$(ls -d "$G"/export-run/*/latest/naive)
for target in "$G/outputs/dir.json" /proc/x /no/such/x.json; do
  run_case "gen-export-out-$(basename "$target")" "--out" "\"$target\"" "$G/outputs" \
    export "$export_run" --format knossos --out "$target"
done
# --seeds of the whole range: its count wrapped to 0, and explore ran nothing and said "No finding".
run_case gen-explore-seeds-full-range "--seeds" "more than 1099511627776 seeds" "" \
  explore --variant set_nx_ex --seeds 0..18446744073709551615 --no-progress --out "$WORK/reports/gen-explore-seeds-full-range"

# explore --merge: numbers a shard's summary cannot hold are refused, naming the file and field.
"$LOCKSIM" explore --variant set_nx_ex --schedules 20 --no-shrink --no-progress \
  --json "$G/summary.json" --out "$WORK/reports/summary" >/dev/null
/usr/bin/python3 - "$G" <<'PY'
import json, sys
g = sys.argv[1]
base = json.load(open(g + "/summary.json"))
def case(name, change, text=None):
    doc = json.loads(json.dumps(base))
    change(doc)
    out = json.dumps(doc)
    open("%s/merge-%s.json" % (g, name), "w").write(out if text is None else out.replace(*text))
def more_findings(doc):
    doc["findings"]["x"] = {"schedules": doc["schedules"] + 1, "first_seed": 0}
case("negative-seeds", lambda d: d.__setitem__("seeds", [[-5, -1]]))
case("backwards-range", lambda d: d.__setitem__("seeds", [[1000, 900]]))
case("negative-schedules", lambda d: d.__setitem__("schedules", -100))
case("1e30-schedules", lambda d: d.__setitem__("schedules", 12345), ("12345", "1e30"))
case("max-schedules", lambda d: (d.__setitem__("schedules", 2**64 - 1), d.__setitem__("seeds", [[0, 2**64 - 2]])))
case("max-schedules-2", lambda d: (d.__setitem__("schedules", 1), d.__setitem__("seeds", [[2**64 - 1, 2**64 - 1]])))
case("more-findings-than-schedules", more_findings)
case("three-element-range", lambda d: d.__setitem__("seeds", [[1, 2, 3]]))
case("string-count", lambda d: d.__setitem__("with_no_fault", "5"))
PY
merge_case() {  # merge_case NAME FRAGMENT FILE...: explore --merge FILE... exits 2 naming the last
  local name=$1 fragment=$2
  shift 2
  run_case "gen-merge-$name" "${@: -1}" "$fragment" "" explore --merge "$@"
}
merge_case negative-seeds '$.seeds[0][0]: expected an integer' "$G/merge-negative-seeds.json"
merge_case backwards-range '$.seeds[0]: expected [first, last] with last not below first' \
  "$G/merge-backwards-range.json"
merge_case negative-schedules '$.schedules: expected an integer' "$G/merge-negative-schedules.json"
merge_case 1e30-schedules '$.schedules: expected an integer' "$G/merge-1e30-schedules.json"
merge_case wrapping-sum '$.schedules: the sum over the summaries does not fit' \
  "$G/merge-max-schedules.json" "$G/merge-max-schedules-2.json"
merge_case more-findings-than-schedules '$.findings.x.schedules: 21 is more than the file' \
  "$G/merge-more-findings-than-schedules.json"
merge_case three-element-range '$.seeds[0]: expected a range [first, last] of two seeds' \
  "$G/merge-three-element-range.json"
merge_case string-count '$.with_no_fault: expected an integer' "$G/merge-string-count.json"

echo
echo "$passed passed, $failed failed ($checked_in checked-in cases, $generated_matrix generated field cases, the rest generated files and flags)"
if ((failed > 0)); then
  printf 'failed: %s\n' "${failures[@]}"
  exit 1
fi
