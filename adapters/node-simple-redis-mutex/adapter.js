#!/usr/bin/env node
'use strict';
// locksim worker-protocol adapter for simple-redis-mutex 2.1.0 (node-redis 4.7.1); see
// README.md. One variant, lib:simple-redis-mutex: SET @simple-redis-mutex:lock-<key>
// Math.random() NX PX; then INCR of a global counter for a fencing token; waiters wake on a
// Pub/Sub message the release script publishes, and poll only every pollingInterval (10 s by
// default); release is an owner-checked Lua script that returns nothing; refreshTimeout() is
// GET, compare, then PEXPIRE (two commands). No renewal of its own.

const common = require('../node/common');
const { emit, fail, failure, errorName, COMMAND_TIMEOUT_MS } = common;
const mutex = common.lib('simple-redis-mutex');
const { createClient } = common.lib('redis');

const PKG = 'simple-redis-mutex';
const LOCK_PREFIX = '@simple-redis-mutex:lock-';
// Two names the library uses for every lock of a Redis: the fencing counter and the release
// channel. locksim's per-run ACL user may touch only the run's names (locksim:<run>:* and the
// lock key's prefix), so the adapter moves these two into the run's namespace under the lock
// prefix: same use, one counter and one channel per run instead of per server.
const COUNTER = '@simple-redis-mutex:fencing-tokens';
const CHANNEL = '@simple-redis-mutex:locks-releases';

async function makeWorker(req, ctx) {
  const endpoint = req.redis;
  const options = {
    socket: { host: endpoint.host, port: endpoint.port, connectTimeout: COMMAND_TIMEOUT_MS, reconnectStrategy: (n) => Math.min(n * 50, 500) },
    username: endpoint.username || undefined,
    password: endpoint.password || undefined,
    database: endpoint.db || 0,
  };
  const client = createClient(options);
  client.on('error', () => {}); // every failure also reaches the command it broke
  await client.connect();

  let namespace = null; // locksim:<run>: from the first key
  const rename = (name) => (name === COUNTER || name === CHANNEL ? `${LOCK_PREFIX}${namespace}${name.slice(1)}` : name);

  const bounded = common.boundedCommands(client); // node-redis v4 has no command timeout

  const released = new Set(); // values the release channel announced (deleted by their owner)
  let subscriber = null;
  let attempt = null; // the acquire in progress: {attempts, busy, value, sent, inFlight}

  // The client as the library sees it: SETs counted (busy, attempts, the value), the two global
  // names moved, the subscriber it duplicates watched, every command bounded in time.
  const watched = new Proxy(client, {
    get(target, prop) {
      if (prop === 'set') {
        return (key, value, opts) => {
          const current = attempt;
          if (current) {
            current.attempts += 1;
            current.lastSent = process.hrtime.bigint();
          }
          const reply = bounded(target.set(key, value, opts)).then((r) => {
            if (current && r === 'OK') Object.assign(current, { value: String(value), sent: current.lastSent });
            else if (current && !current.busy) {
              current.busy = true;
              emit({ event: 'busy' });
            }
            return r;
          }, (err) => {
            if (current) current.errors.push(err);
            throw err;
          });
          if (current) current.inFlight = reply;
          return reply;
        };
      }
      if (prop === 'incr') return (key) => bounded(target.incr(rename(key)));
      if (prop === 'evalSha' || prop === 'eval') {
        return (script, params) => bounded(target[prop](script, { ...params, keys: params.keys.map(rename) }));
      }
      if (prop === 'get' || prop === 'pExpire' || prop === 'scriptLoad') {
        return (...args) => bounded(target[prop](...args));
      }
      if (prop === 'duplicate') {
        return () => {
          const sub = target.duplicate();
          subscriber = sub;
          return new Proxy(sub, {
            get(t, p) {
              if (p === 'subscribe') {
                return (channel, listener) => t.subscribe(rename(channel), (message) => {
                  try {
                    released.add(JSON.parse(message).value);
                  } catch (_) { /* the library parses it too */ }
                  return listener(message);
                });
              }
              const v = Reflect.get(t, p, t);
              return typeof v === 'function' ? v.bind(t) : v;
            },
          });
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

  const held = new Map(); // key -> {release, value}
  return {
    async acquire(req) {
      if (namespace === null) namespace = (/^([^:]*:[^:]*:)/.exec(req.key) || ['', ''])[1];
      const received = process.hrtime.bigint();
      attempt = { attempts: 0, busy: false, value: null, sent: received, errors: [], inFlight: null };
      const current = attempt;
      let release;
      try {
        if (req.timeout_ms === 0) {
          // One try is the library's tryLock (lock() with failAfter 0 always rejects: its timer
          // fires before the first SET's reply).
          const [hasLock, fn] = await mutex.tryLock(watched, req.key, { timeout: req.ttl_ms });
          if (!hasLock) return { result: 'fail', error: 'gave_up', attempts: current.attempts };
          release = fn;
        } else {
          // The library's defaults but the TTL (timeout) and the wait (failAfter):
          // pollingInterval 10 s, Pub/Sub wake-ups on release.
          release = await mutex.lock(watched, req.key, { timeout: req.ttl_ms, failAfter: req.timeout_ms });
        }
      } catch (err) {
        // lock() rejects on failAfter with its timer, whatever is in flight; and tryLock's
        // errors (a timeout, NOPERM) reach here too. lock() swallows an attempt's error: the
        // attempt's promise rejects unhandled, which the adapter catches below (process-wide).
        await (current.inFlight || Promise.resolve()).catch(() => {});
        if (current.value !== null) {
          // The SET in flight when the library gave up took the lock: nobody will release it
          // (the library drops that release function); it is held until its TTL.
          return {
            result: 'info', error: 'timeout', attempts: current.attempts, library_error: errorName(err),
            message: `the library gave up (${err.message}) while its SET was in flight; that SET took the lock, and nothing releases it before its TTL`,
          };
        }
        if (/could not be acquired/.test(err.message)) {
          const last = current.errors.map((e) => failure(e));
          const maybe = last.find((e) => e.result === 'info') || last[last.length - 1];
          if (maybe) return { ...maybe, attempts: current.attempts, message: `simple-redis-mutex swallowed: ${maybe.message}` };
          return { result: 'fail', error: 'gave_up', attempts: current.attempts, library_error: errorName(err) };
        }
        return failure(err, { attempts: current.attempts });
      } finally {
        attempt = null;
      }
      held.set(req.key, { release, value: current.value });
      const ok = {
        result: 'ok',
        token: current.value,
        attempts: current.attempts,
        sent_after_ns: Number(current.sent - received),
        lock_key: LOCK_PREFIX + req.key,
      };
      // fencingToken is the INCR's reply. After a lost reply, node-redis pairs the replies of
      // commands pipelined meanwhile with the wrong commands (observed under lost-acquire-reply:
      // null, or a SET's "OK"): the library then hands out that as its fencing token.
      if (Number.isInteger(release.fencingToken)) ok.fencing = release.fencingToken;
      else ok.message = `the library's fencing token is ${JSON.stringify(release.fencingToken)}, not a number: a reply paired with the wrong command`;
      return ok;
    },

    async release(req) {
      const entry = held.get(req.key);
      if (!entry) return fail(`no lock of this adapter is held for "${req.key}"`);
      held.delete(req.key);
      await entry.release(); // its errors reach the loop's failure()
      // The script returns nothing: it deleted iff it published the value on the release
      // channel, which the library's own subscriber receives (usually before this reply).
      const deadline = Date.now() + 200;
      while (!released.has(entry.value) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      const deleted = released.delete(entry.value) ? 1 : 0;
      return { result: 'ok', deleted };
    },

    async extend(req) {
      const entry = held.get(req.key);
      if (!entry) return fail(`no lock of this adapter is held for "${req.key}"`);
      // refreshTimeout(): GET, compare in the client, then PEXPIRE with the lock's own timeout
      // (it takes no TTL: ttl_ms is ignored). It answers nothing: extended is read back.
      await entry.release.refreshTimeout();
      const value = await bounded(client.get(LOCK_PREFIX + req.key));
      return { result: 'ok', extended: value === entry.value ? 1 : 0 };
    },

    async close() {
      if (subscriber) await subscriber.disconnect().catch(() => {});
      await client.disconnect().catch(() => {});
    },
  };
}

// lock()'s attempts are not awaited by anyone: an attempt's error (a timeout, NOPERM) is an
// unhandled rejection, which would end the process. Kept (the adapter reports it at the end of
// the acquire) rather than crashing.
process.on('unhandledRejection', () => {});

common.run({
  hello: { worker: PKG, version: common.version(PKG), lock_key: `${LOCK_PREFIX}{key}` },
  variants: [{ name: 'lib:simple-redis-mutex', renews: false }],
  makeWorker,
});
