#!/usr/bin/env bash
# report_browser_test.sh LOCKSIM SOURCE_DIR SCREENSHOT_DIR: the HTML reports locksim writes, in a
# real headless Chromium (tests/browser/browse.mjs). On real runs of stale-release (set_nx_ex's
# stale release lets C in beside B), renewal-after-pause (an overlap of a few ms at the end of a
# stall of 300 ms), partition-while-holding (a link fault) and server-restart-forgets-lock (a
# server fault), and the index `locksim run` writes over them:
#  - the index opens without a console error, exception or failed load; its catalogue has a cell
#    per scenario x variant, each linked to a report that exists; a violation cell is red though
#    expected (its computed background's hue), with the as-expected mark, and naive's cell,
#    which observed no violation, is green; set_nx_ex's violation says "own bug" (its stale DEL)
#    and lua_owner's "lease limit" (its reference shows only what every lease shows);
#  - renewal-after-pause's violation, a sliver of the run, is drawn at least 5 px wide; Ctrl+wheel
#    over it zooms in at the pointer (the visible span, data-span-ms, shrinks) and keeps it in view
#    and wide; the + button zooms further; hovering B's acquire shows its details (times and
#    token) in the tooltip; a click on the finding highlights its calls and overlap in view;
#  - a click on stale-release's stale_release finding highlights A's release (the stale DEL) in
#    the viewport;
#  - one click on the stale-release x set_nx_ex cell lands on that variant's section of the run's
#    report.html with both red overlaps (rect.violation) in the viewport and the mutex_violation
#    finding in words beside them, its file links leading to files that exist;
#  - the fault windows of a link fault and of a server fault are drawn (rect.fault, the servers
#    row of its server), and no page of the run has a console error;
#  - `locksim report` on a directory that is not one exits 2.
# The screenshots (index.png, stale-release.png after the click, renewal-zoomed.png,
# renewal-finding.png, stale-release-finding.png, partition.png, restart.png) are kept in
# SCREENSHOT_DIR.
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
  scenarios/server-restart-forgets-lock.json scenarios/renewal-after-pause.json --seed 3 \
  --out "$OUT" --no-progress >"$WORK/run.log" 2>&1
expect_code "the four scenarios run as expected" 0 $?
expect_grep "run says where the index is" "Index: $OUT/index.html" "$WORK/run.log"

browse() {  # browse NAME ARGS...: the harness must pass
  local name=$1
  shift
  node "$SOURCE/tests/browser/browse.mjs" "$@" >"$WORK/browse.log" 2>&1
  local code=$?
  if ((code == 0)); then pass "$name"; else fail "$name (exit $code):"; sed 's/^/    /' "$WORK/browse.log"; fi
}

CELL_TD="#catalogue td.cell[data-scenario='stale-release'][data-variant='set_nx_ex']"
CELL="$CELL_TD a"
browse "index: no console error; one click from the stale-release x set_nx_ex cell to its violations in view" \
  --open "$OUT/index.html" \
  --expect "#catalogue td.cell" --count 10 \
  --expect "#catalogue td.cell.outcome-ok" --count 10 \
  --measure "$CELL_TD" --style background-color --hue red \
  --expect "$CELL_TD.safety-violation .expect-ok" --visible \
  --expect "$CELL_TD .judged-own" --text "own bug" --visible \
  --expect "#catalogue td.cell[data-scenario='stale-release'][data-variant='lua_owner'] .judged-limit" \
  --text "lease limit" --visible \
  --measure "#catalogue td.cell[data-scenario='stale-release'][data-variant='naive']" \
  --style background-color --hue green \
  --expect ".safety-legend .safety-violation" \
  --links-resolve "#catalogue td.cell a" \
  --screenshot "$SHOTS/index.png" \
  --click "$CELL" \
  --target v-set_nx_ex \
  --expect rect.violation --within :target --count 2 --visible \
  --expect "li.finding[data-kind='mutex_violation']" --within :target --count 2 \
  --links-resolve ":target nav.files a" \
  --screenshot "$SHOTS/stale-release.png"

RENEWAL=$OUT/renewal-after-pause/latest/report.html
SECTION="#v-lua_owner_renew"
browse "renewal-after-pause: the sliver of a violation is wide enough, zooms in, hovers, highlights" \
  --open "$RENEWAL" \
  --measure "$SECTION rect.violation" --box-width --at-least 5 \
  --measure "$SECTION svg.timeline" --attribute data-span-ms --save whole \
  --wheel "$SECTION rect.violation" --delta-y -800 --ctrl \
  --measure "$SECTION svg.timeline" --attribute data-span-ms --less-than whole --save wheeled \
  --expect "$SECTION rect.violation" --count 2 --visible \
  --measure "$SECTION rect.violation" --box-width --at-least 5 \
  --click "$SECTION button[data-zoom='in']" --no-navigation \
  --measure "$SECTION svg.timeline" --attribute data-span-ms --less-than wheeled \
  --click "$SECTION button[data-zoom='reset']" --no-navigation \
  --measure "$SECTION svg.timeline" --attribute data-span-ms --at-least 300 \
  --hover "$SECTION rect.op-acquire[data-client='B']" \
  --expect "div.timeline-tip" --text "acquire by B" --visible \
  --expect "div.timeline-tip" --text "invoked " \
  --expect "div.timeline-tip" --text "token " \
  --screenshot "$SHOTS/renewal-zoomed.png" --viewport-only \
  --click "$SECTION li.finding.zoomable[data-kind='mutex_violation']" --no-navigation \
  --expect "$SECTION li.finding.selected" --count 1 \
  --measure "$SECTION svg.timeline" --attribute data-span-ms --less-than whole \
  --expect "$SECTION rect.op.highlight" --count 2 --visible \
  --expect "$SECTION rect.violation.highlight" --count 2 --visible \
  --screenshot "$SHOTS/renewal-finding.png" --viewport-only

browse "stale-release: the stale_release finding highlights A's release, the stale DEL" \
  --open "$OUT/stale-release/latest/report.html#v-set_nx_ex" \
  --click "#v-set_nx_ex li.finding.zoomable[data-cause='stale_release']" --no-navigation \
  --expect "#v-set_nx_ex rect.op-release.highlight[data-client='A']" --visible \
  --expect "#v-set_nx_ex rect.violation.highlight" --count 2 --visible \
  --hover "#v-set_nx_ex rect.op-release.highlight[data-client='A']" \
  --expect "div.timeline-tip" --text "release by A" --visible \
  --expect "div.timeline-tip" --text "deleted 1 key" \
  --screenshot "$SHOTS/stale-release-finding.png" --viewport-only

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
