#!/usr/bin/env bash
# browser_harness_test.sh [SCREENSHOT_DIR]: the real-browser harness, tests/browser/browse.mjs
# (headless Chromium over the DevTools protocol), on hand-written pages of tests/browser/fixture/
# that follow the HTML report contract. Screenshots go to SCREENSHOT_DIR (default
# $LOCKSIM_BROWSER_OUT, else /tmp/locksim-browser-screenshots). Proves:
#  - the good fixture passes fixture/good-plan.json: the index's catalogue and libraries cells, its
#    images decoded and links to existing reports; a real click on the stale-release x set_nx_ex
#    cell lands on report.html#v-set_nx_ex, whose two rect.violation are wholly in the viewport;
#    the section's file links exist (lib:redlock's too); same-document jumps; full-page and
#    viewport screenshots written as PNGs of the expected size;
#  - it fails (exit 1, naming the page and the failure) on: a console.error, an uncaught
#    exception, an exception thrown after the load (on a click), a broken <img>, a broken
#    stylesheet, a link covered by an overlay, a link of zero size, a violation scrolled out of
#    sight inside its section, a file link that is not a relative path ("lib:x/..."), a section
#    not in view without the jump, a missing selector, a click that navigates nowhere (its wait
#    times out), a missing #target, a missing page;
#  - a bad plan exits 2, a browser that does not start exits 3;
#  - SIGTERM in the middle of a page exits 143; after every run, no Chromium process and no
#    browser directory of the harness is left; after a SIGKILL of the harness the browser still
#    ends by itself (its pipe closed) and the leftover check sees the directory it could not remove.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SOURCE=$(cd "$HERE/../.." && pwd)
SHOTS=${1:-${LOCKSIM_BROWSER_OUT:-/tmp/locksim-browser-screenshots}}
WORK=$(mktemp -d /tmp/locksim-browser-test.XXXXXX)
# The browser's directories land here, so that the test can see none is left behind (a short
# path: the browser's socket goes below it, and a socket path is at most 107 bytes).
BROWSER_TMP=$(mktemp -d /tmp/lsb.XXXXXX)
trap 'rm -rf "$WORK" "$BROWSER_TMP"' EXIT
export TMPDIR=$BROWSER_TMP
source "$SOURCE/tests/cli/lib.sh"
FIX=$HERE/fixture
GOOD=$FIX/good
BAD=$FIX/bad
REPORT=$GOOD/stale-release/20260101-000000-s1-a1b2c3/report.html
CELL="#catalogue td.cell[data-scenario='stale-release'][data-variant='set_nx_ex'] a"

# Without node or chromium this test fails: scripts/lib.sh installs both (LOCKSIM_PACKAGES has
# chromium; node comes with the adapters).
for tool in node chromium; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAILED: $tool is missing; ./scripts/test installs it (sudo apt-get install -y" \
      "$([[ $tool == node ]] && echo nodejs || echo chromium))"
    exit 1
  fi
done
echo "chromium: $(chromium --version 2>/dev/null); node $(node --version)"

runs=0
browse() {  # browse ARGS...: runs the harness, its output in $log, its exit status in $code
  runs=$((runs + 1))
  log=$WORK/run-$runs.log
  node "$HERE/browse.mjs" "$@" >"$log" 2>&1
  code=$?
}
leftover_failures=0
leftovers() {  # leftovers NAME: no browser process or directory of the harness is left
  local procs dirs
  mapfile -t procs < <(pgrep -f -- "$BROWSER_TMP/locksim-browser-")
  dirs=$(find "$BROWSER_TMP" -mindepth 1 -maxdepth 1 | head -5)
  if ((${#procs[@]} > 0)); then
    leftover_failures=$((leftover_failures + 1))
    fail "$1: browser processes left: ${procs[*]}"
    kill -9 "${procs[@]}" 2>/dev/null  # ours: started by this test's harness
  fi
  if [[ -n $dirs ]]; then
    leftover_failures=$((leftover_failures + 1))
    fail "$1: left in \$TMPDIR: $dirs"
    rm -rf "${BROWSER_TMP:?}"/*
  fi
}
expect_pass() {  # expect_pass NAME ARGS...
  local name=$1
  shift
  browse "$@"
  if [[ $code == 0 ]]; then
    pass "$name"
  else
    fail "$name: exit $code:"
    sed 's/^/    /' "$log"
  fi
  leftovers "$name"
}
expect_failure() {  # expect_failure NAME EXIT PAGE MESSAGE ARGS...: exit EXIT, and a FAILED line
  # naming PAGE (a file: URL's start; empty: no page) and saying MESSAGE (fixed strings)
  local name=$1 want=$2 page=$3 message=$4
  shift 4
  browse "$@"
  if [[ $code != "$want" ]]; then
    fail "$name: expected exit $want, got $code:"
    sed 's/^/    /' "$log"
  elif [[ -n $page ]] && ! grep -qF -- "FAILED: page $page" "$log"; then
    fail "$name: the failure does not name the page $page:"
    sed 's/^/    /' "$log"
  elif ! grep -qF -- "$message" "$log"; then
    fail "$name: no '$message' in the output:"
    sed 's/^/    /' "$log"
  else
    pass "$name (exit $code: $message)"
  fi
  leftovers "$name"
}
png_size() {  # png_size FILE: WIDTHxHEIGHT of a PNG, or nothing if FILE is not one
  [[ -f $1 && $(head -c 8 "$1" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || return
  local b
  read -ra b < <(od -An -tu1 -j16 -N8 "$1")
  echo "$(((b[0] << 24) + (b[1] << 16) + (b[2] << 8) + b[3]))x$(((b[4] << 24) + (b[5] << 16) + (b[6] << 8) + b[7]))"
}

# --- The good fixture: everything the report contract promises, checked in a real browser.
mkdir -p "$SHOTS"
SHOT_FILES=(index.png report-stale-release-set_nx_ex.png report-stale-release-set_nx_ex-viewport.png
            report-gc-pause-past-lease.png)
for file in "${SHOT_FILES[@]}"; do rm -f "$SHOTS/$file"; done
expect_pass "the good fixture passes fixture/good-plan.json" "$FIX/good-plan.json" --screenshots "$SHOTS"
echo "    what it checked:"
sed 's/^/    /' "$log"
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
# The same steps from the command line instead of a plan file.
expect_pass "steps as arguments: index -> click the cell -> violation in view" \
  --open "$GOOD/index.html" --click "$CELL" --target v-set_nx_ex \
  --expect rect.violation --within :target --visible

# --- Failures the harness must see (a test that cannot fail is a defect).
expect_failure "a console.error fails the page" 1 "file://$BAD/console-error.html" \
  "console.error: deliberate console error from the fixture" --open "$BAD/console-error.html"
expect_failure "an uncaught exception fails the page" 1 "file://$BAD/exception.html" \
  "uncaught exception: ReferenceError: drawTimeline is not defined" --open "$BAD/exception.html"
expect_failure "an exception after the load (a click handler) fails the page" 1 \
  "file://$BAD/click-error.html" "uncaught exception: ReferenceError: highlight is not defined" \
  --open "$BAD/click-error.html" --click "#to-set_nx_ex" --target v-set_nx_ex
expect_failure "a broken <img> fails the page" 1 "file://$BAD/broken-image.html" \
  "failed to load file://$BAD/missing-sweep.png (Image): net::ERR_FILE_NOT_FOUND" \
  --open "$BAD/broken-image.html"
expect_failure "a broken stylesheet fails the page" 1 "file://$BAD/broken-stylesheet.html" \
  "failed to load file://$BAD/missing-style.css (Stylesheet): net::ERR_FILE_NOT_FOUND" \
  --open "$BAD/broken-stylesheet.html"
expect_failure "a link under an overlay cannot be clicked" 1 "file://$BAD/covered-cell.html" \
  "is covered by <div.overlay>; a click there misses it" --open "$BAD/covered-cell.html" --click "$CELL"
expect_failure "a link of zero size cannot be clicked" 1 "file://$BAD/zero-size-link.html" \
  "<a> has no size (0x0 box), nothing to click" --open "$BAD/zero-size-link.html" --click "$CELL"
expect_failure "a violation scrolled out of sight in its section is not visible" 1 \
  "file://$BAD/clipped-violation.html#v-set_nx_ex" "clipped by <div.timeline-scroll>" \
  --open "$BAD/clipped-violation.html#v-set_nx_ex" --target v-set_nx_ex \
  --expect rect.violation --within :target --visible
expect_failure "a file link written lib:x/... is a URL of scheme lib:, not a file" 1 \
  "file://$BAD/scheme-link.html" "lib:redlock/history.jsonl (not a local file)" \
  --open "$BAD/scheme-link.html" --links-resolve "nav.files a"
expect_failure "without the jump, a lower section's violation is not in the viewport" 1 \
  "file://$REPORT" "<rect.violation> is outside the viewport" \
  --open "$REPORT" --expect "#v-lua_fair_queue rect.violation" --visible --timeout-ms 500
expect_failure "a missing element fails (naive has no violation)" 1 "file://$REPORT#v-naive" \
  '"rect.violation" within ":target": 0 matches, want at least 1' \
  --open "$REPORT#v-naive" --expect rect.violation --within :target --timeout-ms 500
expect_failure "a click that navigates nowhere times out" 1 "file://$GOOD/index.html" \
  'click "h1" on <h1> at' --open "$GOOD/index.html" --click h1 --timeout-ms 1000
grep -qF "did not navigate within 1000 ms" "$log" ||
  fail "the click's timeout is not named"
expect_failure "no jump: the target is not the URL's fragment" 1 "file://$GOOD/index.html" \
  "target #v-set_nx_ex: the URL's fragment is \"\"" \
  --open "$GOOD/index.html" --target v-set_nx_ex --timeout-ms 500
expect_failure "a missing page fails" 1 "" "no-such-report.html: no such file" \
  --open "$GOOD/no-such-report.html"
expect_failure "a modifier before any step is refused (exit 2)" 2 "" \
  "--visible modifies a step: put it after one" --visible --open "$GOOD/index.html"
expect_failure "count above max is refused (exit 2)" 2 "" "count 3 is more than max 1" \
  --open "$GOOD/index.html" --expect h1 --count 3 --max 1
printf '{"steps": [{"open": "good/index.html"}, {"expect": "h1", "visable": true}]}' \
  >"$WORK/typo-plan.json"
expect_failure "a plan with a misspelt option is refused (exit 2)" 2 "" \
  '"visable" is not an option of expect' "$WORK/typo-plan.json" --base "$FIX"
LOCKSIM_CHROMIUM=/bin/false expect_failure "a browser that does not start: exit 3" 3 "" \
  "/bin/false did not start" --open "$GOOD/index.html"

# --- SIGTERM in the middle of a page: exit 143, the browser and its directory gone.
node "$HERE/browse.mjs" --open "$GOOD/index.html" --expect "#never" --timeout-ms 15000 \
  >"$WORK/signal.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  grep -q "^ok: opened" "$WORK/signal.log" && break
  sleep 0.1
done
if pgrep -f -- "$BROWSER_TMP/locksim-browser-" >/dev/null; then
  pass "the browser runs while the page is checked"
else
  fail "no browser process seen under $BROWSER_TMP:"
  sed 's/^/    /' "$WORK/signal.log"
fi
kill -TERM "$pid"
wait "$pid"
expect_code "SIGTERM stops the harness" 143 $?
expect_grep "it says it killed the browser" "interrupted by SIGTERM; browser killed" "$WORK/signal.log"
leftovers "SIGTERM"

# --- SIGKILL: the harness can clean nothing up, but the browser ends by itself when its DevTools
# pipe closes; only its directory stays, and leftovers sees it (the check above can fail).
node "$HERE/browse.mjs" --open "$GOOD/index.html" --expect "#never" --timeout-ms 15000 \
  >"$WORK/sigkill.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  grep -q "^ok: opened" "$WORK/sigkill.log" && break
  sleep 0.1
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
for _ in $(seq 50); do
  pgrep -f -- "$BROWSER_TMP/locksim-browser-" >/dev/null || break
  sleep 0.1
done
if pgrep -f -- "$BROWSER_TMP/locksim-browser-" >/dev/null; then
  fail "SIGKILL of the harness: the browser is still running 5 s later"
else
  pass "SIGKILL of the harness: the browser ends by itself (its pipe closed)"
fi
before=$failed
leftovers "SIGKILL (expected: the directory is left)" >"$WORK/sigkill-leftovers.log"
if ((failed == before + 1)) && grep -q "left in" "$WORK/sigkill-leftovers.log"; then
  failed=$before leftover_failures=$((leftover_failures - 1))
  pass "SIGKILL of the harness leaves its browser directory, and the leftover check sees it"
else
  failed=$before
  fail "SIGKILL of the harness: the leftover check did not see the browser directory"
fi
if ((leftover_failures == 0)); then
  pass "no browser process and no browser directory left after any of the runs"
fi

finish
