#!/usr/bin/python3
"""Drives every adapter under adapters/ through the worker protocol v1 against a private
redis-server, and checks what each library does (see adapters/README.md).

Run: /usr/bin/python3 tests/adapters/adapter_protocol_test.py [ADAPTER ...]
Needs redis-server, /usr/bin/python3 with python3-redis, /usr/bin/php with php-redis,
php-symfony-lock and php-malkusch-lock, node, and adapters/node/node_modules
(scripts/lib.sh's locksim_install_adapters). Stdlib only. Starts its own redis-server on a free
loopback port in a temporary directory (no persistence) with an ACL user like locksim's per-run
user, and stops it by pid on every path; for the adapters with a cluster client, also a Redis
Cluster of three redis-servers, started once. Every read from an adapter has a deadline. Prints
"N passed, M failed" last; exits 1 if anything failed.
"""
import json
import os
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PREFIX = "locksim:adaptertest:"
NODE = shutil.which("node") or "node"
STARTUP_S = 15  # more time for an adapter's first line (see Adapter.next_line)

# cluster: the adapter builds a Redis Cluster client when connect carries "cluster"
# (libraries.json's "cluster": true); test_cluster runs it on a cluster of three primaries.
# owner_check: a release or extend by a holder whose key now holds another value changes
# nothing. redis-lock has none: its release DELs whatever is there unless the holder's own
# clock says the lock has expired (documented: "or do nothing if timeout has already
# released it").
ADAPTERS = [
    dict(name="redis-py", cmd=["/usr/bin/python3", "adapters/python-redis-py/adapter.py"],
         plain="lib:redis-py", renew="lib:redis-py-renew", key="{key}", extend=True,
         owner_check=True, cancel="refused", cluster=True),
    dict(name="redis-py-asyncio", cmd=["/usr/bin/python3", "adapters/python-redis-py-asyncio/adapter.py"],
         plain="lib:redis-py-asyncio", renew="lib:redis-py-asyncio-renew", key="{key}",
         extend=True, owner_check=True, cancel="task"),
    dict(name="redlock", cmd=[NODE, "adapters/node-redlock/adapter.js"],
         plain="lib:redlock", renew="lib:redlock-using", key="{key}", extend=True,
         owner_check=True, cluster=True),
    # Its Semaphore and MultiSemaphore (2 of 2 x lock.permits per acquire) keep a sorted set at
    # "semaphore:<key>", one member per permit taken.
    dict(name="redis-semaphore", cmd=[NODE, "adapters/node-redis-semaphore/adapter.js"],
         plain="lib:redis-semaphore-norefresh", renew="lib:redis-semaphore", key="mutex:{key}",
         extend=False, owner_check=True,
         semaphores={"lib:redis-semaphore-semaphore": 1, "lib:redis-semaphore-multi": 2},
         semaphore_key="semaphore:{key}"),
    dict(name="redis-lock", cmd=[NODE, "adapters/node-redis-lock/adapter.js"],
         plain="lib:redis-lock", renew=None, key="lock.{key}", extend=False, owner_check=False),
    dict(name="redlock4", cmd=[NODE, "adapters/node-redlock4/adapter.js"],
         plain="lib:redlock4", renew=None, key="{key}", extend=True, owner_check=True,
         cluster=True),
    dict(name="sesamecare-redlock", worker="@sesamecare-oss/redlock",
         cmd=[NODE, "adapters/node-sesamecare-redlock/adapter.js"],
         plain="lib:sesamecare-redlock", renew="lib:sesamecare-redlock-using", key="{key}",
         extend=True, owner_check=True, cluster=True),
    # warlock's touch() passes the TTL and the lock id as KEYS (parityRelock.lua): a user limited
    # to key patterns gets NOPERM, which node-redis-script swallows (the adapter reports it).
    dict(name="warlock", worker="node-redis-warlock", cmd=[NODE, "adapters/node-warlock/adapter.js"],
         plain="lib:warlock", renew=None, key="{key}:lock", extend="noperm", owner_check=True),
    dict(name="ioredis-lock", worker="@microfleet/ioredis-lock",
         cmd=[NODE, "adapters/node-ioredis-lock/adapter.js"],
         plain="lib:ioredis-lock", renew=None, key="{key}", extend=True, owner_check=True,
         cluster=True),
    # simple-redis-mutex's refreshTimeout() takes no TTL (it re-applies the lock's own).
    dict(name="simple-redis-mutex", cmd=[NODE, "adapters/node-simple-redis-mutex/adapter.js"],
         plain="lib:simple-redis-mutex", renew=None, key="@simple-redis-mutex:lock-{key}",
         extend="own_ttl", owner_check=True),
    # Symfony's RedisStore keeps a sorted set at the key (member: the token, score: its expiry).
    dict(name="symfony-lock", cmd=["/usr/bin/php", "adapters/php-symfony-lock/adapter.php"],
         plain="lib:symfony-lock", renew=None, key="{key}", extend=True, owner_check=True,
         zset=True),
    # tooz: redis-py's Lock at "b'_tooz'_<key>_lock" (the namespace's bytes repr), its TTL whole
    # seconds (ttl_ms rounded up); its extend is heartbeat(), the lock's own TTL again.
    dict(name="tooz", cmd=["/usr/bin/python3", "adapters/python-tooz/adapter.py"],
         plain="lib:tooz", renew="lib:tooz-heartbeat", key="b'_tooz'_{key}_lock", extend="own_ttl",
         owner_check=True, cancel="refused"),
    # node-redisson's RLock: a reentrant lock, a hash at the key with a field per owner
    # ("<redisson id>:<client>", the token) counting its holds; its unlock names a latch key and
    # a channel after the key ("redisson_unlock_latch:{<key>}:<id>", "redisson_lock__channel:
    # {<key>}"), which the run's ACL user is granted too (libraries.json's "other_keys").
    dict(name="node-redisson", cmd=[NODE, "adapters/node-redisson/adapter.js"],
         plain="lib:node-redisson", renew="lib:node-redisson-watchdog", key="{key}",
         extend=False, owner_check=True, hash=True,
         other_keys=["redisson_unlock_latch:{{key}}:", "redisson_lock__channel:{{key}}"]),
    # malkusch/lock: one number is the wait and the TTL - 1 s, in whole seconds (TTL >= 2 s).
    dict(name="malkusch-lock", cmd=["/usr/bin/php", "adapters/php-malkusch-lock/adapter.php"],
         plain="lib:malkusch-lock", renew=None, key="lock_{key}", extend=False, owner_check=True,
         min_ttl_s=2),
]
BROKEN = ["/usr/bin/python3", "tests/adapters/broken_adapter.py"]

passed, failed = [], []


class Failure(Exception):
    pass


def check(condition, what, detail=None):
    if not condition:
        raise Failure(what + ("" if detail is None else ": " + json.dumps(detail, default=str)[:600]))


# --- a private redis-server and a minimal RESP client ------------------------------------------

class Resp:
    def __init__(self, port, user=None, password=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.file = self.sock.makefile("rb")
        if user:
            self("AUTH", user, password)

    def __call__(self, *args):
        parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        self.sock.sendall(b"*%d\r\n" % len(parts) +
                          b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
        return self._read()

    def _read(self):
        line = self.file.readline()
        if not line:
            raise ConnectionError("redis-server closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.file.read(n + 2)[:-2].decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise RuntimeError("bad RESP line %r" % line)

    def close(self):
        self.sock.close()


class Server:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="locksim-adapter-test-")
        self.proc = None
        for _ in range(5):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.port = s.getsockname()[1]
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", self.dir, "--daemonize", "no",
                 "--logfile", os.path.join(self.dir, "redis.log")],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    Resp(self.port)("PING")
                    return
                except OSError:
                    time.sleep(0.05)
            self.stop_process()
        raise RuntimeError("redis-server did not start (log in %s)" % self.dir)

    def stop_process(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def stop(self):
        self.stop_process()
        shutil.rmtree(self.dir, ignore_errors=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """Three cluster-enabled redis-servers (no replicas), each serving a third of the slots, as
    locksim's cluster topology forms them (CLUSTER ADDSLOTSRANGE, MEET); no ACL user (a
    topology's servers get none). Each has a bus port of its own (port + 10000 may be taken)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="locksim-adapter-cluster-")
        self.procs, self.ports = [], []
        try:
            for i in range(3):
                port, bus = free_port(), free_port()
                node_dir = os.path.join(self.dir, str(i))
                os.mkdir(node_dir)
                self.procs.append(subprocess.Popen(
                    ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                     "--appendonly", "no", "--dir", node_dir, "--daemonize", "no",
                     "--cluster-enabled", "yes", "--cluster-port", str(bus),
                     "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "1000",
                     "--logfile", os.path.join(node_dir, "redis.log")],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                self.ports.append((port, bus))
            self.nodes = [self._dial(port) for port, _ in self.ports]
            share = 16384 // 3
            for i, node in enumerate(self.nodes):
                last = 16383 if i == 2 else (i + 1) * share - 1
                node("CLUSTER", "ADDSLOTSRANGE", i * share, last)
                node("CLUSTER", "SET-CONFIG-EPOCH", i + 1)
            for node in self.nodes[1:]:
                node("CLUSTER", "MEET", "127.0.0.1", self.ports[0][0], self.ports[0][1])
            deadline = time.monotonic() + 20
            while not all("cluster_state:ok" in n("CLUSTER", "INFO") for n in self.nodes):
                if time.monotonic() > deadline:
                    raise RuntimeError("the cluster was not ok within 20 s (logs in %s)" % self.dir)
                time.sleep(0.05)
        except BaseException:
            self.stop()
            raise

    @staticmethod
    def _dial(port):
        deadline = time.monotonic() + 5
        while True:
            try:
                return Resp(port)
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def endpoints(self):
        return [dict(host="127.0.0.1", port=port) for port, _ in self.ports]

    def node_of(self, key):
        """The index of the node that serves key's slot."""
        slot = self.nodes[0]("CLUSTER", "KEYSLOT", key)
        return min(slot // (16384 // 3), 2)

    def get(self, key):
        return self.nodes[self.node_of(key)]("GET", key)

    def stop(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)


CLUSTER = []  # the one Cluster, started by the first test that needs it


def cluster():
    if not CLUSTER:
        CLUSTER.append(Cluster())
    return CLUSTER[0]


# --- one adapter process -----------------------------------------------------------------------

class Adapter:
    def __init__(self, cmd):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr)
        self.lines = queue.Queue()
        self.next_id = 1
        self.started = False  # whether a line has come: the runtime and the library are loaded
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in iter(self.proc.stdout.readline, b""):
            self.lines.put(raw.decode(errors="replace").rstrip("\n"))
        self.lines.put(None)

    def send_line(self, text):
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def next_line(self, timeout, startup=True):
        """The next line (None at end of output), or Failure after timeout seconds (plus
        STARTUP_S before the adapter's first line, unless startup is False)."""
        # The first line also waits for the runtime to start and load its library: on a machine
        # loaded by the test suite itself node took more than 5 s. Later limits catch a hang.
        if startup and not self.started:
            timeout += STARTUP_S
        try:
            line = self.lines.get(timeout=timeout)
            self.started = True
            return line
        except queue.Empty:
            raise Failure("no line from the adapter within %.1f s" % timeout)

    def call(self, op, timeout=5.0, **fields):
        """(reply, events before it); the reply must come within timeout seconds."""
        request = dict(v=1, id=self.next_id, op=op, **fields)
        self.next_id += 1
        self.send_line(json.dumps(request))
        return self.wait_reply(request["id"], timeout, op)

    def wait_reply(self, request_id, timeout, op="?"):
        if not self.started:
            timeout += STARTUP_S
        events, deadline = [], time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure("no reply to %s within %.1f s (events %s)" % (op, timeout, events))
            try:
                line = self.next_line(left, startup=False)
            except Failure:
                raise Failure("no reply to %s within %.1f s (events %s)" % (op, timeout, events))
            if line is None:
                raise Failure("the adapter exited during %s: %s" % (op, self.stderr_text()))
            message = json.loads(line)
            if "event" in message:
                events.append(message)
            elif message.get("id") == request_id:
                return message, events

    def events_for(self, seconds):
        """The events written in the next `seconds`."""
        return self.events_until(lambda event: False, seconds)

    def events_until(self, done, seconds):
        """The events written until one satisfies `done` (included) or `seconds` pass."""
        events, deadline = [], time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                raise Failure("the adapter exited: " + self.stderr_text())
            events.append(json.loads(line))
            if done(events[-1]):
                break
        return events

    def stderr_text(self):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-2000:]

    def close(self, timeout=5):
        """Closes stdin; the exit code, or None if it had to be killed."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            return None
        finally:
            self.stderr.close()


# --- the checks --------------------------------------------------------------------------------

class Suite:
    def __init__(self, server, spec):
        self.server, self.spec = server, spec
        self.admin = Resp(server.port)
        self.endpoint = dict(host="127.0.0.1", port=server.port, username=USER, password=PASSWORD,
                             db=0)
        self.open = []
        self.observed = {}

    def start(self):
        adapter = Adapter(self.spec["cmd"])
        self.open.append(adapter)
        return adapter

    def connected(self, variant=None, client="A", ttl_ms=1000, endpoint=None, permits=1,
                  **extra):
        adapter = self.start()
        reply, _ = adapter.call("connect", redis=endpoint or self.endpoint, client=client,
                                variant=variant or self.spec["plain"], seed=7,
                                lock=dict(ttl_ms=ttl_ms, renew_period_ms=max(1, ttl_ms // 3),
                                          queue_timeout_ms=ttl_ms, permits=permits,
                                          wait=dict(strategy="poll", interval_ms=10)), **extra)
        check(reply.get("result") == "ok", "connect", reply)
        return adapter

    def key(self, name):
        return PREFIX + self.spec["name"] + ":" + name

    def lock_key(self, key):
        return self.spec["key"].format(key=key)

    def holds(self, key, token):
        """Whether the lock at key is token's: the string value, or a member of the sorted set."""
        if self.spec.get("zset"):
            return self.admin("ZSCORE", self.lock_key(key), token) is not None
        if self.spec.get("hash"):
            return self.admin("HEXISTS", self.lock_key(key), token) == 1
        return self.admin("GET", self.lock_key(key)) == token

    def take_over(self, key):
        """Someone else's lock at key (5 s), in the library's own format."""
        if self.spec.get("zset"):
            self.admin("DEL", self.lock_key(key))
            now = self.admin("TIME")
            expiry = int(now[0]) * 1000 + int(now[1]) // 1000 + 5000
            self.admin("ZADD", self.lock_key(key), expiry, "someone-else", expiry, "__write__")
            self.admin("PEXPIRE", self.lock_key(key), 5000)
        elif self.spec.get("hash"):
            self.admin("DEL", self.lock_key(key))
            self.admin("HSET", self.lock_key(key), "someone-else", 1)
            self.admin("PEXPIRE", self.lock_key(key), 5000)
        else:
            self.admin("SET", self.lock_key(key), "someone-else", "PX", 5000)

    def acquire(self, adapter, key, ttl_ms=5000, timeout_ms=1000):
        reply, events = adapter.call("acquire", key=key, ttl_ms=ttl_ms, timeout_ms=timeout_ms,
                                     timeout=timeout_ms / 1000 + 5)
        check(reply.get("result") == "ok", "acquire " + key, reply)
        return reply, events

    def release(self, adapter, key, token, timeout=10):
        reply, _ = adapter.call("release", key=key, token=token, timeout=timeout)
        check(reply.get("result") == "ok", "release " + key, reply)
        return reply

    def close_all(self):
        for adapter in self.open:
            if adapter.proc.poll() is None:
                adapter.close(timeout=2)
        self.open = []
        self.admin.close()

    # Each test_* is one check line in the output.

    def test_hello(self):
        adapter = self.start()
        reply, _ = adapter.call("hello")
        check(reply.get("result") == "ok" and reply.get("protocol") == 1, "hello", reply)
        check(reply.get("worker") == self.spec.get("worker", self.spec["name"]), "worker name", reply)
        check(isinstance(reply.get("version"), str) and reply["version"], "version", reply)
        names = [v["name"] for v in reply.get("variants", [])]
        check(self.spec["plain"] in names and (self.spec["renew"] in names or not self.spec["renew"]),
              "variants listed", reply)
        self.observed["version"] = reply["version"]

    def test_acquire_busy_release(self):
        a, b = self.connected(client="A"), self.connected(client="B")
        key = self.key("k1")
        granted, _ = self.acquire(a, key)
        check(self.holds(key, granted["token"]), "the token is the value in Redis", granted)
        check(granted.get("attempts") == 1, "one attempt", granted)
        # (malkusch/lock waits `ttl - 1 s` whatever timeout_ms says: B asks for 2 s, waits 1 s.)
        refused, events = b.call("acquire", key=key, ttl_ms=2000 if self.spec.get("min_ttl_s") else 5000,
                                 timeout_ms=200, timeout=6)
        check(refused.get("result") == "fail" and refused.get("error") == "gave_up",
              "the second acquire gives up", refused)
        check([e for e in events if e.get("event") == "busy"] == [{"event": "busy"}],
              "one busy event before giving up", events)
        released = self.release(a, key, granted["token"])
        check(released.get("deleted") == 1, "release deletes", released)
        check(self.admin("EXISTS", self.lock_key(key)) == 0, "the key is gone")
        again, _ = self.acquire(b, key)
        self.release(b, key, again["token"])

    def test_cluster(self):
        # With connect's "cluster" the library is given its cluster client: locks whose keys
        # hash to different primaries are taken on the primary of each key's slot (a single
        # server's client would be answered MOVED), and an owner-checked release still refuses.
        c = cluster()
        plain = dict(host="127.0.0.1", port=c.ports[0][0])
        a = self.connected(client="A", endpoint=plain, cluster=c.endpoints())
        b = self.connected(client="B", endpoint=plain, cluster=c.endpoints())
        keys, tag = {}, 0
        while len(keys) < 3:  # a key on each primary
            key = self.key("cluster-%d" % tag)
            keys.setdefault(c.node_of(self.lock_key(key)), key)
            tag += 1
        for node, key in sorted(keys.items()):
            granted, _ = self.acquire(a, key)
            check(c.get(self.lock_key(key)) == granted["token"],
                  "the token is on the primary of the key's slot (node %d)" % node, granted)
            refused, _ = b.call("acquire", key=key, ttl_ms=5000, timeout_ms=200, timeout=6)
            check(refused.get("error") == "gave_up", "the second acquire gives up", refused)
        key = keys[2]
        c.nodes[2]("SET", self.lock_key(key), "someone-else")
        stale = self.release(a, key, "")
        check(stale.get("deleted") == 0, "the owner check refuses the release", stale)
        c.nodes[2]("DEL", self.lock_key(key))
        for node in (0, 1):
            released = self.release(a, keys[node], "")
            check(released.get("deleted") == 1, "release deletes", released)
            check(c.get(self.lock_key(keys[node])) is None, "the key is gone (node %d)" % node)
        self.observed["cluster"] = "granted on all three primaries"

    def test_stale_release_after_expiry(self):
        a, b = self.connected(client="A"), self.connected(client="B")
        key = self.key("k2")
        self.acquire(a, key, ttl_ms=300)
        time.sleep(max(0.6, self.spec.get("min_ttl_s", 0) + 0.3))  # past the lease
        theirs, _ = self.acquire(b, key)
        stale = self.release(a, key, "")
        self.observed["stale release after expiry"] = stale
        check(stale.get("deleted") == 0, "a stale release deletes nothing", stale)
        check(self.holds(key, theirs["token"]), "the other holder's key is intact")
        self.release(b, key, theirs["token"])

    def test_stale_release_superseded(self):
        # The key changed hands while the holder's own clock still says it holds the lock (a
        # failover, a DEL by someone else, a clock running slow).
        a, b = self.connected(client="A"), self.connected(client="B")
        key = self.key("k3")
        self.acquire(a, key, ttl_ms=5000)
        self.admin("DEL", self.lock_key(key))
        theirs, _ = self.acquire(b, key)
        stale = self.release(a, key, "")
        self.observed["stale release, superseded"] = stale
        if self.spec["owner_check"]:
            check(stale.get("deleted") == 0, "the owner check refuses the release", stale)
            check(self.holds(key, theirs["token"]), "the other holder's key is intact")
            self.release(b, key, theirs["token"])
        else:
            check(stale.get("deleted") == 1, "no owner check: the other's key is deleted", stale)
            check(self.admin("EXISTS", self.lock_key(key)) == 0, "the other holder's key is gone")

    def test_cancel(self):
        # "cancel_after_ms" on acquire, release or extend: the adapter cancels the call as its
        # library allows (hello's "cancel") and answers info "cancelled". The server holds every
        # write meanwhile (CLIENT PAUSE ... WRITE), so the cancellation lands while the command
        # waits for its reply. A sync adapter refuses the field (protocol); the node adapters
        # do not read it (the harness asks only adapters whose hello offers "cancel").
        how = self.spec.get("cancel")
        if how is None:
            return
        a = self.connected()
        key = self.key("k-cancel")
        if how == "refused":
            reply, _ = a.call("acquire", key=key, ttl_ms=1000, timeout_ms=100, cancel_after_ms=10)
            check(reply.get("error") == "protocol" and "not supported" in reply.get("message", ""),
                  "cancellation refused", reply)
            return
        hello, _ = a.call("hello")
        check(hello.get("cancel") == how, "hello says how it cancels", hello)
        bad, _ = a.call("acquire", key=key, ttl_ms=1000, timeout_ms=100, cancel_after_ms=-1)
        check(bad.get("error") == "protocol", "a negative cancel_after_ms is refused", bad)

        # The pause must outlast the adapter's getting its command to the server and the cancel
        # 100 ms later: on a loaded fresh clone a 600 ms pause once ended first, and the release
        # ran and answered ok before its cancel. So it is 2 s, waited out from when it began.
        def paused(op, **fields):
            began = time.monotonic()
            self.admin("CLIENT", "PAUSE", "2000", "WRITE")
            reply, _ = a.call(op, key=key, cancel_after_ms=100, **fields)
            # The pause is over: a command that reached the server has run.
            time.sleep(max(0.0, 2.2 - (time.monotonic() - began)))
            check(reply.get("result") == "info" and reply.get("error") == "cancelled",
                  "the cancelled %s is info, cancelled" % op, reply)
            return reply

        # redis-py 4.3.4 drops the connection of a cancelled command, and Redis drops a paused
        # client's pending command with it: the cancelled acquire took nothing.
        self.observed["cancelled acquire"] = paused("acquire", ttl_ms=5000, timeout_ms=1000)
        check(self.admin("EXISTS", self.lock_key(key)) == 0, "the cancelled acquire took nothing")
        # A lease long enough to outlast the paused extend (2.2 s and more on a loaded machine,
        # where a lease once ran out before the release below), short of the extend's.
        granted, _ = self.acquire(a, key, ttl_ms=6000)
        self.observed["cancelled extend"] = paused("extend", ttl_ms=10000)
        check(self.admin("PTTL", self.lock_key(key)) < 6000, "the cancelled extend extended nothing")
        check(self.release(a, key, granted["token"]).get("deleted") == 1, "then a release works")
        # The cancelled release: its command was dropped too, so the key stays; and release()
        # forgot the token before it ran (redis/asyncio/lock.py:246), so the retry is refused by
        # the library itself and the key is left until its TTL (redis/redis-py#3847).
        granted, _ = self.acquire(a, key, ttl_ms=8000)
        self.observed["cancelled release"] = paused("release", token=granted["token"])
        check(self.holds(key, granted["token"]), "the cancelled release deleted nothing")
        retry, _ = a.call("release", key=key, token=granted["token"])
        self.observed["release retried after the cancelled one"] = retry
        check(retry.get("result") == "fail" and retry.get("error") == "not_held" and
              retry.get("library_error") == "LockError", "the retry: the Lock has no token", retry)
        check(self.holds(key, granted["token"]), "the key is left until its TTL")
        self.admin("DEL", self.lock_key(key))

    def test_extend(self):
        a = self.connected()
        key = self.key("k4")
        granted, _ = self.acquire(a, key, ttl_ms=1000)
        reply, _ = a.call("extend", key=key, token=granted["token"], ttl_ms=5000, timeout=10)
        if self.spec["extend"] == "noperm":
            reply, _ = a.call("extend", key=key, token=granted["token"], ttl_ms=5000, timeout=10)
            self.observed["extend as a user limited to key patterns"] = reply
            check(reply.get("result") == "fail" and reply.get("error") == "reply_error" and
                  "NOPERM" in reply.get("message", ""), "extend refused by the ACL", reply)
            self.release(a, key, granted["token"])
            # As the default user (every key) the extend works, and refuses a lock taken over.
            b = self.connected(client="B", endpoint=dict(self.endpoint, username=None, password=None))
            granted, _ = self.acquire(b, key, ttl_ms=1000)
            reply, _ = b.call("extend", key=key, token=granted["token"], ttl_ms=5000, timeout=10)
            check(reply.get("result") == "ok" and reply.get("extended") == 1, "extend", reply)
            check(self.admin("PTTL", self.lock_key(key)) > 2000, "the lease is longer")
            self.admin("SET", self.lock_key(key), "someone-else", "PX", 5000)
            lost, _ = b.call("extend", key=key, token=granted["token"], ttl_ms=5000, timeout=10)
            check(lost.get("result") == "ok" and lost.get("extended") == 0, "extend refused", lost)
            released = self.release(b, key, granted["token"])
            check(released.get("deleted") == 0, "nothing to release", released)
            return
        if not self.spec["extend"]:
            check(reply.get("result") == "fail" and reply.get("error") == "protocol" and
                  reply.get("message") == "this library has no extend", "no extend", reply)
            self.observed["extend"] = "none"
            self.release(a, key, granted["token"])
            return
        check(reply.get("result") == "ok" and reply.get("extended") == 1, "extend", reply)
        if self.spec["extend"] == "own_ttl":  # the lease is the lock's TTL again, not ttl_ms
            check(800 < self.admin("PTTL", self.lock_key(key)) <= 1000, "the lease is renewed")
        else:
            check(self.admin("PTTL", self.lock_key(key)) > 2000, "the lease is longer")
        self.take_over(key)
        lost, _ = a.call("extend", key=key, token=granted["token"], ttl_ms=5000, timeout=10)
        self.observed["extend of a lock taken over"] = lost
        check(lost.get("result") == "ok" and lost.get("extended") == 0, "extend refused", lost)
        check(self.holds(key, "someone-else"), "the other value stays")
        released = self.release(a, key, granted["token"])
        check(released.get("deleted") == 0, "nothing to release", released)

    def test_resources(self):
        a = self.connected()
        stock, record = self.key("stock"), self.key("records")
        ok = lambda reply, what: check(reply.get("result") == "ok", what, reply)
        reply, _ = a.call("read", resource=dict(kind="counter", key=stock))
        check(reply.get("value") == 0, "a missing counter reads 0", reply)
        ok(a.call("write", resource=dict(kind="counter", key=stock), value=7)[0], "counter write")
        check(a.call("read", resource=dict(kind="counter", key=stock))[0].get("value") == 7,
              "counter read")
        find = dict(kind="find_or_create", key=record)
        check(a.call("read", resource=find, record="r1")[0].get("value") == 0, "no record yet")
        ok(a.call("write", resource=find, record="r1")[0], "record write")
        check(a.call("read", resource=find, record="r1")[0].get("value") == 1, "record found")
        check(self.admin("HGET", record, "r1") == "A", "the record names its creator")
        fenced = dict(kind="fenced_counter", key=self.key("fenced"))
        ok(a.call("write", resource=fenced, value=5, fencing=5)[0], "fenced write")
        refused, _ = a.call("write", resource=fenced, value=4, fencing=3)
        check(refused.get("result") == "fail" and refused.get("error") == "fenced",
              "a lower fencing number is refused", refused)
        check(a.call("read", resource=fenced)[0].get("value") == 5, "the refused write wrote nothing")
        ok(a.call("write", resource=fenced, value=3, fencing=-1)[0], "an unfenced write is accepted")

    def test_protocol_errors(self):
        a = self.start()
        reply, _ = a.call("acquire", key="x", ttl_ms=1, timeout_ms=0)
        check(reply.get("error") == "protocol", "an op before connect", reply)
        reply, _ = a.call("connect", redis=self.endpoint, client="A", variant="lib:nope", seed=1,
                          lock=dict(ttl_ms=1000, renew_period_ms=333, queue_timeout_ms=1000,
                                    wait=dict(strategy="poll", interval_ms=10)))
        check(reply.get("error") == "protocol", "an unknown variant", reply)
        a.close()
        a = self.connected()
        reply, _ = a.call("frobnicate")
        check(reply.get("result") == "fail" and reply.get("error") == "protocol", "unknown op", reply)
        a.send_line("this is {not json")
        garbage = json.loads(a.next_line(5))
        check(garbage.get("result") == "fail" and garbage.get("error") == "protocol", "garbage",
              garbage)
        a.send_line(json.dumps(dict(v=2, id=99, op="hello")))
        reply, _ = a.wait_reply(99, 5)
        check(reply.get("error") == "protocol", "protocol version 2 is refused", reply)
        reply, _ = a.call("acquire", key=self.key("k5"), ttl_ms=1000, timeout_ms=0,
                          crash_at="after_setnx")
        check(reply.get("error") == "protocol" and "checkpoints" in reply.get("message", ""),
              "checkpoints are refused", reply)
        reply, _ = a.call("acquire", ttl_ms=1000, timeout_ms=0)
        check(reply.get("error") == "protocol", "an acquire without a key", reply)
        reply, _ = a.call("hello")
        check(reply.get("result") == "ok", "still alive after all that", reply)
        check(self.admin("EXISTS", self.lock_key(self.key("k5"))) == 0, "refused calls took no lock")
        check(a.close() == 0, "exit 0 at the end of input")

    def test_connect_errors(self):
        lock = dict(ttl_ms=1000, renew_period_ms=333, queue_timeout_ms=1000,
                    wait=dict(strategy="poll", interval_ms=10))
        a = self.start()
        reply, _ = a.call("connect", redis=dict(self.endpoint, password="wrong"), client="A",
                          variant=self.spec["plain"], seed=1, lock=lock)
        check(reply.get("result") == "fail" and reply.get("error") == "reply_error",
              "a wrong password fails connect", reply)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            closed_port = s.getsockname()[1]
        reply, _ = a.call("connect", redis=dict(self.endpoint, port=closed_port), client="A",
                          variant=self.spec["plain"], seed=1, lock=lock, timeout=8)
        check(reply.get("result") == "fail" and reply.get("error") == "refused",
              "a closed port is refused", reply)

    def test_timeout_is_info(self):
        # CLIENT PAUSE holds the lock command past the adapter's 2 s command timeout: the server
        # may still run it, so the answer is info/timeout. Then the connection must be usable
        # again (a reply still owed must not answer a later command).
        a = self.connected()
        key = self.key("k8")
        self.admin("CLIENT", "PAUSE", 2500, "WRITE")
        started = time.monotonic()
        reply, _ = a.call("acquire", key=key, ttl_ms=1000, timeout_ms=0, timeout=8)
        self.observed["acquire past the command timeout"] = reply
        check(reply.get("result") == "info" and reply.get("error") == "timeout",
              "a timed-out acquire is info/timeout", reply)
        time.sleep(max(0, 3.5 - (time.monotonic() - started)))  # past the pause and the lock's TTL
        stock = self.key("stock8")
        self.admin("SET", stock, 41)
        reply, _ = a.call("read", resource=dict(kind="counter", key=stock))
        check(reply.get("value") == 41, "the next command gets its own reply", reply)
        other = self.key("k9")
        granted, _ = self.acquire(a, other, ttl_ms=2000)
        check(self.holds(other, granted["token"]), "and locks work again")
        released = self.release(a, other, granted["token"])
        check(released.get("deleted") == 1, "release", released)

    def test_key_outside_acl_pattern(self):
        # locksim's per-run user may touch only its prefix. A library that puts its own prefix
        # in front of the key (mutex:, lock.) is refused by such a user.
        if self.spec.get("other_keys"):
            # The lock is at the key, but the unlock script also names its latch key and its
            # channel (KEYS[3], KEYS[2]) after it, outside the run's pattern: the narrow user
            # takes the lock and cannot release it.
            a = self.connected(endpoint=dict(self.endpoint, username=NARROW_USER))
            key = self.key("k6")
            self.acquire(a, key, ttl_ms=2000)
            reply, _ = a.call("release", key=key, token="", timeout=8)
            self.observed["release with the unlock's latch outside the per-run ACL pattern"] = reply
            check(reply.get("result") == "fail" and reply.get("error") == "reply_error" and
                  "NOPERM" in reply.get("message", ""), "NOPERM is reported", reply)
            self.admin("DEL", self.lock_key(key))
            return
        if self.spec["key"].startswith("{key}"):
            # The harness's key, or a suffix of it ("{key}:lock"): inside the run's pattern.
            self.observed["key"] = "the harness's key" if self.spec["key"] == "{key}" else self.spec["key"]
            return
        a = self.connected(endpoint=dict(self.endpoint, username=NARROW_USER))
        reply, _ = a.call("acquire", key=self.key("k6"), ttl_ms=1000, timeout_ms=300, timeout=8)
        self.observed["key outside the per-run ACL pattern"] = reply
        check(reply.get("result") == "fail" and reply.get("error") == "reply_error" and
              "NOPERM" in reply.get("message", ""), "NOPERM is reported", reply)

    def test_semaphore(self):
        # A semaphore of two permits (connect's lock.permits): two holders at once, a third
        # refused until one of them releases, a release that removes its own permits only; and a
        # client whose own clock runs 10 s ahead (connect's clock_offset_ms, a lease of 5 s)
        # removes the live holders' permits as expired and takes one itself: the library times
        # its permits with Date.now on the client.
        for variant, taken in sorted(self.spec.get("semaphores", {}).items()):
            key = self.key("sem-" + variant[4:])
            stored = self.spec["semaphore_key"].format(key=key)
            a, b, c = (self.connected(variant, client=name, permits=2) for name in "ABC")
            first, _ = self.acquire(a, key, ttl_ms=5000)
            second, _ = self.acquire(b, key, ttl_ms=5000)
            check(self.admin("ZCARD", stored) == 2 * taken, variant + ": two holders' members")
            refused, events = c.call("acquire", key=key, ttl_ms=5000, timeout_ms=200, timeout=6)
            check(refused.get("result") == "fail" and refused.get("error") == "gave_up",
                  variant + ": a third holder gives up", refused)
            check([e for e in events if e.get("event") == "busy"] == [{"event": "busy"}],
                  variant + ": one busy event", events)
            released = self.release(a, key, first["token"])
            check(released.get("deleted") == 1, variant + ": release removes A's permit", released)
            third, _ = self.acquire(c, key, ttl_ms=5000)
            check(self.admin("ZCARD", stored) == 2 * taken, variant + ": C took A's place")
            for adapter, grant in ((b, second), (c, third)):
                check(self.release(adapter, key, grant["token"]).get("deleted") == 1,
                      variant + ": release")
            check(self.admin("EXISTS", stored) == 0, variant + ": no permit left")

            first, _ = self.acquire(a, key, ttl_ms=5000)
            second, _ = self.acquire(b, key, ttl_ms=5000)
            ahead = self.connected(variant, client="D", permits=2, clock_offset_ms=10000)
            taken_over, _ = self.acquire(ahead, key, ttl_ms=5000, timeout_ms=0)
            self.observed[variant + ": a client clock 10 s ahead, 2 of 2 permits held"] = taken_over
            check(self.admin("ZCARD", stored) == taken, variant + ": only D's members are left")
            stale = self.release(a, key, first["token"])
            check(stale.get("deleted") == 0, variant + ": A's permit was taken from it", stale)
            self.release(b, key, second["token"])
            self.release(ahead, key, taken_over["token"])
            check(self.admin("EXISTS", stored) == 0, variant + ": no permit left at the end")
        if self.spec.get("semaphores"):
            bad = self.start()
            reply, _ = bad.call("connect", redis=self.endpoint, client="E", variant=self.spec["plain"],
                                seed=1, clock_offset_ms="10000",
                                lock=dict(ttl_ms=1000, renew_period_ms=333, queue_timeout_ms=1000,
                                          wait=dict(strategy="poll", interval_ms=10)))
            check(reply.get("error") == "protocol" and "clock_offset_ms" in reply.get("message", ""),
                  "a clock offset that is no integer is refused", reply)

    def test_reentrant(self):
        # A reentrant lock is the client's: its acquire while it holds is a nested one (the
        # same token, the hold counted), a release takes one hold away (deleted 0, the lease
        # reset) and the last frees the lock (deleted 1); another client's release, holding
        # nothing (a finally after a failed tryLock), is refused (deleted 0) and changes
        # nothing; a waiter is woken by the last release's publish, not by its lease.
        if not self.spec.get("hash"):
            return
        a, b = self.connected(client="A"), self.connected(client="B")
        key = self.key("k-reentrant")
        outer, _ = self.acquire(a, key, ttl_ms=3000)
        nested, _ = self.acquire(a, key, ttl_ms=3000, timeout_ms=0)
        check(nested.get("token") == outer["token"], "a nested acquire has the owner's token", nested)
        check(self.admin("HGET", self.lock_key(key), outer["token"]) == "2", "two holds counted")
        refused, _ = b.call("acquire", key=key, ttl_ms=3000, timeout_ms=0)
        check(refused.get("result") == "fail" and refused.get("error") == "gave_up",
              "another client is refused", refused)
        foreign = self.release(b, key, "")
        self.observed["release by a client that holds nothing"] = foreign
        check(foreign.get("deleted") == 0 and foreign.get("library_error") == "RedissonLockError",
              "another client's release is refused", foreign)
        check(self.admin("HGET", self.lock_key(key), outer["token"]) == "2", "and undoes no hold")
        self.admin("PEXPIRE", self.lock_key(key), 1000)
        inner = self.release(a, key, outer["token"])
        check(inner.get("deleted") == 0 and inner.get("inner") is True, "an inner release", inner)
        check(self.admin("HGET", self.lock_key(key), outer["token"]) == "1", "one hold left")
        check(self.admin("PTTL", self.lock_key(key)) > 2000, "the inner release reset the lease")
        # B waits (5 s); A's last release after 0.3 s wakes it through the channel.
        b.send_line(json.dumps(dict(v=1, id=500, op="acquire", key=key, ttl_ms=3000, timeout_ms=5000)))
        time.sleep(0.3)
        last = self.release(a, key, outer["token"])
        check(last.get("deleted") == 1, "the last release frees the lock", last)
        started = time.monotonic()
        woken, _ = b.wait_reply(500, 8, "acquire")
        check(woken.get("result") == "ok" and time.monotonic() - started < 1.0,
              "the waiter is woken by the release", woken)
        self.release(b, key, woken["token"])
        check(self.admin("EXISTS", self.lock_key(key)) == 0, "the key is gone")
        # node-redisson 1.0.4's tryLock gives up when one wait for the channel times out, and
        # that wait is bounded by the lock's PTTL (RedissonLock.js, tryLock: SYMBOL_TIMEOUT ->
        # return false): a waiter gives up when the holder's lease ends, with its own wait left,
        # instead of taking the expired lock (Java Redisson tries again until its wait is spent).
        self.acquire(a, key, ttl_ms=800)
        started = time.monotonic()
        late, _ = b.call("acquire", key=key, ttl_ms=3000, timeout_ms=4000, timeout=10)
        waited = time.monotonic() - started
        self.observed["a 4 s wait for a lock whose 800 ms lease runs out"] = dict(late, waited_s=round(waited, 2))
        check(late.get("result") == "fail" and late.get("error") == "gave_up" and waited < 2.0,
              "the waiter gives up when the lease ends (node-redisson's own bug)", late)
        check(self.admin("EXISTS", self.lock_key(key)) == 0, "the lock it gave up on is free")

    def test_renewal(self):
        if not self.spec["renew"]:
            self.observed["renewal"] = "none"
            return
        # A 2 s lease renewed every 667 ms, watched for 3.3 s: past 1.5 x its TTL, four renewals
        # or so. (With a 1 s lease renewed every 333 ms, a renewal task starved 667 ms lost it:
        # redis-py-asyncio's fifth renewal in a fresh-clone CI run, four tests at once on two
        # cores. A lease lost so is the limit of every lease, not the library's renewal.)
        a = self.connected(variant=self.spec["renew"], ttl_ms=2000)
        key = self.key("k7")
        granted, _ = self.acquire(a, key, ttl_ms=2000)
        events = a.events_for(3.3)  # past 1.5 x TTL
        # Then the next renewal's answer, and the key read right after it: a loaded machine may
        # starve the adapter's renewal task for a while, so the key is read when a renewal has
        # just succeeded, not at an instant the renewal may be late for.
        events += a.events_until(lambda e: e.get("event") == "extend" and "result" in e, 10)
        last = events[-1] if events else {}
        check(last.get("result") == "ok" and last.get("extended") == 1 and
              self.holds(key, granted["token"]), "the renewed lock outlives 1.5 x its TTL", events)
        invokes = [e for e in events if e.get("phase") == "invoke"]
        oks = [e for e in events if e.get("result") == "ok" and e.get("extended") == 1]
        check(len(invokes) >= 2 and len(oks) >= 2, "extend events", events)
        self.observed["extends in 3.3 s"] = len(oks)
        released = self.release(a, key, granted["token"])
        check(released.get("deleted") == 1, "release after renewing", released)
        check(self.admin("EXISTS", self.lock_key(key)) == 0, "the key is gone")
        after = a.events_for(1.2)
        check(not after, "no renewal after the release", after)
        # stop_renewal: the lock is left to expire.
        # (The lease the adapter renews is its configuration's, 2 s: a renewal just before the
        # stop may have set it so.)
        granted, _ = self.acquire(a, key, ttl_ms=2000)
        reply, _ = a.call("stop_renewal")
        check(reply.get("result") == "ok", "stop_renewal", reply)
        time.sleep(2.5)
        check(self.admin("EXISTS", self.lock_key(key)) == 0, "after stop_renewal the lock expires")
        released = self.release(a, key, granted["token"])
        check(released.get("deleted") == 0, "a release after expiry deletes nothing", released)


def run_broken_adapter_checks():
    """The broken adapter does what it says (the harness tests that use it are elsewhere)."""
    def hello(mode):
        adapter = Adapter(BROKEN + [mode])
        adapter.send_line(json.dumps(dict(v=1, id=1, op="hello")))
        return adapter

    def case(name, body):
        try:
            body()
            passed.append("broken_adapter: " + name)
        except Exception as e:  # noqa: BLE001 - every failure is reported the same way
            failed.append("broken_adapter: %s: %s" % (name, e))

    def crash():
        a = hello("crash")
        check(json.loads(a.next_line(5)).get("protocol") == 1, "hello")
        a.send_line(json.dumps(dict(v=1, id=2, op="acquire", key="k", ttl_ms=1, timeout_ms=0)))
        check(a.next_line(5) is None, "no reply, end of output")
        check(a.proc.wait(5) == 1 and "crashing" in a.stderr_text(), "exit 1 with a message")
        a.close()

    def hang():
        a = hello("hang")
        try:
            a.next_line(0.5, startup=False)  # silence is the point: no allowance for a start
            raise Failure("it answered")
        except Failure as e:
            check("no line" in str(e), "silence", str(e))
        check(a.close(timeout=0.5) is None, "still running after the end of input (killed)")

    def garbage():
        a = hello("garbage")
        line = a.next_line(5)
        try:
            json.loads(line)
            raise Failure("valid JSON: " + line)
        except ValueError:
            pass
        a.close()

    def version():
        a = hello("version")
        check(json.loads(a.next_line(5)).get("protocol") == 99, "protocol 99")
        check(a.close() == 0, "exit 0")

    for name, body in [("crash", crash), ("hang", hang), ("garbage", garbage), ("version", version)]:
        case(name, body)


USER, PASSWORD = "locksim-adaptertest", secrets.token_hex(16)
NARROW_USER = "locksim-adaptertest-narrow"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--covered-by":
        # ctest runs the adapters in groups: every adapter (and the broken one) must be in one.
        covered = set(sys.argv[2].split(","))
        missing = [s["name"] for s in ADAPTERS if s["name"] not in covered]
        missing += [] if "broken" in covered else ["broken"]
        unknown = covered - {s["name"] for s in ADAPTERS} - {"broken"}
        if missing or unknown:
            print("tests/CMakeLists.txt's adapter groups: in no group: %s; unknown: %s" % (
                ", ".join(missing) or "-", ", ".join(sorted(unknown)) or "-"))
            return 1
        print("every adapter is in a group: %s" % ", ".join(sorted(covered)))
        return 0
    only = set(sys.argv[1:])
    # A misspelt group member would make its ctest entry check nothing and pass.
    unknown = only - {spec["name"] for spec in ADAPTERS} - {"broken"}
    if unknown:
        print("unknown adapter(s): %s; known: %s, broken" % (
            ", ".join(sorted(unknown)), ", ".join(spec["name"] for spec in ADAPTERS)))
        return 2
    # SIGTERM (a CI timeout, say) unwinds like Ctrl-C, so the server is stopped on that path too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    server = Server()
    try:
        admin = Resp(server.port)
        # Like locksim's per-run user (sim/redis/acl_user.cc), plus the prefixes that libraries
        # put in front of the key; the narrow user has locksim's pattern only.
        rules = ["&*", "+@all", "-@dangerous"]
        admin("ACL", "SETUSER", USER, "reset", "on", ">" + PASSWORD, "~" + PREFIX + "*",
              "~mutex:" + PREFIX + "*", "~lock." + PREFIX + "*",
              "~@simple-redis-mutex:lock-" + PREFIX + "*", "~lock_" + PREFIX + "*",
              "~semaphore:" + PREFIX + "*", "~redisson_unlock_latch:{" + PREFIX + "*",
              "~redisson_lock__channel:{" + PREFIX + "*",
              "~b'_tooz'_" + PREFIX + "*", *rules)
        admin("ACL", "SETUSER", NARROW_USER, "reset", "on", ">" + PASSWORD, "~" + PREFIX + "*",
              *rules)
        admin.close()
        report = {}
        for spec in ADAPTERS:
            if only and spec["name"] not in only:
                continue
            suite = Suite(server, spec)
            for name in sorted(n for n in dir(Suite) if n.startswith("test_") and
                               (n != "test_cluster" or spec.get("cluster"))):
                label = "%s: %s" % (spec["name"], name[5:])
                t0 = time.monotonic()
                try:
                    getattr(suite, name)()
                    passed.append(label)
                    print("ok    %-48s %5.1f s" % (label, time.monotonic() - t0), flush=True)
                except Exception as e:  # noqa: BLE001 - a failed check or a broken adapter
                    detail = str(e) if isinstance(e, Failure) else traceback.format_exc()
                    failed.append(label)
                    print("FAIL  %s: %s" % (label, detail), flush=True)
                    for adapter in suite.open:
                        if adapter.proc.poll() is not None or isinstance(e, Failure):
                            text = adapter.stderr_text() if not adapter.stderr.closed else ""
                            if text.strip():
                                print("      adapter stderr: " + text.strip()[-800:], flush=True)
                finally:
                    for adapter in suite.open:
                        if adapter.proc.poll() is None:
                            adapter.close(timeout=2)
                    suite.open = []
            suite.admin.close()
            report[spec["name"]] = suite.observed
        if not only or "broken" in only:
            before = len(failed)
            run_broken_adapter_checks()
            print("%s    broken_adapter modes" % ("ok  " if len(failed) == before else "FAIL"))
        print("observed: " + json.dumps(report, indent=1, default=str))
    finally:
        server.stop()
        for started_cluster in CLUSTER:
            started_cluster.stop()
    for name in failed:
        print("failed: " + name)
    print("(%.0f s)" % (time.monotonic() - started))
    print("%d passed, %d failed" % (len(passed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
