#!/usr/bin/python3
"""A deliberately broken worker-protocol adapter, for the harness's tests of bad workers.

The mode is the first argument, or else $LOCKSIM_BROKEN_ADAPTER:
  crash    answers hello and connect, then on the first acquire writes to stderr and exits 1
           without a reply
  hang     never writes anything, and does not exit at the end of its input either (only a
           signal ends it)
  garbage  answers every request with a line that is not JSON
  version  answers hello with protocol 99 (and everything else like a working adapter)
  mistyped answers an acquire with a fencing number written as a string (a library's reply
           mismatched after a lost one, as simple-redis-mutex's can be)
  late     poses as locksim's own worker ("worker": "locksim") and, on an acquire, sends a
           renewal's invoke event 300 ms after the monotonic instant it names, as a loaded
           machine would deliver it (touches no Redis: every call succeeds)
Anything else: exit 2 with a usage line on stderr. Stdlib only; touches no Redis.
"""
import json
import os
import sys
import time

MODES = ("crash", "hang", "garbage", "version", "late", "mistyped")


def reply(request, **fields):
    sys.stdout.write(json.dumps(dict(id=request.get("id", 0), **fields)) + "\n")
    sys.stdout.flush()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LOCKSIM_BROKEN_ADAPTER", "")
    if mode not in MODES:
        sys.stderr.write("usage: broken_adapter.py crash|hang|garbage|version|late|mistyped "
                         "(or LOCKSIM_BROKEN_ADAPTER=...)\n")
        return 2
    for line in iter(sys.stdin.readline, ""):
        if mode == "hang":
            continue
        if mode == "garbage":
            sys.stdout.write("this is not JSON {\n")
            sys.stdout.flush()
            continue
        try:
            request = json.loads(line)
        except ValueError:
            sys.stdout.write(json.dumps({"result": "fail", "error": "protocol",
                                         "message": "not a JSON object"}) + "\n")
            sys.stdout.flush()
            continue
        op = request.get("op")
        if op == "hello":
            reply(request, result="ok", protocol=99 if mode == "version" else 1,
                  worker="locksim" if mode == "late" else "broken-" + mode, version="0")
        elif op == "acquire" and mode == "crash":
            sys.stderr.write("broken_adapter: crashing in the middle of an acquire\n")
            sys.stderr.flush()
            sys.exit(1)
        elif op == "acquire" and mode == "late":
            reply(request, result="ok", token="late", attempts=1)
            sent = time.monotonic_ns()
            time.sleep(0.3)
            sys.stdout.write(json.dumps({"event": "extend", "phase": "invoke",
                                         "monotonic_ns": sent}) + "\n")
            sys.stdout.write(json.dumps({"event": "extend", "result": "ok", "extended": 1}) + "\n")
            sys.stdout.flush()
        elif op == "acquire" and mode == "mistyped":
            reply(request, result="ok", token="broken", attempts=1, fencing="OK")
        elif op == "acquire":
            reply(request, result="ok", token="broken", attempts=1)
        elif op == "release":
            reply(request, result="ok", deleted=1)
        elif op == "extend":
            reply(request, result="ok", extended=1)
        elif op == "read":
            reply(request, result="ok", value=0)
        elif op != "continue":
            reply(request, result="ok")
    while mode == "hang":
        time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
