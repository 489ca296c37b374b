#!/usr/bin/env bash
# owner_checked_explore_test.sh LOCKSIM [SCHEDULES]: the checker blames no correct, owner-checked
# lock for a stale release or a stolen renewal.
# Proves: every owner-checked built-in explored on the simulator, with the whole fault menu and
# with each fault alone, shows no `stale_release` and no `stolen_renewal` finding in its --json
# summary and no finding of its own at all (exit 0: only the limits of every lease; a release is
# stale, and a renewal stolen, only if the key it changed was granted to
# another client after the caller's own grant; docs/outputs.md). SCHEDULES per run, or
# $LOCKSIM_OWNER_CHECKED_SCHEDULES, default 3000 (seconds); the long mode of docs/testing.md runs
# 1,000,000 per variant. Fails if a schedule could not run.
set -uo pipefail
LOCKSIM=$1
SCHEDULES=${2:-${LOCKSIM_OWNER_CHECKED_SCHEDULES:-3000}}
WORK=$(mktemp -d /tmp/locksim-owner-checked.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"

# Each exploration's bound: 600 s, or a second per 500 schedules in the long mode.
LIMIT=$(( SCHEDULES / 500 > 600 ? SCHEDULES / 500 : 600 ))
FAULTS="crash checkpoint pause overrun lost_reply delay partition restart clock_jump node_down"
# lua_owner_wait runs on a primary with a replica (explore draws it there: it WAITs for one).
VARIANTS="lua_owner lua_owner_renew lua_owner_wait lua_fair_queue lua_owner_fenced redlock"

# explore_clean NAME ARGS...: one exploration whose summary names no stale release nor stolen
# renewal, and in which every schedule ran.
explore_clean() {
  local name=$1
  shift
  local json="$WORK/$name.json"
  timeout "$LIMIT" "$LOCKSIM" explore "$@" -j 2 --no-shrink --no-progress --out "$WORK/$name" \
    --json "$json" >"$WORK/$name.out" 2>&1
  local code=$?
  if [[ $code -eq 2 ]] && grep -q "none of it applies to" "$WORK/$name.out"; then
    pass "$name: refused, the fault does not apply to it"; return
  fi
  # A correct lock has no finding of its own (exit 0): what it shows is the limits of every lease.
  if [[ $code -ne 0 ]]; then
    fail "$name: explore exited $code (0: no finding of its own)"
    sed -n '/^Findings of/,/^Limits/p' "$WORK/$name.out" | head -12 | sed 's/^/    /'
    tail -3 "$WORK/$name.out" | sed 's/^/    /'; return
  fi
  local verdict
  verdict=$(python3 - "$json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
bad = [f"{kind} (first seed {f['first_seed']}, {f['schedules']} schedules)"
       for kind, f in summary["findings"].items()
       if "stale_release" in kind or "stolen_renewal" in kind]
if summary.get("could_not_run"):
    bad.append(f"could not run: {summary['could_not_run']}")
print("; ".join(bad) if bad else "clean", summary["schedules"])
PY
)
  if [[ $verdict == clean* ]]; then
    pass "$name: ${verdict#clean } schedules, no stale_release, no stolen_renewal"
  else
    fail "$name: $verdict"
  fi
}

for variant in $VARIANTS; do
  explore_clean "$variant-menu" --variant "$variant" --schedules "$SCHEDULES"
  for fault in $FAULTS; do
    # A fault the variant has no use for (a checkpoint of a one-command lock, a node of one
    # server) is refused (exit 2, "none of it applies"), not run without faults.
    explore_clean "$variant-$fault" --variant "$variant" --faults "$fault" \
      --schedules $(( (SCHEDULES + 2) / 3 ))
  done
done
finish
