#!/usr/bin/env bash
# report_browser_test.sh LOCKSIM SOURCE_DIR SCREENSHOT_DIR: the HTML reports locksim writes, in a
# real headless Chromium (tests/browser/browse.mjs). On real runs of stale-release (set_nx_ex's
# stale release lets C in beside B), partition-while-holding (a link fault) and
# server-restart-forgets-lock (a server fault), and the index `locksim run` writes over them:
#  - the index opens without a console error, exception or failed load; its catalogue has a cell
#    per scenario x variant, each linked to a report that exists;
#  - one click on the stale-release x set_nx_ex cell lands on that variant's section of the run's
#    report.html with both red overlaps (rect.violation) in the viewport and the mutex_violation
#    finding in words beside them, its file links leading to files that exist;
#  - the fault windows of a link fault and of a server fault are drawn (rect.fault, the servers
#    row of its server), and no page of the run has a console error;
#  - `locksim report` on a directory that is not one exits 2.
# The screenshots (index.png, stale-release.png after the click, partition.png, restart.png) are
# kept in SCREENSHOT_DIR.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
SHOTS=$3
WORK=$(mktemp -d /tmp/locksim-report-browser.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$SOURCE/tests/cli/lib.sh"
cd "$SOURCE" || exit 1
mkdir -p "$SHOTS"
OUT=$WORK/reports

"$LOCKSIM" run scenarios/stale-release.json scenarios/partition-while-holding.json \
  scenarios/server-restart-forgets-lock.json --seed 3 --out "$OUT" --no-progress \
  >"$WORK/run.log" 2>&1
expect_code "the three scenarios run as expected" 0 $?
expect_grep "run says where the index is" "Index: $OUT/index.html" "$WORK/run.log"

browse() {  # browse NAME ARGS...: the harness must pass
  local name=$1
  shift
  node "$SOURCE/tests/browser/browse.mjs" "$@" >"$WORK/browse.log" 2>&1
  local code=$?
  if ((code == 0)); then pass "$name"; else fail "$name (exit $code):"; sed 's/^/    /' "$WORK/browse.log"; fi
}

CELL="#catalogue td.cell[data-scenario='stale-release'][data-variant='set_nx_ex'] a"
browse "index: no console error; one click from the stale-release x set_nx_ex cell to its violations in view" \
  --open "$OUT/index.html" \
  --expect "#catalogue td.cell" --count 9 \
  --expect "#catalogue td.cell.outcome-ok" --count 9 \
  --links-resolve "#catalogue td.cell a" \
  --screenshot "$SHOTS/index.png" \
  --click "$CELL" \
  --target v-set_nx_ex \
  --expect rect.violation --within :target --count 2 --visible \
  --expect "li.finding[data-kind='mutex_violation']" --within :target --count 2 \
  --links-resolve ":target nav.files a" \
  --screenshot "$SHOTS/stale-release.png"

browse "a link fault's window is drawn on the client it cut off" \
  --open "$OUT/partition-while-holding/latest/report.html" \
  --expect "section.variant rect.fault" --count 2 \
  --expect "section.variant rect.violation" --count 4 \
  --screenshot "$SHOTS/partition.png"

browse "a server fault is drawn on its server's row" \
  --open "$OUT/server-restart-forgets-lock/latest/report.html" \
  --expect "section.variant svg.timeline text" --text "server n1" \
  --expect "section.variant .fault" \
  --screenshot "$SHOTS/restart.png"

"$LOCKSIM" report "$WORK/missing" >"$WORK/report.log" 2>&1
expect_code "report on a directory that does not exist" 2 $?
expect_grep "... says what it expected" "not a directory (expected the --out directory" "$WORK/report.log"
finish
