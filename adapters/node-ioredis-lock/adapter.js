#!/usr/bin/env node
'use strict';
// locksim worker-protocol adapter for @microfleet/ioredis-lock 6.0.1 (an ES module; ioredis);
// see README.md. One variant, lib:ioredis-lock: SET key uuid PX timeout NX, retried `retries`
// times every delay x [1, jitter) ms; release and extend are owner-checked Lua scripts
// (delifequal, pexpireifequal). No renewal.

const path = require('path');
const { pathToFileURL } = require('url');
const common = require('../node/common');
const { emit, fail, failure, errorName } = common;

const PKG = '@microfleet/ioredis-lock';
let createLock = null; // from the ES module, loaded by main()

// The library wraps every error of a call in its own class with the original message only
// (LockAcquisitionError(err.message)): the protocol's words come from that message.
function wrapped(err, extra = {}) {
  const reply = failure(err, extra);
  return { ...reply, library_error: errorName(err) };
}

async function makeWorker(req, ctx) {
  const held = new Map(); // key -> {lock, attempt}
  // Its defaults: timeout (the TTL) 10000 ms, retries 6, delay 50 ms, jitter 1.2.
  const defaults = { retries: 6, delay: 50, jitter: 1.2 };

  // watched: ctx.redis as one Lock sees it: its SET NX replies count the attempts (the first
  // refusal is the busy event); the SET that was granted is the one whose send time counts.
  function watched(attempt) {
    return new Proxy(ctx.redis, {
      get(target, prop) {
        if (prop === 'set') {
          return async (...args) => {
            attempt.attempts += 1;
            const sent = process.hrtime.bigint();
            const reply = await target.set(...args);
            if (reply === 'OK') attempt.sent = sent;
            else if (!attempt.busy) {
              attempt.busy = true;
              emit({ event: 'busy' });
            }
            return reply;
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  return {
    async acquire(req) {
      const received = process.hrtime.bigint();
      const attempt = { attempts: 0, busy: false, sent: received };
      // The wait is a count of retries, each delay x [1, jitter) ms apart (55 ms on average):
      // about timeout_ms / delay retries bound it by about timeout_ms.
      const retries = Math.floor(req.timeout_ms / defaults.delay);
      const lock = createLock(watched(attempt), { timeout: req.ttl_ms, retries });
      try {
        await lock.acquire(req.key);
      } catch (err) {
        if (/^Could not acquire lock/.test(err.message)) {
          return { result: 'fail', error: 'gave_up', attempts: attempt.attempts, library_error: errorName(err) };
        }
        return wrapped(err, { attempts: attempt.attempts });
      }
      held.set(req.key, lock);
      return {
        result: 'ok',
        token: lock._id, // the library's value: randomUUID() per Lock
        attempts: attempt.attempts,
        sent_after_ns: Number(attempt.sent - received),
      };
    },

    async release(req) {
      const lock = held.get(req.key);
      if (!lock) return fail(`no lock of this adapter is held for "${req.key}"`);
      held.delete(req.key);
      try {
        await lock.release();
      } catch (err) {
        // "Lock on <key> had expired": delifequal deleted nothing. "Lock has not been acquired":
        // an extend had found it gone, so the library sends nothing.
        if (/had expired|has not been acquired/.test(err.message)) {
          return { result: 'ok', deleted: 0, library_error: errorName(err), message: err.message };
        }
        return wrapped(err);
      }
      return { result: 'ok', deleted: 1 };
    },

    async extend(req) {
      const lock = held.get(req.key);
      if (!lock) return fail(`no lock of this adapter is held for "${req.key}"`);
      try {
        await lock.extend(req.ttl_ms); // pexpireifequal: PEXPIRE if the value is still ours
      } catch (err) {
        if (/had expired|has not been acquired/.test(err.message)) {
          return { result: 'ok', extended: 0, library_error: errorName(err), message: err.message };
        }
        return wrapped(err);
      }
      return { result: 'ok', extended: 1 };
    },
  };
}

async function main() {
  const entry = path.join(__dirname, '..', 'node', 'node_modules', PKG, 'lib', 'redislock.js');
  ({ createLock } = await import(pathToFileURL(entry).href));
  common.run({
    hello: { worker: PKG, version: common.version(PKG), lock_key: '{key}' },
    variants: [{ name: 'lib:ioredis-lock', renews: false }],
    makeWorker,
  });
}

main();
