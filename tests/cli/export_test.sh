#!/usr/bin/env bash
# export_test.sh LOCKSIM SOURCE_DIR: `locksim export` writes a history as Jepsen's (Knossos,
# elle-cli) and Porcupine's checkers read it. Proves, on a real run of stale-release where
# set_nx_ex lets two clients in beside a third:
#  - an independent reader written here (not locksim's code) finds, from the Knossos EDN and from
#    the Porcupine JSON alike, the same overlapping holds as locksim's checker (the clients of its
#    mutex_violation findings in results.json): A-B and B-C for set_nx_ex, and for lua_owner,
#    which refuses A's stale release, only the expiry overlap A-B;
#  - Jepsen's rule: no process has two operations open at once;
#  - bad input: a run with several variants and no --variant, an unknown --key, an unknown format
#    are refused (exit 2) with what was expected.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-export-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"
cd "$SOURCE" || exit 1

"$LOCKSIM" run scenarios/stale-release.json --variant set_nx_ex --variant lua_owner --seed 5 \
  --out "$WORK/out" --no-progress >"$WORK/run.log" 2>&1
expect_code "stale-release runs as expected" 0 $?
run=$WORK/out/stale-release/latest
for variant in set_nx_ex lua_owner; do
  "$LOCKSIM" export "$run" --variant "$variant" --format knossos --out "$WORK/$variant.edn" 2>/dev/null
  expect_code "export $variant as knossos" 0 $?
  "$LOCKSIM" export "$run" --variant "$variant" --format porcupine >"$WORK/$variant.json" 2>/dev/null
  expect_code "export $variant as porcupine (standard output)" 0 $?
  /usr/bin/python3 - "$WORK/$variant.edn" "$WORK/$variant.json" "$run/$variant/results.json" \
    >"$WORK/$variant.check" 2>&1 <<'PY'
import json, re, sys
edn, porcupine, results = sys.argv[1:4]

def overlaps(holds):
    pairs = set()
    for i, (a, s1, e1) in enumerate(holds):
        for (b, s2, e2) in holds[i + 1:]:
            if a != b and s1 < e2 and s2 < e1:
                pairs.add(tuple(sorted((a, b))))
    return pairs

# Knossos: one EDN map per line; a hold is from an acquire :ok to its process's next release
# :invoke (or the end of the history).
field = lambda line, name: re.search(r":%s (\S+?)[,}]" % name, line).group(1)
ops = [l for l in open(edn) if l.strip()]
end = max(int(field(l, "time")) for l in ops)
open_ops, holds, held, problems = {}, [], {}, []
for line in ops:
    process, kind, f = field(line, "process"), field(line, "type"), field(line, "f")
    client = re.search(r':client "([^"]*)"', line).group(1)
    time = int(field(line, "time"))
    if kind == ":invoke":
        if process in open_ops: problems.append("process %s has two operations open" % process)
        open_ops[process] = f
        if f == ":release" and client in held:
            holds.append((client, held.pop(client), time))
    else:
        open_ops.pop(process, None)
        if f == ":acquire" and kind == ":ok":
            held[client] = time
for client, start in held.items():
    holds.append((client, start, end))
knossos = overlaps(holds)

# Porcupine: an acquire whose output is ok holds from its return to the client's next release call.
ops = sorted(json.load(open(porcupine)), key=lambda o: o["call"])
holds, held = [], {}
for o in ops:
    client = o["input"]["client"]
    if o["input"]["op"] == "release" and client in held:
        holds.append((client, held.pop(client), o["call"]))
for o in ops:
    if o["input"]["op"] == "acquire" and o["output"].get("ok"):
        nxt = [r["call"] for r in ops if r["input"]["client"] == o["input"]["client"]
               and r["input"]["op"] == "release" and r["call"] > o["return"]]
        holds.append((o["input"]["client"], o["return"], min(nxt) if nxt else end))
porcupine_pairs = overlaps([h for h in holds if h[1] < h[2]])

locksim = set()
for f in json.load(open(results))["findings"]:
    if f["kind"] == "mutex_violation":
        locksim.add(tuple(sorted(f["clients"][:2])))
if knossos != locksim: problems.append("knossos overlaps %s, locksim %s" % (knossos, locksim))
if porcupine_pairs != locksim: problems.append("porcupine overlaps %s, locksim %s" % (porcupine_pairs, locksim))
print("\n".join(problems) if problems else "same overlaps: %s" % sorted(locksim))
PY
  expect_grep "$variant: the independent reader finds locksim's overlapping holds" "same overlaps" "$WORK/$variant.check"
done
expect_grep "set_nx_ex: the overlaps are there to find" "('A', 'B')" "$WORK/set_nx_ex.check"

"$LOCKSIM" export "$run" --format knossos >"$WORK/several.out" 2>&1
expect_code "a run of several variants needs --variant" 2 $?
expect_grep "the variants are named" "lua_owner, set_nx_ex" "$WORK/several.out"
"$LOCKSIM" export "$run" --variant lua_owner --key nope --format knossos >"$WORK/key.out" 2>&1
expect_code "an unknown --key is refused" 2 $?
expect_grep "the key is named" "\-\-key nope" "$WORK/key.out"
"$LOCKSIM" export "$run" --variant lua_owner --format jepsen >"$WORK/format.out" 2>&1
expect_code "an unknown format is refused" 2 $?
expect_grep "the formats are named" "knossos" "$WORK/format.out"
finish
