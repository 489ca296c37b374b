#!/usr/bin/python3
"""locksim worker-protocol adapter for OpenStack tooz's Redis driver lock
(tooz.drivers.redis.RedisLock, over redis-py's Lock); see README.md.

Variants: lib:tooz (coordinator.get_lock(name) as is) and lib:tooz-heartbeat (the coordinator
started with start_heart=True: tooz's own heart thread renews every lock it holds).
"""
import math
import os
import re
import sys
import threading
import time
import urllib.parse
import uuid

# tooz's executor library (futurist) imports eventlet when it is installed (Debian's tooz pulls it
# in), and with it dnspython and httpx: a second of start-up for a green-thread executor this
# adapter never asks for (tooz's default is a thread pool). Marking it missing skips that.
sys.modules.setdefault("eventlet", None)

import redis  # noqa: E402
import tooz  # noqa: E402
from redis.exceptions import (ConnectionError, LockNotOwnedError, NoPermissionError,  # noqa: E402
                              RedisError, TimeoutError)
from redis.lock import Lock  # noqa: E402
from tooz import coordination  # noqa: E402
from tooz.drivers.redis import RedisDriver, RedisLock  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from common import FENCED_WRITE, emit, failure  # noqa: E402 - adapters/python/common.py
import common  # noqa: E402

VARIANTS = {"lib:tooz": False, "lib:tooz-heartbeat": True}  # name -> renews
# RedisLock's key is "%s_%s_lock" % (coord.namespace, name), and the namespace is bytes: the
# key starts with the bytes' repr, "b'_tooz'_" (tooz/drivers/redis.py:81).
LOCK_KEY = "%s_{key}_lock" % (RedisDriver.DEFAULT_NAMESPACE,)


def version():
    try:
        from importlib.metadata import version as dist_version
        return dist_version("tooz")
    except Exception:  # noqa: BLE001 - a name is all hello needs
        return "unknown"


def whole_seconds(ttl_ms):
    """tooz's lock TTL is whole seconds (int() of the lock_timeout option,
    tooz/drivers/redis.py:369): ttl_ms rounded up, at least 1 s, so no lease is shorter than
    the scenario asked for."""
    return max(1, math.ceil(ttl_ms / 1000))


def run_prefix(key):
    """The run's key prefix, "locksim:<run>:", from a key the harness names."""
    match = re.match(r"([^:]*:[^:]*:)", key)
    return match.group(1) if match else ""


class ObservedLock(Lock):
    """redis-py's Lock as tooz makes it (client.lock(name, timeout, thread_local=False)), its
    own attempts counted (the first busy answer sends "busy") and every Redis error kept: tooz
    retries a call that raised ConnectionError up to 15 times from the start (a new token, a
    new wait), and a release retried so finds the Lock already unlocked."""
    attempts = sent_ns = 0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.errors = []  # the Redis errors under the current call

    def do_acquire(self, token):
        self.attempts, self.sent_ns = self.attempts + 1, time.monotonic_ns()
        try:
            acquired = super().do_acquire(token)
        except RedisError as e:
            self.errors.append(e)
            raise
        if not acquired and self.attempts == 1:
            emit({"event": "busy"})
        return acquired

    def do_release(self, expected_token):
        try:
            return super().do_release(expected_token)
        except (ConnectionError, TimeoutError) as e:
            self.errors.append(e)
            raise


class ObservedRedis(redis.StrictRedis):
    """The client tooz builds, with three changes, each for the per-run ACL user: its user name
    (tooz passes only the URL's password), INFO's version from HELLO when INFO is refused (INFO
    is @dangerous), and the member's heartbeat key moved under the run's prefix, and not
    written at all before a key has told the adapter that prefix (locks never read it)."""
    beat_key, prefix = None, None

    def lock(self, name, **kwargs):
        kwargs.setdefault("lock_class", ObservedLock)
        return super().lock(name, **kwargs)

    def info(self, *args, **kwargs):
        try:
            return super().info(*args, **kwargs)
        except NoPermissionError:
            reply = self.execute_command("HELLO")  # RESP2: [field, value, ...]
            fields = dict(zip(reply[::2], reply[1::2]))
            return {"redis_version": fields[b"version"].decode()}

    def _beat(self, name):
        return name if name != self.beat_key or self.prefix is None else self.prefix + name

    def psetex(self, name, time_ms, value):
        if name == self.beat_key and self.prefix is None:
            return True  # start()'s heartbeat, before the first acquire: held back
        return super().psetex(self._beat(name), time_ms, value)

    def delete(self, *names):
        names = [self._beat(n) for n in names if n != self.beat_key or self.prefix is not None]
        return super().delete(*names) if names else 0


class ObservedToozLock(RedisLock):
    """RedisLock whose heartbeat from tooz's heart thread writes extend events."""

    def heartbeat(self):
        if threading.current_thread() is threading.main_thread() or not self.acquired:
            return super().heartbeat()  # the adapter's extend, or nothing to renew
        emit({"event": "extend", "phase": "invoke"})
        try:
            renewed = super().heartbeat()
        except tooz.ToozError as e:
            if isinstance(e.cause, LockNotOwnedError):
                emit({"event": "extend", "result": "ok", "extended": 0,
                      "library_error": "ToozError(LockNotOwnedError)"})
            else:
                emit(dict(event="extend", **tooz_failure(e)))
            raise  # the driver's heartbeat logs it and goes on with the next lock
        emit({"event": "extend", "result": "ok", "extended": int(bool(renewed))})
        return renewed


def tooz_failure(e, **extra):
    """A tooz exception in the protocol's words, by the redis-py error under it."""
    cause = e.cause if isinstance(e, tooz.ToozError) and isinstance(e.cause, RedisError) else None
    if cause is None:
        return dict(failure(e), **extra)
    reply = failure(cause, **extra)
    if isinstance(cause, NoPermissionError):  # redis-py drops the reply's first word
        reply["message"] = ("NOPERM " + reply["message"])[:300]
    reply["library_error"] = "%s(%s)" % (type(e).__name__, type(cause).__name__)
    return reply


class Worker:
    def __init__(self, req):
        server = req["redis"]
        self.client, self.renews = req["client"], VARIANTS[req["variant"]]
        # The URL a tooz user writes; socket_timeout: locksim's 2 s bound (tooz's default: 30 s,
        # for connecting too); lock_timeout: the scenario's TTL in whole seconds (see acquire),
        # which also sets the heart's period.
        # (tooz takes the password as urlsplit() gives it, not unquoted: locksim's are hex.)
        netloc = "%s:%d" % (server["host"], server["port"])
        if server.get("password"):
            netloc = "%s:%s@%s" % (server.get("username") or "", server["password"], netloc)
        url = "redis://%s?socket_timeout=2&db=%d&lock_timeout=%d" % (
            netloc, server.get("db", 0), whole_seconds(req["lock"]["ttl_ms"]))
        self.coord = coordination.get_coordinator(url, ("locksim-%s-%s" % (self.client, uuid.uuid4().hex[:8])).encode())
        if not isinstance(self.coord, RedisDriver):
            raise RuntimeError("tooz's redis:// driver is %r" % type(self.coord))
        make_client, username = self.coord._make_client, server.get("username") or None

        def observed_client(parsed_url, options, default_socket_timeout):
            pool = make_client(parsed_url, options, default_socket_timeout).connection_pool
            if username:
                pool.connection_kwargs["username"] = username
            client = ObservedRedis(connection_pool=pool)
            client.beat_key = self.coord._encode_beat_id(self.coord._member_id)
            return client

        self.coord._make_client = observed_client  # the instance's, before start()
        # The plain client (connect's check, read/write) is built from the same URL by tooz.
        self.r = make_client(urllib.parse.urlsplit(url), {"socket_timeout": "2"}, 2)
        if username:
            self.r.connection_pool.connection_kwargs["username"] = username
        self.r.ping()
        self.fenced_write = self.r.register_script(FENCED_WRITE)
        self.locks = {}
        try:  # INFO (HELLO), the scripts, heartbeat(); with start_heart, the heart thread
            self.coord.start(start_heart=self.renews)
        except tooz.ToozError as e:
            if isinstance(e.cause, RedisError):
                raise e.cause from e
            raise

    def stop_renewal(self, req=None):
        if self.renews and self.coord.heart.is_alive():
            self.coord.heart.stop()
            self.coord.heart.wait()
        return {"result": "ok"}

    def acquire(self, req):
        received = time.monotonic_ns()
        if self.coord._client.prefix is None:  # the heartbeat key's place, from now on
            self.coord._client.prefix = run_prefix(req["key"]).encode()
        if self.renews and not self.coord.heart.is_alive():
            self.coord.heart.start()  # after stop_renewal
        # tooz's lock TTL is the coordinator's lock_timeout (the URL's; a request with another
        # ttl_ms sets the attribute the option sets, redis.py:369).
        self.coord.lock_timeout = whole_seconds(req["ttl_ms"])
        # What coord.get_lock(key) does (tooz/drivers/redis.py:408), with the observed class.
        lock = ObservedToozLock(self.coord, self.coord._client, req["key"], self.coord.lock_timeout)
        inner = lock._lock
        try:  # blocking=<seconds>: tooz's convert_blocking makes it redis-py's blocking_timeout
            granted = lock.acquire(blocking=req["timeout_ms"] / 1000)
        except tooz.ToozError as e:
            return tooz_failure(e, attempts=inner.attempts)
        if not granted:
            lost = [e for e in inner.errors if isinstance(e, (ConnectionError, TimeoutError))]
            if lost:  # tooz retried after a lost reply: that attempt may hold the lock
                return dict(failure(lost[-1], attempts=inner.attempts),
                            message="tooz retried the acquire after %s and then gave up; the attempt "
                            "whose reply was lost may hold the lock" % type(lost[-1]).__name__)
            return {"result": "fail", "error": "gave_up", "attempts": inner.attempts}
        self.locks[req["key"]] = lock
        return {"result": "ok", "token": inner.local.token.decode(), "attempts": inner.attempts,
                "sent_after_ns": inner.sent_ns - received, "lock_key": lock.name}

    def release(self, req):
        lock = self.locks.pop(req["key"])
        lock._lock.errors = []
        try:
            released = lock.release()  # False: redis-py's LockError, logged by tooz
        except tooz.ToozError as e:
            return tooz_failure(e)
        if released:
            return {"result": "ok", "deleted": 1}
        lost = [e for e in lock._lock.errors if isinstance(e, (ConnectionError, TimeoutError))]
        if lost:  # the first try's reply was lost; tooz's retry found the Lock unlocked
            return dict(failure(lost[-1]), message="tooz retried the release after %s and answered "
                        "False (the Lock was already unlocked): the first try may have deleted the key"
                        % type(lost[-1]).__name__)
        return {"result": "ok", "deleted": 0, "library_error": "LockNotOwnedError"}

    def extend(self, req):
        # tooz's extend is heartbeat(): reacquire(), the TTL back to the lock's own timeout
        # (ttl_ms is not used).
        try:
            renewed = self.locks[req["key"]].heartbeat()
        except tooz.ToozError as e:
            if isinstance(e.cause, LockNotOwnedError):
                return {"result": "ok", "extended": 0, "library_error": "ToozError(LockNotOwnedError)"}
            return tooz_failure(e)
        return {"result": "ok", "extended": int(bool(renewed))}

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
        return worker, common.hello("tooz", version(), LOCK_KEY, VARIANTS)
    if op == "connect":
        try:
            return Worker(req), {"result": "ok"}
        except RedisError as e:
            return None, failure(e)
    try:
        return worker, getattr(worker, op)(req)
    except RedisError as e:
        return worker, failure(e)
    except tooz.ToozError as e:
        return worker, tooz_failure(e)


if __name__ == "__main__":
    sys.exit(common.serve(handle))
