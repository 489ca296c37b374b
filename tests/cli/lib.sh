# lib.sh: the helpers the CLI test scripts share. Source it, then call pass/fail/expect_*, and end
# with `finish`.
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); echo "FAILED: $1"; }
expect_code() {  # expect_code NAME EXPECTED ACTUAL [OUTPUT_FILE: printed when the code differs]
  if [[ $3 == "$2" ]]; then
    pass "$1 (exit $3)"
  else
    fail "$1: expected exit $2, got $3"
    if [[ -n ${4:-} && -f $4 ]]; then sed 's/^/    /' "$4" | tail -n 60; fi
  fi
}
expect_grep() {  # expect_grep NAME PATTERN FILE
  if grep -q -- "$2" "$3"; then pass "$1"; else fail "$1: no '$2' in $3:"; sed 's/^/    /' "$3"; fi
}
expect_no_grep() {  # expect_no_grep NAME PATTERN FILE
  if grep -q -- "$2" "$3"; then fail "$1: '$2' in $3:"; sed 's/^/    /' "$3"; else pass "$1"; fi
}
signal_run() {  # signal_run SIGNAL PID OUT_DIR: signals a running `locksim run` writing to OUT_DIR
  # and checks how it ends: exit 137 for KILL, else exit 130 and a summary.md saying interrupted.
  local signal=$1 pid=$2 out=$3 code summary
  kill -s "$signal" "$pid"
  wait "$pid"
  code=$?
  if [[ $signal == KILL ]]; then
    expect_code "SIGKILL of locksim" 137 "$code"
  else
    expect_code "SIG$signal stops the run" 130 "$code"
    summary=$(ls "$out"/*/*/summary.md 2>/dev/null | head -1)
    if [[ -n $summary ]] && grep -q interrupted "$summary"; then
      pass "SIG$signal: the partial summary says the run was interrupted"
    else
      fail "SIG$signal: no summary saying interrupted under $out"
    fi
  fi
}
# in_shrink OUTPUT SIGNATURE REGEX: a line of explore's shrink of SIGNATURE in OUTPUT matches REGEX.
in_shrink() {
  awk -v sig="Shrunk $2 (" -v re="$3" 'index($0, sig) == 1 {on = 1; next} /^Shrunk / {on = 0}
                                       on && $0 ~ re {found = 1} END {exit !found}' "$1"
}
# confirmed OUTPUT SIGNATURE: explore's shrink of SIGNATURE was confirmed on a real server.
confirmed() { in_shrink "$1" "$2" "confirmed on a real redis-server: [1-9]"; }
# slow SECONDS: a bound on one command of a test, four times as long under a sanitizer
# (./scripts/sanitize sets LOCKSIM_SANITIZER; sanitized programs run 5 to 20 times slower).
slow() { if [[ -n ${LOCKSIM_SANITIZER:-} ]]; then echo $(($1 * 4)); else echo "$1"; fi; }
# explore_finds_own LOCK SIGNATURE REFERENCE DRAWN OUT: `explore` of the user lock LOCK
# (tests/cli/LOCK.json) finds SIGNATURE, stopping at it (--first-own), with DRAWN among what it
# exercised; REFERENCE does not show it (the lock's own); shrunk and confirmed on a real server.
# Its output is OUT.out. Needs LOCKSIM and SOURCE.
explore_finds_own() {
  local lock=$1 signature=$2 reference=$3 drawn=$4 out=$5
  timeout "$(slow 150)" "$LOCKSIM" explore --variant-file "$SOURCE/tests/cli/$lock.json" \
    --variant "$lock" --time 8s -j 2 --first-own --confirm 2 --out "$out" --no-progress \
    >"$out.out" 2>&1
  expect_code "explore finds $lock's $signature" 1 $? "$out.out"
  expect_grep "$lock: $drawn is drawn" "$drawn (" "$out.out"
  if in_shrink "$out.out" "$signature" "Its own: $reference does not show it"; then
    pass "$lock: $signature is the lock's own"
  else
    fail "$lock: $signature is not judged its own:"; sed 's/^/    /' "$out.out"
  fi
  if confirmed "$out.out" "$signature"; then
    pass "$lock: $signature is confirmed on a real server"
  else
    fail "$lock: $signature is not confirmed:"; sed 's/^/    /' "$out.out"
  fi
}
# count_orphans: redis-servers and sentinels whose parent is gone (reparented to init). Other
# tests start servers at the same time, but a live locksim's servers are its children, so only a
# server that outlived whoever started it counts. (Redis rewrites its command line to
# "redis-server host:port", so the process name, not the arguments, finds it.)
count_orphans() {
  ps -eo ppid=,comm= | awk '$1 == 1 && ($2 == "redis-server" || $2 == "redis-sentinel")' | wc -l
}
# orphans_after BEFORE: count_orphans once it is at most BEFORE, or after 5 s: a server another
# test is stopping at that moment (its starter gone first) is an orphan for a few milliseconds,
# which a single look counted as one left behind (cluster_end_to_end, once, at -j 3); one left
# behind stays.
orphans_after() {
  local now
  for _ in $(seq 50); do
    now=$(count_orphans)
    [[ $now -le $1 ]] && break
    sleep 0.1
  done
  echo "$now"
}
finish() {  # prints the tally; fails the script if anything failed
  echo "passed: $passed, failed: $failed"
  [[ $failed -eq 0 ]]
}
