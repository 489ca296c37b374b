#!/usr/bin/env node
'use strict';
// locksim worker-protocol adapter for redis-lock (errorception's, with node-redis v4, which it
// requires); see README.md. One variant, lib:redis-lock: SET NX PX with the holder's own
// expiry time as the value, retried every 50 ms for as long as it takes, and a release that
// DELs the key unless the holder's clock says the lock has already expired. No owner check,
// no extend, no renewal.

const common = require('../node/common');
const { fail, failure, COMMAND_TIMEOUT_MS } = common;
const redisLock = common.lib('redis-lock');
const { createClient } = common.lib('redis');

const PREFIX = 'lock.'; // redis-lock keeps its lock at "lock.<name>"
const GAVE_UP = Symbol('gave up');

async function makeWorker(req, ctx) {
  const endpoint = req.redis;
  const client = createClient({
    socket: { host: endpoint.host, port: endpoint.port, connectTimeout: COMMAND_TIMEOUT_MS },
    username: endpoint.username || undefined,
    password: endpoint.password || undefined,
    database: endpoint.db || 0,
  });
  client.on('error', () => {}); // every failure also reaches the command it broke
  await client.connect();

  const bounded = common.boundedCommands(client); // node-redis v4 has no command timeout

  // watched: the client as one acquisition's redis-lock sees it. Its SETs are counted (the first
  // refusal is the busy event) and their errors kept (the library swallows them and retries);
  // once the adapter has given up, the next SET never returns, which ends the library's loop
  // (it has no timeout of its own and would otherwise retry for ever).
  function watched(attempt) {
    return new Proxy(client, {
      get(target, prop) {
        if (prop === 'set') {
          return (key, value, options) => {
            if (attempt.abandoned) return new Promise(() => {});
            attempt.attempts += 1;
            attempt.sent = process.hrtime.bigint();
            attempt.inFlight = bounded(target.set(key, value, options)).then(
              (reply) => {
                if (reply === 'OK') attempt.value = String(value);
                else if (!attempt.busy) {
                  attempt.busy = true;
                  common.emit({ event: 'busy' });
                }
                return reply;
              },
              (err) => {
                attempt.errors.push(err);
                throw err;
              },
            );
            return attempt.inFlight;
          };
        }
        if (prop === 'del') return (...args) => bounded(target.del(...args));
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  const held = new Map(); // key -> done (the library's release function)
  return {
    async acquire(req) {
      const received = process.hrtime.bigint();
      const attempt = { attempts: 0, busy: false, value: null, errors: [], inFlight: null, abandoned: false };
      const lock = redisLock(watched(attempt)); // retryDelay: the library's 50 ms
      const granted = lock(req.key, req.ttl_ms);
      let timer;
      const timeout = new Promise((resolve) => (timer = setTimeout(resolve, req.timeout_ms, GAVE_UP)));
      let done = await Promise.race([granted, timeout]);
      clearTimeout(timer);
      if (done === GAVE_UP) {
        attempt.abandoned = true;
        await (attempt.inFlight || Promise.resolve()).catch(() => {}); // a SET already sent may win
        if (attempt.value === null) {
          const errors = attempt.errors.map((e) => failure(e));
          const maybe = errors.find((e) => e.result === 'info');
          const last = maybe || errors[errors.length - 1];
          if (last) return { ...last, attempts: attempt.attempts, message: `redis-lock swallowed and retried: ${last.message}` };
          return { result: 'fail', error: 'gave_up', attempts: attempt.attempts };
        }
        done = await granted;
      }
      held.set(req.key, done);
      return {
        result: 'ok',
        token: attempt.value,
        attempts: attempt.attempts,
        sent_after_ns: Number(attempt.sent - received),
        lock_key: PREFIX + req.key,
      };
    },

    async release(req) {
      const done = held.get(req.key);
      if (!done) return fail(`no lock of this adapter is held for "${req.key}"`);
      held.delete(req.key);
      // done(): DEL if the holder's clock says the lock has not expired, else nothing.
      const deleted = await done();
      if (deleted === undefined) {
        return { result: 'ok', deleted: 0, message: "by the holder's clock the lock had expired: redis-lock sent nothing" };
      }
      return { result: 'ok', deleted: Number(deleted) };
    },

    // No extend and no renewal: redis-lock has neither.

    async close() {
      await client.disconnect().catch(() => {});
    },
  };
}

common.run({
  hello: { worker: 'redis-lock', version: common.version('redis-lock'), lock_key: `${PREFIX}{key}` },
  variants: [{ name: 'lib:redis-lock', renews: false }],
  makeWorker,
});
