#!/usr/bin/python3
"""locksim worker-protocol adapter for redis-py's Lock (redis.lock.Lock); see README.md.

Variants: lib:redis-py (Lock as is) and lib:redis-py-renew (plus a watchdog thread calling
Lock.reacquire() every renew_period_ms: the loop a redis-py user writes by hand). With connect's
"cluster" the Lock is given a RedisCluster (redis.cluster, redis-py 4.1 and later).
"""
import logging
import os
import sys
import threading
import time

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import LockNotOwnedError, RedisClusterException, RedisError
from redis.lock import Lock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from common import FENCED_WRITE, emit, failure  # noqa: E402 - adapters/python/common.py
import common  # noqa: E402

VARIANTS = {"lib:redis-py": False, "lib:redis-py-renew": True}  # name -> renews
# What a call may raise: RedisCluster's own errors (no node serves the slot) are no RedisError.
ERRORS = (RedisError, RedisClusterException)


class ObservedLock(Lock):
    """A Lock whose own attempts are counted; its first busy answer sends "busy"."""
    attempts = sent_ns = 0

    def do_acquire(self, token):
        self.attempts, self.sent_ns = self.attempts + 1, time.monotonic_ns()
        acquired = super().do_acquire(token)
        if not acquired and self.attempts == 1:
            emit({"event": "busy"})
        return acquired


def watchdog(lock, period_s, stopped):
    # Each renewal falls due a period after the previous one returned, a deadline taken before
    # anything is written: a process stopped (SIGSTOP) before it went back to sleep renews at
    # once when it is continued, if the deadline passed meanwhile (as locksim's own workers do).
    due = time.monotonic() + period_s
    while not stopped.wait(max(0.0, due - time.monotonic())):
        emit({"event": "extend", "phase": "invoke"})
        try:
            lock.reacquire()  # the TTL back to the Lock's timeout
            due = time.monotonic() + period_s
            emit({"event": "extend", "result": "ok", "extended": 1})
        except LockNotOwnedError as e:
            emit({"event": "extend", "result": "ok", "extended": 0, "library_error": type(e).__name__})
            return  # nothing left to renew
        except ERRORS as e:
            due = time.monotonic() + period_s
            emit(dict(event="extend", **failure(e)))


class OneLine(logging.Formatter):
    """redis.cluster logs every redirection and retry with log.exception: one line each on
    stderr (kept in the run directory), the exception's class and message, not its traceback."""

    def format(self, record):
        error = record.exc_info[1] if record.exc_info else None
        said = "%s: %s" % (type(error).__name__, error) if error else record.getMessage()
        return "redis-py cluster: %s" % said


def cluster_logging():
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    logger = logging.getLogger("redis.cluster")
    logger.addHandler(handler)
    logger.setLevel(logging.ERROR)
    logger.propagate = False


def client(req):
    """redis-py's client for connect: a RedisCluster when connect carries "cluster" (every node
    of a Redis Cluster topology, the lock's primary first: the seeds of its slot map), with its
    defaults (it follows MOVED and ASK; after a connection error or a timeout it retries the node
    every 0.25 s, 5 times, then reads the slot map again, and the whole command 3 times); else a
    Redis of the one server."""
    server = req["redis"]
    options = dict(username=server.get("username") or None, password=server.get("password") or None,
                   socket_timeout=2, socket_connect_timeout=2)
    if "cluster" in req:
        nodes = req["cluster"]
        if not isinstance(nodes, list) or not nodes:
            raise ValueError("cluster must be a list of {host, port}")
        cluster_logging()
        return RedisCluster(startup_nodes=[ClusterNode(n["host"], n["port"]) for n in nodes],
                            **options)
    return redis.Redis(host=server["host"], port=server["port"], db=server.get("db", 0), **options)


class Worker:
    def __init__(self, req):
        config = req["lock"]
        self.client, self.renews = req["client"], VARIANTS[req["variant"]]
        self.renew_s = config["renew_period_ms"] / 1000
        wait = config.get("wait", {})  # the scenario's poll interval, else redis-py's 0.1 s
        self.sleep = wait["interval_ms"] / 1000 if wait.get("strategy") == "poll" else 0.1
        self.r = client(req)
        self.r.ping()
        self.fenced_write = self.r.register_script(FENCED_WRITE)
        self.locks, self.renewal = {}, None

    def stop_renewal(self, req=None):
        if self.renewal:
            self.renewal[1].set()
            self.renewal[0].join()
            self.renewal = None
        return {"result": "ok"}

    def acquire(self, req):
        received = time.monotonic_ns()
        # redis-py keeps the token thread-local by default: the watchdog thread could not see it.
        lock = ObservedLock(self.r, req["key"], timeout=req["ttl_ms"] / 1000, sleep=self.sleep,
                            thread_local=not self.renews)
        try:
            granted = lock.acquire(blocking_timeout=req["timeout_ms"] / 1000)
        except ERRORS as e:
            return failure(e, attempts=lock.attempts)
        if not granted:
            return {"result": "fail", "error": "gave_up", "attempts": lock.attempts}
        self.locks[req["key"]] = lock
        if self.renews:
            self.stop_renewal()
            stopped = threading.Event()
            thread = threading.Thread(target=watchdog, args=(lock, self.renew_s, stopped), daemon=True)
            thread.start()
            self.renewal = (thread, stopped)
        return {"result": "ok", "token": lock.local.token.decode(), "attempts": lock.attempts,
                "sent_after_ns": lock.sent_ns - received}

    def release(self, req):
        self.stop_renewal()
        lock = self.locks.pop(req["key"])
        try:
            lock.release()
        except LockNotOwnedError as e:
            return {"result": "ok", "deleted": 0, "library_error": type(e).__name__}
        return {"result": "ok", "deleted": 1}

    def extend(self, req):
        try:  # replace_ttl: the lease ends ttl_ms from now (the default adds to what is left)
            self.locks[req["key"]].extend(req["ttl_ms"] / 1000, replace_ttl=True)
        except LockNotOwnedError as e:
            return {"result": "ok", "extended": 0, "library_error": type(e).__name__}
        return {"result": "ok", "extended": 1}

    def read(self, req):
        return common.read_resource(self.r, req)

    def write(self, req):
        return common.write_resource(self.r, self.fenced_write, self.client, req)


def handle(worker, req):
    """The reply to one request, and the worker after it."""
    op = req.get("op")
    refused = common.refusal(worker, req, VARIANTS)
    if refused:
        return worker, refused
    if op == "hello":
        return worker, common.hello("redis-py", redis.__version__, "{key}", VARIANTS)
    if op == "connect":
        try:
            return Worker(req), {"result": "ok"}
        except ERRORS as e:
            return None, failure(e)
    try:
        return worker, getattr(worker, op)(req)
    except ERRORS as e:
        return worker, failure(e)


if __name__ == "__main__":
    sys.exit(common.serve(handle))
