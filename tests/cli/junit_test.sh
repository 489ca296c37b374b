#!/usr/bin/env bash
# junit_test.sh LOCKSIM SOURCE_DIR: `locksim run --junit FILE` writes JUnit XML that CI systems
# read. Proves:
#  - the file validates against tests/junit/junit.xsd (xmllint), as expected outcomes and with a
#    mismatch;
#  - an independent reader (Python's xml.etree, not locksim's code) finds one test case per
#    scenario x variant run, the counts agree with the cases, and the mismatched run is a failure
#    whose message is "expected ..., observed ..." and whose text holds the findings in words;
#  - with --repeat, each repetition is its own case (name#n);
#  - a FILE in a directory that does not exist, or a directory, is refused before anything runs
#    (exit 2, naming it), and leaves no file behind.
set -uo pipefail
LOCKSIM=$1
SOURCE=$2
WORK=$(mktemp -d /tmp/locksim-junit-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib.sh"
cd "$SOURCE" || exit 1
SCHEMA=$SOURCE/tests/junit/junit.xsd

# A copy of stale-release whose expectation for set_nx_ex is wrong: that run must be a failure.
/usr/bin/python3 - "$SOURCE/scenarios/stale-release.json" "$WORK/wrong-expectation.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["name"] = "wrong-expectation"
doc["expect"]["set_nx_ex"] = "ok"
json.dump(doc, open(sys.argv[2], "w"))
PY

"$LOCKSIM" run scenarios/get-then-del-race.json "$WORK/wrong-expectation.json" --out "$WORK/out" \
  --no-progress --junit "$WORK/run.xml" >"$WORK/run.log" 2>&1
expect_code "a mismatch still exits 1 with --junit" 1 $?
expect_grep "the run says where the JUnit file is" "JUnit: $WORK/run.xml" "$WORK/run.log"
if xmllint --noout --schema "$SCHEMA" "$WORK/run.xml" >"$WORK/lint.log" 2>&1; then
  pass "the JUnit file validates against the schema"
else
  fail "the JUnit file does not validate:"; sed 's/^/    /' "$WORK/lint.log"
fi

/usr/bin/python3 - "$WORK/run.xml" >"$WORK/read.log" 2>&1 <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
problems = []
def check(cond, what):
    if not cond: problems.append(what)
check(root.tag == "testsuites", "root is <testsuites>")
suites = root.findall("testsuite")
check([s.get("name") for s in suites] == ["get-then-del-race", "wrong-expectation"],
      "one suite per scenario, in order: %s" % [s.get("name") for s in suites])
cases = root.findall("testsuite/testcase")
names = [(c.get("classname"), c.get("name")) for c in cases]
check(("locksim.get-then-del-race", "get_then_del") in names, "get_then_del case")
check(len(cases) == 3 + 4, "7 cases, got %d" % len(cases))
failures = [c for c in cases if c.find("failure") is not None]
check(len(failures) == 1, "exactly one failure, got %d" % len(failures))
if failures:
    f = failures[0]
    check(f.get("name") == "set_nx_ex", "the failure is set_nx_ex's run")
    message = f.find("failure").get("message")
    check(message.startswith("expected ok, observed mutex_violation"), "message: %r" % message)
    check("A" in (f.find("failure").text or ""), "the findings in words: %r" % f.find("failure").text)
for node in [root] + suites:
    inner = node.findall(".//testcase")
    check(int(node.get("tests")) == len(inner), "%s tests count" % node.get("name"))
    check(int(node.get("failures")) == sum(c.find("failure") is not None for c in inner),
          "%s failures count" % node.get("name"))
    check(float(node.get("time")) >= 0, "%s time" % node.get("name"))
for c in cases:
    check((c.findtext("system-out") or "").startswith("report: "), "system-out names the report")
print("\n".join(problems) if problems else "read ok")
sys.exit(1 if problems else 0)
PY
expect_code "an independent reader finds the cases, the counts and the failure" 0 $?
expect_grep "the reader's verdict" "read ok" "$WORK/read.log"

"$LOCKSIM" run scenarios/get-then-del-race.json --variant lua_owner --repeat 2 --out "$WORK/out" \
  --no-progress --junit "$WORK/repeat.xml" >"$WORK/repeat.log" 2>&1
expect_code "repeated runs as expected" 0 $?
expect_grep "each repetition is a case of its own" 'name="lua_owner#2"' "$WORK/repeat.xml"
xmllint --noout --schema "$SCHEMA" "$WORK/repeat.xml" 2>/dev/null
expect_code "the repeated run's file validates" 0 $?

"$LOCKSIM" run scenarios/get-then-del-race.json --variant lua_owner --out "$WORK/out" \
  --no-progress --junit "$WORK/no-such-dir/run.xml" >"$WORK/bad.log" 2>&1
expect_code "a JUnit path in a missing directory is refused" 2 $?
expect_grep "the message names the path" "no-such-dir" "$WORK/bad.log"
expect_no_grep "refused before anything ran" "scenario x variant" "$WORK/bad.log"
if [[ -e $WORK/no-such-dir/run.xml ]]; then fail "a file was left behind"; else pass "no file left behind"; fi
"$LOCKSIM" run scenarios/get-then-del-race.json --out "$WORK/out" --no-progress \
  --junit "$WORK" >"$WORK/dir.log" 2>&1
expect_code "a directory as the JUnit path is refused" 2 $?
expect_grep "the message says a file name was expected" "expected a file name" "$WORK/dir.log"
finish
