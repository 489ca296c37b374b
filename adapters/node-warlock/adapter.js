#!/usr/bin/env node
'use strict';
// locksim worker-protocol adapter for node-redis-warlock 1.0.2 (written for node-redis v3's
// callback API, which ioredis also speaks: the adapter gives it the common ioredis client); see
// README.md. One variant, lib:warlock: SET <key>:lock uuid PX ttl NX; optimistic() retries
// maxAttempts times `wait` ms apart; release (parityDel) and extend (touch: parityRelock) are
// owner-checked Lua scripts run through node-redis-script. No renewal.

const common = require('../node/common');
const { emit, fail, failure, errorName } = common;
const Warlock = common.lib('node-redis-warlock');

const PKG = 'node-redis-warlock';
const SUFFIX = ':lock'; // warlock keeps its lock at "<key>:lock"

async function makeWorker(req, ctx) {
  // node-redis-script (its script runner) returns undefined for any error but NOSCRIPT, so the
  // adapter keeps the last error of an EVALSHA/SCRIPT call to say what happened.
  const seen = { error: null, busy: false, attempts: 0, sent: 0n, acquiring: false };
  const client = new Proxy(ctx.redis, {
    get(target, prop) {
      if (prop === 'set') {
        return (...args) => {
          const callback = args.pop();
          seen.attempts += 1;
          const sent = process.hrtime.bigint();
          return target.set(...args, (err, reply) => {
            if (!err && reply === 'OK') Object.assign(seen, { sent, value: String(args[1]) });
            else if (!err && seen.acquiring && !seen.busy) {
              seen.busy = true;
              emit({ event: 'busy' });
            }
            callback(err, reply);
          });
        };
      }
      if (prop === 'evalsha' || prop === 'script') {
        return (...args) => {
          const callback = args.pop();
          return target[prop](...args, (err, reply) => {
            if (err && !/NOSCRIPT/.test(err.message)) seen.error = err;
            callback(err, reply);
          });
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const warlock = Warlock(client);
  // optimistic(key, ttl, maxAttempts, wait) has no defaults (its README: 4 attempts, 1000 ms
  // apart). wait: the scenario's poll interval (the wait a user of this library picks), else
  // the README's 1000 ms; maxAttempts: enough to cover timeout_ms.
  const wait = Math.max(1, (req.lock && req.lock.wait && (req.lock.wait.interval_ms || req.lock.wait.initial_ms)) || 1000);
  const held = new Map(); // key -> {unlock, id}

  return {
    async acquire(req) {
      const received = process.hrtime.bigint();
      Object.assign(seen, { busy: false, attempts: 0, sent: received, value: null, acquiring: true });
      const maxAttempts = Math.floor(req.timeout_ms / wait) + 1;
      let unlock;
      try {
        unlock = await new Promise((resolve, reject) => {
          warlock.optimistic(req.key, req.ttl_ms, maxAttempts, wait, (err, fn) => (err ? reject(err) : resolve(fn)));
        });
      } catch (err) {
        if (err.message === 'unable to obtain lock') {
          return { result: 'fail', error: 'gave_up', attempts: seen.attempts, library_error: errorName(err) };
        }
        return failure(err, { attempts: seen.attempts });
      } finally {
        seen.acquiring = false;
      }
      // unlock = warlock.unlock.bind(warlock, key, id): the id is its bound argument, which
      // optimistic() does not pass on; it is the value of the SET that was granted.
      const id = seen.value;
      held.set(req.key, { unlock, id });
      return {
        result: 'ok',
        token: id,
        attempts: seen.attempts,
        sent_after_ns: Number(seen.sent - received),
        lock_key: req.key + SUFFIX,
      };
    },

    async release(req) {
      const entry = held.get(req.key);
      if (!entry) return fail(`no lock of this adapter is held for "${req.key}"`);
      held.delete(req.key);
      seen.error = null;
      const result = await new Promise((resolve) => entry.unlock((err, r) => resolve(err || r)));
      if (result instanceof Error) return failure(result);
      if (result === undefined) {
        // node-redis-script swallowed the error: the library's caller sees a release that
        // "succeeded" with no result.
        return { ...failure(seen.error || new Error('no reply')), message: `node-redis-script swallowed: ${seen.error ? seen.error.message : 'no reply'}` };
      }
      return { result: 'ok', deleted: Number(result) === 1 ? 1 : 0 };
    },

    async extend(req) {
      const entry = held.get(req.key);
      if (!entry) return fail(`no lock of this adapter is held for "${req.key}"`);
      seen.error = null;
      let result;
      try {
        // touch(key, id, ttl): parityRelock with numKeys 3: the TTL and the id go as KEYS.
        result = await warlock.touch(req.key, entry.id, req.ttl_ms);
      } catch (err) {
        return failure(err);
      }
      if (result === undefined) {
        return { ...failure(seen.error || new Error('no reply')), message: `node-redis-script swallowed: ${seen.error ? seen.error.message : 'no reply'}` };
      }
      return { result: 'ok', extended: result === 'OK' ? 1 : 0 };
    },
  };
}

common.run({
  hello: { worker: PKG, version: common.version(PKG), lock_key: `{key}${SUFFIX}` },
  variants: [{ name: 'lib:warlock', renews: false }],
  makeWorker,
});
