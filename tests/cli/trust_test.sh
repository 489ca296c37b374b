#!/usr/bin/env bash
# trust_test.sh LOCKSIM SOURCE_DIR: what locksim writes can be trusted when what it reads cannot.
# Proves (issue 46, "Trust round three"):
#  - a lock whose acquire returns bytes that are not UTF-8, or whose release answers such an
#    error, ends in a lock_error naming the reply escaped (\xFF), on the simulator, on a real
#    server and with client processes; every file written is valid UTF-8 and `check` agrees
#    (it aborted after writing history.jsonl);
#  - an output flag aimed at a character device (a null device of its own) or at a FIFO writes
#    into it: the device stays a device, the FIFO stays a FIFO and its reader gets the whole file
#    (a rename replaced them; as root, `--junit /dev/null` replaced /dev/null); a symbolic link
#    to a file stays a link, and the file it names is written;
#  - `locksim report` skips, counts and names a run whose results.json has a field of the wrong
#    type ("context": [], "matches": "yes") and indexes the others (it aborted);
#  - a --repeat says what it will write from 1,000 repetitions on, and refuses what cannot fit on
#    the output's file system (100,000 repetitions wrote 4.3 GB without a word);
#  - the Knossos export escapes CR, NUL and DEL inside EDN strings, and refuses an event of a
#    client the history's header does not name;
#  - the Porcupine export renumbers a client after an unknown outcome, as the Knossos export does.
set -uo pipefail
LOCKSIM=$(readlink -f "$1")
SOURCE=$(readlink -f "$2")
WORK=$(mktemp -d /tmp/locksim-trust-test.XXXXXX)
SMALL=""
cleanup() {
  [[ -n $SMALL ]] && umount "$SMALL" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
source "$(dirname "$0")/lib.sh"
BASE=$SOURCE/tests/hostile/valid
cd "$WORK" || exit 1

# all_utf8 NAME PATH...: every regular file under the paths decodes as UTF-8.
all_utf8() {
  local name=$1
  shift
  if /usr/bin/python3 - "$@" >"$WORK/utf8.out" 2>&1 <<'PY'; then
import os, sys
bad = []
for root in sys.argv[1:]:
    paths = [root] if os.path.isfile(root) else [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
    for path in paths:
        try:
            open(path, encoding="utf-8", errors="strict").read()
        except UnicodeDecodeError as e:
            bad.append("%s: %s" % (path, e))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
    pass "$name"
  else
    fail "$name: $(head -3 "$WORK/utf8.out")"
  fi
}

# --- 1. replies that are not UTF-8 ------------------------------------------------------------
/usr/bin/python3 - "$SOURCE/examples/my_lock.json" <<'PY'
import json, sys
lock = json.load(open(sys.argv[1]))
bad_acquire = dict(lock, name="not_utf8_acquire", summary="acquire returns bytes that are not UTF-8")
bad_acquire["acquire"] = dict(lock["acquire"], script="return '\\255\\254'")
json.dump(bad_acquire, open("not_utf8_acquire.json", "w"))
bad_release = dict(lock, name="not_utf8_release", summary="release answers an error that is not UTF-8")
bad_release["release"] = dict(lock["release"],
                              script="redis.call('DEL', KEYS[1]) return redis.error_reply('\\255\\254 no')")
json.dump(bad_release, open("not_utf8_release.json", "w"))
PY
users=(--variant-file not_utf8_acquire.json --variant-file not_utf8_release.json
  --variant not_utf8_acquire --variant not_utf8_release)
backends=(sim)
if command -v redis-server >/dev/null; then backends+=(redis processes); fi
for backend in "${backends[@]}"; do
  case $backend in
    sim) flags=(--backend sim) ;;
    redis) flags=() ;;
    processes) flags=(--clients processes) ;;
  esac
  timeout 120 "$LOCKSIM" run "$BASE/scripted.json" "${users[@]}" "${flags[@]}" --no-progress \
    --out "utf8-$backend" --junit "utf8-$backend.xml" >"utf8-$backend.log" 2>&1
  expect_code "$backend: a reply that is not UTF-8 is an outcome, not an abort" 0 $? "utf8-$backend.log"
  run=$(ls -d utf8-"$backend"/*/latest 2>/dev/null | head -1)
  expect_grep "$backend: the acquire ends in a lock_error" '"kind": "lock_error"' \
    "$run/not_utf8_acquire/results.json"
  expect_grep "$backend: which names the reply, escaped" \
    'returned the string \\"\\\\xFF\\\\xFE\\"' "$run/not_utf8_acquire/results.json"
  expect_grep "$backend: the release's error is recorded, escaped" \
    'not_utf8_release.release: \\\\xFF\\\\xFE no' "$run/not_utf8_release/history.jsonl"
  all_utf8 "$backend: every file written is UTF-8 (history, results, reports, JUnit)" \
    "utf8-$backend" "utf8-$backend.xml"
  timeout 60 "$LOCKSIM" check "$run" "${users[@]:0:4}" >"check-$backend.log" 2>&1
  expect_code "$backend: check reads the history back and agrees" 0 $? "check-$backend.log"
done

# --- 4. character devices and FIFOs are written into, not replaced -----------------------------
mkfifo junit.fifo export.fifo json.fifo
# A null device of the test's own: a locksim that renames over its output would, as root, replace
# the system's /dev/null for every other process (an older build did, in this test). Without the
# right to make one, /dev/null itself, which such a user cannot replace either.
device=/dev/null
if mknod "$WORK/null" c 1 3 2>/dev/null; then device=$WORK/null; fi
timeout 60 "$LOCKSIM" run "$BASE/scripted.json" --backend sim --no-progress --out devices \
  --junit "$device" >devnull.log 2>&1
expect_code "run --junit $device (a character device)" 0 $? devnull.log
if [[ -c $device && ! -e $device.tmp ]]; then
  pass "$device is still a character device, and no $device.tmp"
else
  fail "$device was replaced: $(ls -la "$device" "$device.tmp" 2>&1)"
fi
# A symbolic link to a file: the file is replaced, the link stays (a rename replaced the link, and
# `--junit /dev/stdout` with standard output redirected to a file made /dev/stdout.tmp in /dev).
echo old >linked.xml
ln -s linked.xml link.xml
timeout 60 "$LOCKSIM" run "$BASE/scripted.json" --backend sim --no-progress --out devices \
  --junit link.xml >link.log 2>&1
expect_code "run --junit a symbolic link" 0 $? link.log
if [[ -L link.xml ]] && grep -q "</testsuites>" linked.xml && [[ ! -e link.xml.tmp ]]; then
  pass "the link is still a link, and the file it names has the JUnit XML"
else
  fail "the link was replaced: $(ls -la link.xml linked.xml)"
fi
# read_fifo FIFO OUT: a reader on FIFO copying to OUT, ready before the writer opens it.
read_fifo() {
  timeout 60 cat "$1" >"$2" &
  sleep 0.3
}
read_fifo junit.fifo junit.got
timeout 60 "$LOCKSIM" run "$BASE/scripted.json" --backend sim --no-progress --out devices \
  --junit junit.fifo >fifo.log 2>&1
expect_code "run --junit FIFO" 0 $? fifo.log
wait
expect_grep "the FIFO's reader got the whole JUnit file" "</testsuites>" junit.got
read_fifo json.fifo json.got
timeout 60 "$LOCKSIM" explore --variant lua_owner --schedules 20 --no-shrink --no-progress \
  --json json.fifo --out devices/explore >explore-fifo.log 2>&1
code=$?
((code == 0 || code == 1)) && code=0  # findings or none: either way the summary is written
expect_code "explore --json FIFO" 0 $code explore-fifo.log
wait
expect_grep "the FIFO's reader got the explore summary" '"locksim_explore": 1' json.got
# Seed 1 shows lua_owner's lease expiring (a limit of every lease): the summary is written once,
# with the judgement (a FIFO's reader takes the first file and goes; a second write failed with
# "no process reads it" once the reader had gone, or ran into the first).
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["findings"]["mutex_violation (lease_expired)"]["limit"] else 1)' json.got 2>/dev/null; then
  pass "the FIFO got one summary, with its findings judged"
else
  fail "the FIFO did not get one judged summary: $(head -c 600 json.got)"
fi
variant_run=$(ls -d devices/*/latest/naive | head -1)
read_fifo export.fifo export.got
timeout 60 "$LOCKSIM" export "$variant_run" --format knossos --out export.fifo >export-fifo.log 2>&1
expect_code "export --out FIFO" 0 $? export-fifo.log
wait
expect_grep "the FIFO's reader got the export" ":f :acquire" export.got
if [[ -p junit.fifo && -p json.fifo && -p export.fifo ]]; then
  pass "the FIFOs are still FIFOs"
else
  fail "a FIFO was replaced: $(ls -la ./*.fifo)"
fi
timeout 20 "$LOCKSIM" export "$variant_run" --format knossos --out export.fifo >no-reader.log 2>&1
expect_code "export --out a FIFO nobody reads fails at once (no wait)" 3 $? no-reader.log
expect_grep "and says why" "no process reads it" no-reader.log

# --- 3. report skips a results.json with fields of the wrong type ------------------------------
mkdir -p index
timeout 60 "$LOCKSIM" run "$BASE/scripted.json" "$BASE/workload.json" --backend sim --no-progress \
  --out index >index-run.log 2>&1
expect_code "two scenarios run for the index" 0 $? index-run.log
cp -rL index/hostile-base-scripted index/context-list
cp -rL index/hostile-base-scripted index/matches-word
/usr/bin/python3 - index <<'PY'
import json, os, sys
out = sys.argv[1]
for name, change in (("context-list", lambda d: d.__setitem__("context", [])),
                     ("matches-word", lambda d: d["variants"][0].__setitem__("matches", "yes"))):
    path = os.path.join(out, name, "latest", "results.json")  # a copy (cp -L), not the link
    doc = json.load(open(path))
    change(doc)
    json.dump(doc, open(path, "w"))
PY
timeout 60 "$LOCKSIM" report index >report.log 2>&1
expect_code "report over runs with malformed results.json" 0 $? report.log
expect_grep "the run with \"context\": [] is named as skipped" "skipped .*context-list/latest/results.json" report.log
expect_grep "the run with \"matches\": \"yes\" is named as skipped" "skipped .*matches-word/latest/results.json" report.log
expect_grep "they are counted" "2 files unreadable" report.log
expect_grep "the good runs are indexed" "hostile-base-workload" index/index.html
expect_no_grep "the skipped runs are not" "context-list" index/index.html

# --- 7. --repeat says what it will write ---------------------------------------------------------
timeout 120 "$LOCKSIM" run "$BASE/scripted.json" --backend sim --variant naive --repeat 1000 \
  --no-progress --out repeat >repeat.log 2>&1
expect_code "--repeat 1000 runs" 0 $? repeat.log
expect_grep "--repeat 1000 says how much it will write, before the runs" \
  "repeat 1000: every repetition keeps its run directory.*1000 run directories under repeat" repeat.log
rm -rf repeat
timeout 60 "$LOCKSIM" run "$BASE/scripted.json" --backend sim --variant naive --repeat 10 \
  --no-progress --out repeat >repeat-small.log 2>&1
expect_no_grep "--repeat 10 says nothing of it" "every repetition keeps" repeat-small.log
mkdir -p small
if mount -t tmpfs -o size=1m tmpfs small 2>/dev/null; then
  SMALL=$WORK/small
  timeout 60 "$LOCKSIM" run "$BASE/scripted.json" --backend sim --repeat 200 --no-progress \
    --out small/reports >repeat-full.log 2>&1
  expect_code "--repeat that cannot fit on the file system is refused" 2 $? repeat-full.log
  expect_grep "naming what it needs and what is free" "at least .* more than the .* free there" repeat-full.log
  if [[ -z $(ls -A small) ]]; then pass "nothing was written"; else fail "wrote $(ls small)"; fi
else
  echo "note: cannot mount a 1 MB tmpfs here; the refusal on a full file system is not tested"
fi

# --- 8, 9. the exports -----------------------------------------------------------------------------
mkdir -p crafted/v
cp "$BASE/scripted.json" crafted/scenario.json
cat >crafted/v/history.jsonl <<'EOF'
{"history_schema":5,"clients":["A","B"]}
{"index":0,"time_ns":0,"client":"A","type":"invoke","f":"acquire","key":"lock","ttl_ms":300}
{"index":1,"time_ns":10,"client":"A","type":"info","f":"acquire","key":"lock","ttl_ms":300,"attempts":1,"error":"unexpected_reply","message":"lost\r\nreply\u0000x\u007f"}
{"index":2,"time_ns":20,"client":"A","type":"invoke","f":"acquire","key":"lock","ttl_ms":300}
{"index":3,"time_ns":30,"client":"A","type":"ok","f":"acquire","key":"lock","token":"t1","ttl_ms":300,"attempts":1,"sent_ns":20}
{"index":4,"time_ns":40,"client":"A","type":"invoke","f":"release","key":"lock","token":"t1"}
{"index":5,"time_ns":50,"client":"A","type":"ok","f":"release","key":"lock","token":"t1","deleted":1}
EOF
"$LOCKSIM" export crafted/v --format knossos --out crafted.edn >export.log 2>&1
expect_code "export of a history with CR, NUL and DEL in a message" 0 $? export.log
/usr/bin/python3 - crafted.edn >edn.check 2>&1 <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
lines = data.split(b"\n")[:-1]
problems = []
if any(b in data for b in (b"\r", b"\0", b"\x7f")):
    problems.append("a raw CR, NUL or DEL is in the EDN")
if len(lines) != 6 or not all(l.startswith(b"{:index") and l.endswith(b"}") for l in lines):
    problems.append("not six whole maps, one a line: %r" % lines)
if b':error "lost\\r\\nreply\\u0000x\\u007f"' not in data:
    problems.append("the message is not escaped as EDN reads it back")
print("\n".join(problems) or "six maps, escaped")
PY
expect_grep "the EDN has one map a line and its strings escaped" "six maps, escaped" edn.check
"$LOCKSIM" export crafted/v --format porcupine >crafted.json 2>export-p.log
expect_code "the same as porcupine" 0 $? export-p.log
/usr/bin/python3 - crafted.json crafted.edn >ids.check 2>&1 <<'PY'
import json, re, sys
ops = json.load(open(sys.argv[1]))
porcupine = [o["client_id"] for o in ops]
knossos = [int(re.search(r":process (\d+)", l).group(1)) for l in open(sys.argv[2]) if ":invoke" in l]
print("same processes %s" % porcupine if porcupine == knossos and porcupine == [0, 2, 2]
      else "porcupine %s, knossos %s, expected [0, 2, 2]" % (porcupine, knossos))
PY
expect_grep "porcupine's client_id after an unknown outcome is the Knossos export's new process" \
  "same processes" ids.check
echo '{"index":6,"time_ns":60,"client":"Z","type":"invoke","f":"acquire","key":"lock","ttl_ms":300}' \
  >>crafted/v/history.jsonl
for format in knossos porcupine; do
  "$LOCKSIM" export crafted/v --format "$format" >stranger.out 2>stranger.log
  expect_code "$format: an event of a client the header does not name is refused" 2 $? stranger.log
  expect_grep "$format: naming the client and the header's clients" 'client "Z", which the header.s clients (A, B)' stranger.log
done
finish
