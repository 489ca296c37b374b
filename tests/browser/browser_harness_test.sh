#!/usr/bin/env bash
# browser_harness_test.sh [SCREENSHOT_DIR]: the real-browser harness, tests/browser/browse.mjs
# (headless Chromium over the DevTools protocol), on hand-written pages of tests/browser/fixture/
# that follow the HTML report contract. Screenshots go to SCREENSHOT_DIR (default
# $LOCKSIM_BROWSER_OUT, else /tmp/locksim-browser-screenshots). Proves:
#  - the good fixture passes fixture/good-plan.json (three cases): the index's catalogue and
#    libraries cells, its images decoded and links to existing reports; a real click on the
#    stale-release x set_nx_ex cell lands on report.html#v-set_nx_ex, whose two rect.violation are
#    wholly in the viewport; the section's file links exist (lib:redlock's too); same-document
#    jumps; full-page and viewport screenshots written as PNGs of the expected size; the same
#    click given as command-line steps passes too;
#  - it fails a page (naming the page and the failure) on: a console.error, an uncaught
#    exception, an exception thrown after the load (on a click), a broken <img>, a broken
#    stylesheet, a link covered by an overlay, a link of zero size, a violation scrolled out of
#    sight inside its section, a file link that is not a relative path ("lib:x/..."), a section
#    not in view without the jump, a missing selector, a click that navigates nowhere (its wait
#    times out), a missing #target, a missing page; and on a timeline (bad/timeline-marks.html):
#    a violation narrower than a mark (measure --box-width), one outside the plot's SVG clip-path
#    (not visible), a call under a band that takes the pointer (hover), a time span that a wheel
#    turn did not shrink (measure --less-than), a violation cell coloured green (measure --hue);
#  - all of these are cases of one run (one browser, four cases at a time, each in a tab and a
#    DevTools session of its own): each bad case must fail with its message (--expect-failure),
#    the run exits 0 only if every case ended as it should, and this script checks each case's
#    verdict line again (its page and its message). Each case sees its own page's failures
#    only. A second run shows the verdicts can fail: a case that passes but should fail, one
#    that fails with another message, one that fails but should pass: each reported, exit 1;
#  - a bad plan exits 2 (a misspelt option of a step or key of a case, two cases of one name, a
#    case without steps, a modifier before any step, count above max), a browser that does not
#    start exits 3;
#  - SIGTERM in the middle of a page exits 143; after every run, no Chromium process and no
#    browser directory of the harness is left; after a SIGKILL of the harness the browser still
#    ends by itself (its pipe closed) and the leftover check sees the directory it could not remove.
# Four runs start a browser: the main run (beside it, the runs that start none), then the run of
# wrong verdicts, the SIGTERM and the SIGKILL runs side by side. Each has a $TMPDIR of its own, so
# that what each leaves behind is seen apart. (A browser start costs as much CPU as several cases:
# a browser per case made this test take 90 s on an idle 2-core machine.)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SOURCE=$(cd "$HERE/../.." && pwd)
SHOTS=${1:-${LOCKSIM_BROWSER_OUT:-/tmp/locksim-browser-screenshots}}
WORK=$(mktemp -d /tmp/locksim-browser-test.XXXXXX)
# The browser's directories land below here, so that the test can see none is left behind (a short
# path: the browser's socket goes below it, and a socket path is at most 107 bytes).
BROWSER_TMP=$(mktemp -d /tmp/lsb.XXXXXX)
declare -A PIDS=()  # the runs of the harness in the background, by name
trap '((${#PIDS[@]})) && kill "${PIDS[@]}" 2>/dev/null; rm -rf "$WORK" "$BROWSER_TMP"' EXIT
source "$SOURCE/tests/cli/lib.sh"
FIX=$HERE/fixture
GOOD=$FIX/good
BAD=$FIX/bad
REPORT=$GOOD/stale-release/20260101-000000-s1-a1b2c3/report.html
CELL="#catalogue td.cell[data-scenario='stale-release'][data-variant='set_nx_ex'] a"
JOBS=4  # cases side by side in one browser

# Without node or chromium this test fails: scripts/lib.sh installs both (LOCKSIM_PACKAGES has
# chromium; node comes with the adapters). The browser's version is the first line of each run.
for tool in node chromium; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAILED: $tool is missing; ./scripts/test installs it (sudo apt-get install -y" \
      "$([[ $tool == node ]] && echo nodejs || echo chromium))"
    exit 1
  fi
done
echo "node $(node --version)"

start() {  # start NAME ARGS...: runs the harness in the background, $TMPDIR $BROWSER_TMP/NAME,
  # its output in $WORK/NAME.log
  mkdir -p "$BROWSER_TMP/$1"
  TMPDIR=$BROWSER_TMP/$1 node "$HERE/browse.mjs" "${@:2}" >"$WORK/$1.log" 2>&1 &
  PIDS[$1]=$!
}
finished() {  # finished NAME: waits for the run NAME; its output in $log, its exit status in $code
  wait "${PIDS[$1]}" 2>/dev/null
  code=$?
  unset "PIDS[$1]"
  log=$WORK/$1.log
}
browse() {  # browse ARGS...: runs the harness in the foreground (its run is named "fg")
  start fg "$@"
  finished fg
}
browser_procs() {  # browser_procs NAME: the browser processes of the run NAME
  pgrep -f -- "$BROWSER_TMP/$1/locksim-browser-"
}
leftover_failures=0
leftovers() {  # leftovers NAME RUN: no browser process or directory of the run RUN is left
  local procs dirs
  mapfile -t procs < <(browser_procs "$2")
  dirs=$(find "$BROWSER_TMP/$2" -mindepth 1 -maxdepth 1 | head -5)
  if ((${#procs[@]} > 0)); then
    leftover_failures=$((leftover_failures + 1))
    fail "$1: browser processes left: ${procs[*]}"
    kill -9 "${procs[@]}" 2>/dev/null  # ours: started by this test's harness
  fi
  if [[ -n $dirs ]]; then
    leftover_failures=$((leftover_failures + 1))
    fail "$1: left in \$TMPDIR: $dirs"
    rm -rf "${BROWSER_TMP:?}/$2"/*
  fi
}
expect_failure() {  # expect_failure NAME EXIT MESSAGE ARGS...: exit EXIT, saying MESSAGE (fixed
  # strings); for runs that end before a page opens
  local name=$1 want=$2 message=$3
  shift 3
  browse "$@"
  if [[ $code != "$want" ]]; then
    fail "$name: expected exit $want, got $code:"
    sed 's/^/    /' "$log"
  elif ! grep -qF -- "$message" "$log"; then
    fail "$name: no '$message' in the output:"
    sed 's/^/    /' "$log"
  else
    pass "$name (exit $code: $message)"
  fi
  leftovers "$name" fg
}
case_line() {  # case_line NAME: $line is the verdict line of case NAME in $log (just one, or fail)
  local l n=0
  line=
  while IFS= read -r l; do
    if [[ $l == "ok: case \"$1\": "* || $l == "FAILED: case \"$1\": "* ]]; then
      line=$l n=$((n + 1))
    fi
  done <"$log"
  ((n == 1)) && return
  fail "case \"$1\": expected one verdict line, got $n"
  return 1
}
check_line() {  # check_line NAME WANT: the verdict line of case NAME starts with WANT
  case_line "$1" || return
  if [[ $line == "$2"* ]]; then
    pass "$line"
  else
    fail "case \"$1\": expected '$2...', got: $line"
  fi
}
opened() {  # opened NAME: waits (at most 30 s) until the run NAME has opened its page
  for _ in $(seq 300); do
    grep -q "^ok: opened" "$WORK/$1.log" && return
    sleep 0.1
  done
  fail "the run $1 did not open its page within 30 s:"
  sed 's/^/    /' "$WORK/$1.log"
}
png_size() {  # png_size FILE: WIDTHxHEIGHT of a PNG, or nothing if FILE is not one
  [[ -f $1 && $(head -c 8 "$1" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || return
  local b
  read -ra b < <(od -An -tu1 -j16 -N8 "$1")
  echo "$(((b[0] << 24) + (b[1] << 16) + (b[2] << 8) + b[3]))x$(((b[4] << 24) + (b[5] << 16) + (b[6] << 8) + b[7]))"
}

# --- The cases of the main run: the good plan and a good case must pass, each bad case must fail
# with its own message (a test that cannot fail is a defect).
mapfile -t PLAN_CASES < <(node -e \
  'for (const c of require(process.argv[1]).cases) console.log(c.name)' "$FIX/good-plan.json")
((${#PLAN_CASES[@]} == 3)) || fail "fixture/good-plan.json: expected 3 cases, got ${#PLAN_CASES[@]}"
CASES=()
GOOD_CASES=()
BAD_CASES=() BAD_PAGES=() BAD_MESSAGES=()
good_case() {  # good_case NAME STEPS...: a case that must pass
  GOOD_CASES+=("$1")
  CASES+=(--case "$1" "${@:2}")
}
bad_case() {  # bad_case NAME PAGE MESSAGE STEPS...: a case that must fail, naming PAGE (a file:
  # URL's start; empty: no page) and saying MESSAGE (fixed strings)
  BAD_CASES+=("$1") BAD_PAGES+=("$2") BAD_MESSAGES+=("$3")
  CASES+=(--case "$1" --expect-failure "$3" "${@:4}")
}
bad_case "a console.error fails the page" "file://$BAD/console-error.html" \
  "console.error: deliberate console error from the fixture" --open "$BAD/console-error.html"
# The plan's click, as command-line steps, beside the bad cases: none of their failures reach it.
good_case "steps as arguments: index -> click the cell -> violation in view" \
  --open "$GOOD/index.html" --click "$CELL" --target v-set_nx_ex \
  --expect rect.violation --within :target --visible
bad_case "an uncaught exception fails the page" "file://$BAD/exception.html" \
  "uncaught exception: ReferenceError: drawTimeline is not defined" --open "$BAD/exception.html"
bad_case "an exception after the load (a click handler) fails the page" \
  "file://$BAD/click-error.html" "uncaught exception: ReferenceError: highlight is not defined" \
  --open "$BAD/click-error.html" --click "#to-set_nx_ex" --target v-set_nx_ex
bad_case "a broken <img> fails the page" "file://$BAD/broken-image.html" \
  "failed to load file://$BAD/missing-sweep.png (Image): net::ERR_FILE_NOT_FOUND" \
  --open "$BAD/broken-image.html"
bad_case "a broken stylesheet fails the page" "file://$BAD/broken-stylesheet.html" \
  "failed to load file://$BAD/missing-style.css (Stylesheet): net::ERR_FILE_NOT_FOUND" \
  --open "$BAD/broken-stylesheet.html"
bad_case "a link under an overlay cannot be clicked" "file://$BAD/covered-cell.html" \
  "is covered by <div.overlay>; a click there misses it" \
  --open "$BAD/covered-cell.html" --click "$CELL"
bad_case "a link of zero size cannot be clicked" "file://$BAD/zero-size-link.html" \
  "<a> has no size (0x0 box), nothing to click" --open "$BAD/zero-size-link.html" --click "$CELL"
bad_case "a violation scrolled out of sight in its section is not visible" \
  "file://$BAD/clipped-violation.html#v-set_nx_ex" "clipped by <div.timeline-scroll>" \
  --open "$BAD/clipped-violation.html#v-set_nx_ex" --target v-set_nx_ex \
  --expect rect.violation --within :target --visible --timeout-ms 500
bad_case "a file link written lib:x/... is a URL of scheme lib:, not a file" \
  "file://$BAD/scheme-link.html" "lib:redlock/history.jsonl (not a local file)" \
  --open "$BAD/scheme-link.html" --links-resolve "nav.files a"
bad_case "without the jump, a lower section's violation is not in the viewport" \
  "file://$REPORT" "<rect.violation> is outside the viewport" \
  --open "$REPORT" --expect "#v-lua_fair_queue rect.violation" --visible --timeout-ms 500
bad_case "a missing element fails (naive has no violation)" "file://$REPORT#v-naive" \
  '"rect.violation" within ":target": 0 matches, want at least 1' \
  --open "$REPORT#v-naive" --expect rect.violation --within :target --timeout-ms 500
bad_case "a click that navigates nowhere times out" "file://$GOOD/index.html" \
  'click "h1" on <h1> at (' --open "$GOOD/index.html" --click h1 --timeout-ms 1000
bad_case "no jump: the target is not the URL's fragment" "file://$GOOD/index.html" \
  "target #v-set_nx_ex: the URL's fragment is \"\"" \
  --open "$GOOD/index.html" --target v-set_nx_ex --timeout-ms 500
bad_case "a missing page fails" "" "no-such-report.html: no such file" \
  --open "$GOOD/no-such-report.html"
TIMELINE=$BAD/timeline-marks.html
bad_case "a violation narrower than a mark is measured too narrow" "file://$TIMELINE" \
  'measure "#sliver" visible width of <rect#sliver.violation>: 0.5: 0.5 is less than 4' \
  --open "$TIMELINE" --measure "#sliver" --box-width --at-least 4 --timeout-ms 300
bad_case "a violation outside the plot's clip-path is not visible" "file://$TIMELINE" \
  "clipped by <g.plot> (its clip-path #clip-0)" \
  --open "$TIMELINE" --expect "#zoomed-away" --visible --timeout-ms 300
bad_case "a call under a band cannot be hovered" "file://$TIMELINE" \
  "is covered by <rect.band>; the pointer would miss it" \
  --open "$TIMELINE" --hover "#covered-op" --timeout-ms 300
bad_case "a wheel turn that zooms nothing leaves the span as it was" "file://$TIMELINE" \
  '321 is not less than "whole" (321)' \
  --open "$TIMELINE" --measure svg.timeline --attribute data-span-ms --save whole \
  --wheel svg.timeline --delta-y -600 --ctrl \
  --measure svg.timeline --attribute data-span-ms --less-than whole --timeout-ms 300
bad_case "a violation cell coloured green is not red" "file://$TIMELINE" \
  "its hue is green, want red" \
  --open "$TIMELINE" --measure "#violation-cell" --style background-color --hue red \
  --timeout-ms 300

# --- The main run, in the background.
mkdir -p "$SHOTS"
SHOT_FILES=(index.png report-stale-release-set_nx_ex.png report-stale-release-set_nx_ex-viewport.png
            report-gc-pause-past-lease.png)
for file in "${SHOT_FILES[@]}"; do rm -f "$SHOTS/$file"; done
start main "$FIX/good-plan.json" --screenshots "$SHOTS" "${CASES[@]}" --jobs "$JOBS"

# --- Meanwhile, bad usage (exit 2) and a browser that does not start (exit 3): no page opens.
expect_failure "a modifier before any step is refused (exit 2)" 2 \
  "--visible modifies a step: put it after one" --visible --open "$GOOD/index.html"
expect_failure "count above max is refused (exit 2)" 2 "count 3 is more than max 1" \
  --open "$GOOD/index.html" --expect h1 --count 3 --max 1
printf '{"steps": [{"open": "good/index.html"}, {"expect": "h1", "visable": true}]}' \
  >"$WORK/typo-plan.json"
expect_failure "a plan with a misspelt option is refused (exit 2)" 2 \
  '"visable" is not an option of expect' "$WORK/typo-plan.json" --base "$FIX"
printf '{"cases": [{"name": "a", "steps": [{"open": "good/index.html"}], "expect_fail": "x"}]}' \
  >"$WORK/typo-cases.json"
expect_failure "a case with a misspelt key is refused (exit 2)" 2 \
  'cases[0]: unknown key "expect_fail"' "$WORK/typo-cases.json"
expect_failure "two cases of one name are refused (exit 2)" 2 'two cases are named "a"' \
  --case a --open "$GOOD/index.html" --case a --open "$GOOD/index.html"
expect_failure "a case without steps is refused (exit 2)" 2 'case "b": no steps' \
  --case a --open "$GOOD/index.html" --case b
LOCKSIM_CHROMIUM=/bin/false expect_failure "a browser that does not start: exit 3" 3 \
  "/bin/false did not start" --open "$GOOD/index.html"

# --- The main run: exit 0, every case as expected; then each verdict line checked here.
finished main
ncases=$((${#PLAN_CASES[@]} + ${#GOOD_CASES[@]} + ${#BAD_CASES[@]}))
if [[ $code == 0 ]] && grep -qxF "cases: $ncases, as expected: $ncases, not: 0" "$log"; then
  pass "one browser, $ncases cases, each as expected (exit 0)"
else
  fail "one browser, $ncases cases: exit $code, or not every case as expected"
fi
echo "    what it checked:"
sed 's/^/    /' "$log"
for name in "${PLAN_CASES[@]}"; do
  case_line "$name" &&
    if [[ $line == "ok: case \"$name\": passed" ]]; then
      pass "the good fixture passes fixture/good-plan.json: $name"
    else
      fail "the good fixture does not pass fixture/good-plan.json: $line"
    fi
done
for file in "${SHOT_FILES[@]}"; do
  size=$(png_size "$SHOTS/$file")
  width=${size%x*} height=${size#*x}
  if [[ -z $size ]]; then
    fail "screenshot $SHOTS/$file: missing or not a PNG"
  elif [[ $file == *-viewport.png && $size != 1280x900 ]]; then
    fail "screenshot $file: $size, expected the 1280x900 viewport"
  elif [[ $file == report-stale-release-set_nx_ex.png ]] && ((width != 1280 || height <= 900)); then
    fail "screenshot $file: $size, expected the whole page (1280 wide, taller than the viewport)"
  else
    pass "screenshot $SHOTS/$file is a PNG of $size"
  fi
done
for name in "${GOOD_CASES[@]}"; do
  case_line "$name" &&
    if [[ $line == "ok: case \"$name\": passed" ]]; then pass "$name"; else fail "$name: $line"; fi
done
for i in "${!BAD_CASES[@]}"; do
  name=${BAD_CASES[i]} page=${BAD_PAGES[i]} message=${BAD_MESSAGES[i]}
  case_line "$name" || continue
  said="ok: case \"$name\": failed as expected: ${page:+page $page}"
  if [[ $line != "$said"* ]]; then
    fail "$name: expected a line starting '$said', got: $line"
  elif [[ $line != *"$message"* ]]; then
    fail "$name: no '$message' in: $line"
  else
    pass "$name (${line#*failed as expected: })"
  fi
done
# Each case sees its own page's failures only, though others fail beside it.
for name in "a console.error fails the page" "an uncaught exception fails the page"; do
  if case_line "$name" && [[ $line != *": 1 failure(s) on the page: "* ]]; then
    fail "$name: not exactly one failure on its page: $line"
  fi
done
if case_line "a click that navigates nowhere times out" &&
  [[ $line != *"did not navigate within 1000 ms"* ]]; then
  fail "the click's timeout is not named: $line"
fi
leftovers "the run of all cases" main

# --- Then three runs side by side: one whose verdicts must fail (a plan file of cases: one that
# passes but should fail, one that fails with another message than the expected one, one that
# fails but should pass; a good case beside them still passes), and two to be stopped in the
# middle of a page, by SIGTERM and by SIGKILL.
cat >"$WORK/wrong-plan.json" <<EOF
{"cases": [
  {"name": "passes, though it should fail", "expect_failure": "console.error",
   "steps": [{"open": "good/index.html"}, {"expect": "h1"}]},
  {"name": "fails, but not as it should", "expect_failure": "uncaught exception",
   "steps": [{"open": "bad/console-error.html"}]},
  {"name": "fails, though it should pass", "steps": [{"open": "bad/exception.html"}]},
  {"name": "passes", "steps": [{"open": "good/index.html"}, {"expect": "h1"}]}
 ],
 "base": "$FIX"}
EOF
start wrong "$WORK/wrong-plan.json" --jobs 2
start sigterm --open "$GOOD/index.html" --expect "#never" --timeout-ms 15000
start sigkill --open "$GOOD/index.html" --expect "#never" --timeout-ms 15000

# --- SIGTERM in the middle of a page: exit 143, the browser and its directory gone.
opened sigterm
if browser_procs sigterm >/dev/null; then
  pass "the browser runs while the page is checked"
else
  fail "no browser process seen under $BROWSER_TMP/sigterm:"
  sed 's/^/    /' "$WORK/sigterm.log"
fi
kill -TERM "${PIDS[sigterm]}"
finished sigterm
expect_code "SIGTERM stops the harness" 143 "$code"
expect_grep "it says it killed the browser" "interrupted by SIGTERM; browser killed" "$log"
leftovers "SIGTERM" sigterm

# SIGKILL: the browser ends by itself when its DevTools pipe closes; only its directory stays, and
# leftovers sees it (the check above can fail).
opened sigkill
kill -KILL "${PIDS[sigkill]}"
finished sigkill
for _ in $(seq 50); do
  browser_procs sigkill >/dev/null || break
  sleep 0.1
done
if browser_procs sigkill >/dev/null; then
  fail "SIGKILL of the harness: the browser is still running 5 s later"
else
  pass "SIGKILL of the harness: the browser ends by itself (its pipe closed)"
fi
before=$failed
leftovers "SIGKILL (expected: the directory is left)" sigkill >"$WORK/sigkill-leftovers.log"
if ((failed == before + 1)) && grep -q "left in" "$WORK/sigkill-leftovers.log"; then
  failed=$before leftover_failures=$((leftover_failures - 1))
  pass "SIGKILL of the harness leaves its browser directory, and the leftover check sees it"
else
  failed=$before
  fail "SIGKILL of the harness: the leftover check did not see the browser directory"
fi

# --- The verdicts can fail: each wrong case is reported, and the run exits 1.
finished wrong
before=$failed
expect_code "cases not as expected: the run fails" 1 "$code"
check_line "passes, though it should fail" \
  'FAILED: case "passes, though it should fail": expected to fail saying "console.error", but it passed'
check_line "fails, but not as it should" \
  "FAILED: case \"fails, but not as it should\": expected to fail saying \"uncaught exception\", but: page file://$BAD/console-error.html: open: 1 failure(s) on the page: - console.error: deliberate"
check_line "fails, though it should pass" \
  "FAILED: case \"fails, though it should pass\": page file://$BAD/exception.html: open: 1 failure(s) on the page: - uncaught exception: ReferenceError: drawTimeline"
check_line "passes" 'ok: case "passes": passed'
expect_grep "... and counts them" "^cases: 4, as expected: 1, not: 3$" "$log"
((failed == before)) || sed 's/^/    /' "$log"
leftovers "cases not as expected" wrong

if ((leftover_failures == 0)); then
  pass "no browser process and no browser directory left after any of the runs"
fi

finish
