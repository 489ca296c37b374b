"""Shared by the Python adapters (python-redis-py, python-redis-py-asyncio, python-tooz): the
protocol's line handling, the checks a request passes before it reaches the library, redis-py
exceptions in the protocol's words, and the fenced store's script. See adapters/README.md.

An adapter puts this folder on sys.path (`sys.path.insert(0, .../adapters/python)`) and imports
`common`; it writes its own `Worker` and `handle()`.
"""
import json
import sys
import threading

from redis.exceptions import AuthenticationError, ConnectionError, ResponseError, TimeoutError

OPS = ("acquire", "release", "extend", "stop_renewal", "read", "write")
FENCED_WRITE = """
local fencing = tonumber(ARGV[2])
if fencing >= 0 then
  local highest = tonumber(redis.call('GET', KEYS[2]) or '-1')
  if fencing < highest then return 0 end
  redis.call('SET', KEYS[2], ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""  # sim/client/fenced_store.cc's script, verbatim
_out = threading.Lock()


def emit(message):
    with _out:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def fail(message, error="protocol"):
    return {"result": "fail", "error": error, "message": message}


def failure(e, **extra):
    """A redis-py exception in the protocol's words: info if the server may have run it."""
    result, error = "fail", "unexpected_reply"
    if isinstance(e, TimeoutError):
        result, error = "info", "timeout"
    elif isinstance(e, (AuthenticationError, ResponseError)):
        error = "reply_error"
    elif isinstance(e, ConnectionError):
        # (redis.asyncio says "Connect call failed": the cause says what happened)
        refused = "refused" in str(e) or isinstance(e.__cause__ or e.__context__, ConnectionRefusedError)
        result, error = ("fail", "refused") if refused else ("info", "closed")
    return dict(result=result, error=error, message=str(e)[:300], library_error=type(e).__name__,
                **extra)


def read_resource(r, req):
    """The protocol's "read" on a synchronous redis-py client (the asyncio adapter awaits the
    same commands)."""
    kind, key = req["resource"]["kind"], req["resource"]["key"]
    if kind == "find_or_create":
        return {"result": "ok", "value": int(r.hexists(key, req.get("record", "")))}
    value = r.get(key)
    if value is not None and not value.lstrip(b"-").isdigit():
        return fail("the counter holds %r, not an integer" % value[:40], "unexpected_reply")
    return {"result": "ok", "value": int(value or 0)}


def write_resource(r, fenced_write, client, req):
    """The protocol's "write" on a synchronous redis-py client; fenced_write is FENCED_WRITE
    registered on it."""
    kind, key, fencing = req["resource"]["kind"], req["resource"]["key"], req.get("fencing", -1)
    if kind == "fenced_counter":
        if not fenced_write(keys=[key, key + ":highest_fencing"], args=[req["value"], fencing]):
            return fail("fencing number %d is lower than one the store has accepted" % fencing,
                        "fenced")
    elif kind == "counter":
        r.set(key, int(req["value"]))
    else:
        r.hset(key, req.get("record", ""), client)
    return {"result": "ok"}


def hello(worker, version, lock_key, variants, cancel=None):
    """The reply to hello; variants: {name: renews}; cancel: how the adapter cancels a call it
    was asked to cancel ("cancel_after_ms"), or None if it cannot."""
    reply = {"result": "ok", "protocol": 1, "worker": worker, "version": version,
             "lock_key": lock_key,
             "variants": [{"name": n, "renews": r} for n, r in variants.items()]}
    if cancel:
        reply["cancel"] = cancel
    return reply


def refusal(worker, req, variants):
    """The protocol error a request gets before it reaches the library, or None (hello, a
    connect to a known variant, or an op the worker `worker` may run)."""
    op = req.get("op")
    if req.get("v") != 1:
        return fail("this adapter speaks protocol 1")
    if op == "hello":
        return None
    if op == "connect":
        if req.get("variant") not in variants:
            return fail("unknown variant %r; this adapter has %s" % (req.get("variant"), list(variants)))
        return None
    if worker is None or op not in OPS:
        return fail("unknown op %r" % op if worker else "%r before connect" % op)
    if op in ("acquire", "release") and ("crash_at" in req or "pause_at" in req):
        return fail("checkpoints are not supported by this adapter")
    if "cancel_after_ms" in req:
        after = req["cancel_after_ms"]
        if op not in ("acquire", "release", "extend"):
            return fail("cancel_after_ms applies to acquire, release and extend")
        if not getattr(worker, "CANCELS", False):
            return fail("cancellation is not supported by this adapter")
        if not isinstance(after, int) or isinstance(after, bool) or not 0 <= after <= 3600000:
            return fail("cancel_after_ms must be an integer from 0 to 3600000")
    if op in ("release", "extend") and req.get("key") not in worker.locks:
        return fail("no lock of this adapter is held for %r" % req.get("key"))
    return None


def parse(line):
    """The request on one input line, or None when there is nothing to run: not a JSON object
    (answered here) or `continue` (no reply: these adapters never pause at a checkpoint)."""
    try:
        req = json.loads(line)
        assert isinstance(req, dict)
    except (ValueError, AssertionError):
        emit(fail("not a JSON object"))
        return None
    return None if req.get("op") == "continue" else req


def malformed(req, e):
    return fail("malformed %r request: %s: %s" % (req.get("op"), type(e).__name__, e))


def answer(req, reply):
    emit(dict(id=req.get("id", 0), **reply))


def serve(handle):
    """The protocol loop: handle(worker, req) -> (worker, reply), one request at a time."""
    worker = None
    for line in iter(sys.stdin.readline, ""):
        req = parse(line)
        if req is None:
            continue
        try:
            worker, reply = handle(worker, req)
        except (KeyError, TypeError, ValueError) as e:
            reply = malformed(req, e)
        except Exception as e:  # noqa: BLE001 - reported, and the adapter goes on
            reply = failure(e)
        answer(req, reply)
    return 0
