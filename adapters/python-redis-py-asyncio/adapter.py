#!/usr/bin/python3
"""locksim worker-protocol adapter for redis-py's asyncio Lock (redis.asyncio.lock.Lock); see
README.md.

One asyncio event loop per process: stdin is read by the loop's default executor, so the loop
keeps running (and a renewal task keeps renewing) while the adapter waits for the next request.
Variants: lib:redis-py-asyncio (Lock as is) and lib:redis-py-asyncio-renew (plus a watchdog task
awaiting Lock.reacquire() every renew_period_ms: the loop a redis-py user writes by hand).
"""
import asyncio
import os
import sys
import time

import redis
import redis.asyncio
from redis.asyncio.lock import Lock
from redis.exceptions import LockError, LockNotOwnedError, RedisError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from common import FENCED_WRITE, emit, fail, failure  # noqa: E402 - adapters/python/common.py
import common  # noqa: E402

VARIANTS = {"lib:redis-py-asyncio": False, "lib:redis-py-asyncio-renew": True}  # name -> renews


class ObservedLock(Lock):
    """A Lock whose own attempts are counted; its first busy answer sends "busy"."""
    attempts = sent_ns = 0

    async def do_acquire(self, token):
        self.attempts, self.sent_ns = self.attempts + 1, time.monotonic_ns()
        acquired = await super().do_acquire(token)
        if not acquired and self.attempts == 1:
            emit({"event": "busy"})
        return acquired


async def watchdog(lock, period_s, stopped):
    # As the sync adapter's watchdog thread: each renewal falls due a period after the previous
    # one returned. It ends when `stopped` is set, never by cancellation: a task cancelled
    # between sending a command and reading its reply would hand redis-py's pool a connection
    # with a reply still owed (redis-py < 4.5.3, CVE-2023-28858).
    due = time.monotonic() + period_s
    while True:
        try:
            await asyncio.wait_for(stopped.wait(), max(0.0, due - time.monotonic()))
            return
        except asyncio.TimeoutError:
            pass
        emit({"event": "extend", "phase": "invoke"})
        try:
            await lock.reacquire()  # the TTL back to the Lock's timeout
            due = time.monotonic() + period_s
            emit({"event": "extend", "result": "ok", "extended": 1})
        except LockNotOwnedError as e:
            emit({"event": "extend", "result": "ok", "extended": 0, "library_error": type(e).__name__})
            return  # nothing left to renew
        except RedisError as e:
            due = time.monotonic() + period_s
            emit(dict(event="extend", **failure(e)))


class Worker:
    CANCELS = True  # "cancel_after_ms": the call's task is cancelled (Task.cancel)

    def __init__(self, req):
        server, config = req["redis"], req["lock"]
        self.client, self.renews = req["client"], VARIANTS[req["variant"]]
        self.renew_s = config["renew_period_ms"] / 1000
        wait = config.get("wait", {})  # the scenario's poll interval, else redis-py's 0.1 s
        self.sleep = wait["interval_ms"] / 1000 if wait.get("strategy") == "poll" else 0.1
        self.r = redis.asyncio.Redis(host=server["host"], port=server["port"], db=server.get("db", 0),
                                     username=server.get("username") or None,
                                     password=server.get("password") or None,
                                     socket_timeout=2, socket_connect_timeout=2)
        self.fenced_write = self.r.register_script(FENCED_WRITE)
        self.locks, self.renewal = {}, None

    async def stop_renewal(self, req=None):
        if self.renewal:
            self.renewal[1].set()
            await self.renewal[0]
            self.renewal = None
        return {"result": "ok"}

    async def acquire(self, req):
        received = time.monotonic_ns()
        # thread_local=True (the default) is one token per thread: every task of this loop,
        # the watchdog's included, sees the same token.
        lock = ObservedLock(self.r, req["key"], timeout=req["ttl_ms"] / 1000, sleep=self.sleep)
        try:
            granted = await lock.acquire(blocking_timeout=req["timeout_ms"] / 1000)
        except RedisError as e:
            return failure(e, attempts=lock.attempts)
        if not granted:
            return {"result": "fail", "error": "gave_up", "attempts": lock.attempts}
        self.locks[req["key"]] = lock
        if self.renews:
            await self.stop_renewal()
            stopped = asyncio.Event()
            task = asyncio.create_task(watchdog(lock, self.renew_s, stopped))
            self.renewal = (task, stopped)
        return {"result": "ok", "token": lock.local.token.decode(), "attempts": lock.attempts,
                "sent_after_ns": lock.sent_ns - received}

    async def release(self, req):
        await self.stop_renewal()
        key = req["key"]
        lock = self.locks[key]
        try:
            await lock.release()
        except asyncio.CancelledError:
            # The Lock stays for a retry, as an application keeps it; but release() forgot its
            # token before the cancelled coroutine ran (redis/asyncio/lock.py:246), so a retry
            # raises LockError and the key stays until its TTL (redis/redis-py#3847).
            raise
        except LockNotOwnedError as e:
            del self.locks[key]
            return {"result": "ok", "deleted": 0, "library_error": type(e).__name__}
        except LockError as e:  # no token: the retry of a cancelled release
            del self.locks[key]
            return {"result": "fail", "error": "not_held", "library_error": type(e).__name__,
                    "message": str(e)[:300]}
        except BaseException:
            del self.locks[key]
            raise
        del self.locks[key]
        return {"result": "ok", "deleted": 1}

    async def extend(self, req):
        try:  # replace_ttl: the lease ends ttl_ms from now (the default adds to what is left)
            await self.locks[req["key"]].extend(req["ttl_ms"] / 1000, replace_ttl=True)
        except LockNotOwnedError as e:
            return {"result": "ok", "extended": 0, "library_error": type(e).__name__}
        return {"result": "ok", "extended": 1}

    async def read(self, req):
        kind, key = req["resource"]["kind"], req["resource"]["key"]
        if kind == "find_or_create":
            return {"result": "ok", "value": int(await self.r.hexists(key, req.get("record", "")))}
        value = await self.r.get(key)
        if value is not None and not value.lstrip(b"-").isdigit():
            return fail("the counter holds %r, not an integer" % value[:40], "unexpected_reply")
        return {"result": "ok", "value": int(value or 0)}

    async def write(self, req):
        kind, key, fencing = req["resource"]["kind"], req["resource"]["key"], req.get("fencing", -1)
        if kind == "fenced_counter":
            if not await self.fenced_write(keys=[key, key + ":highest_fencing"], args=[req["value"], fencing]):
                return fail("fencing number %d is lower than one the store has accepted" % fencing,
                            "fenced")
        elif kind == "counter":
            await self.r.set(key, int(req["value"]))
        else:
            await self.r.hset(key, req.get("record", ""), self.client)
        return {"result": "ok"}


async def connect(req):
    worker = Worker(req)
    try:
        await worker.r.ping()
    except BaseException:
        await worker.r.close()
        raise
    return worker


async def handle(worker, req):
    """The reply to one request, and the worker after it."""
    op = req.get("op")
    refused = common.refusal(worker, req, VARIANTS)
    if refused:
        return worker, refused
    if op == "hello":
        return worker, common.hello("redis-py-asyncio", redis.__version__, "{key}", VARIANTS,
                                    cancel="task")
    if op == "connect":
        try:
            return await connect(req), {"result": "ok"}
        except RedisError as e:
            return None, failure(e)
    try:
        if "cancel_after_ms" in req:
            return worker, await cancelled_after(getattr(worker, op)(req), req["cancel_after_ms"], op)
        return worker, await getattr(worker, op)(req)
    except RedisError as e:
        return worker, failure(e)


async def cancelled_after(call, after_ms, op):
    """Runs the call as a task and cancels it (Task.cancel, as an application's timeout or
    shutdown does) if it has not ended after after_ms: the reply is then info "cancelled", since
    what the call had sent may have run on the server."""
    task = asyncio.create_task(call)
    done, _ = await asyncio.wait({task}, timeout=after_ms / 1000)
    if task in done:
        return task.result()
    task.cancel()
    try:
        return await task  # it ended before the cancellation reached it
    except asyncio.CancelledError:
        return {"result": "info", "error": "cancelled",
                "message": "the %s task was cancelled after %d ms (Task.cancel); what it had "
                           "sent may have run" % (op, after_ms)}


async def serve():
    """common.serve's loop on the event loop: a line at a time from the default executor."""
    loop, worker = asyncio.get_running_loop(), None
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        req = common.parse(line)
        if req is None:
            continue
        try:
            worker, reply = await handle(worker, req)
        except (KeyError, TypeError, ValueError) as e:
            reply = common.malformed(req, e)
        except Exception as e:  # noqa: BLE001 - reported, and the adapter goes on
            reply = failure(e)
        common.answer(req, reply)
    if worker is not None:
        await worker.stop_renewal()
        await worker.r.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(serve()))
