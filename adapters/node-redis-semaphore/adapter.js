#!/usr/bin/env node
'use strict';
// locksim worker-protocol adapter for redis-semaphore's Mutex (with ioredis); see README.md.
// Variants: lib:redis-semaphore (the library's default: the Mutex refreshes itself every
// 0.8 x lockTimeout while held) and lib:redis-semaphore-norefresh (refreshInterval 0).

const common = require('../node/common');
const { emit, fail, failure, errorName } = common;
const { Mutex } = common.lib('redis-semaphore');

const PREFIX = 'mutex:'; // the Mutex keeps its lock at "mutex:<key>"

async function makeWorker(req, ctx) {
  const refresh = req.variant === 'lib:redis-semaphore';
  const held = new Map(); // key -> {mutex, client (the watched client it was given)}

  // watched: ctx.redis as this Mutex sees it. Its SET NX answers count the attempts (the first
  // refusal is the busy event) and its script replies say what a release deleted, which the
  // library keeps to itself (release() resolves the same either way).
  function watched(attempt) {
    return new Proxy(ctx.redis, {
      get(target, prop) {
        if (prop === 'set') {
          return async (...args) => {
            attempt.attempts += 1;
            attempt.sent = process.hrtime.bigint();
            const reply = await target.set(...args);
            if (reply !== 'OK' && attempt.attempts === 1) emit({ event: 'busy' });
            return reply;
          };
        }
        if (prop === 'evalsha' || prop === 'eval') {
          return async (...args) => (attempt.lastScriptReply = await target[prop](...args));
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  return {
    async acquire(req) {
      const received = process.hrtime.bigint();
      const attempt = { attempts: 0, lastScriptReply: null };
      const options = {
        lockTimeout: req.ttl_ms,
        acquireTimeout: req.timeout_ms,
        // The library's own retryInterval (10 ms) and refreshInterval (0.8 x lockTimeout).
        onLockLost: (err) => {
          // Its default throws, which (from a timer) ends the process. This one records it: the
          // refresh that found the lock gone has already sent its extend event.
          attempt.lost = err;
        },
      };
      // acquireTimeout 0 would never try at all (its loop runs while now < start + 0): a single
      // try is acquireAttemptsLimit 1.
      if (req.timeout_ms === 0) Object.assign(options, { acquireTimeout: 1000, acquireAttemptsLimit: 1 });
      if (!refresh) options.refreshInterval = 0;
      const mutex = new Mutex(watched(attempt), req.key, options);
      // The refresh is a private method the Mutex's timer calls: wrapped here to be seen.
      const refreshOnce = mutex._refresh.bind(mutex);
      mutex._refresh = async () => {
        emit({ event: 'extend', phase: 'invoke' });
        try {
          const refreshed = await refreshOnce();
          emit({ event: 'extend', result: 'ok', extended: refreshed ? 1 : 0 });
          return refreshed;
        } catch (err) {
          // The library does not catch this: rethrown from its timer, it ends the process
          // (Node's unhandled rejection), as it would in an application with Node's defaults.
          emit({ event: 'extend', ...failure(err) });
          throw err;
        }
      };
      try {
        await mutex.acquire();
      } catch (err) {
        if (errorName(err) === 'TimeoutError') {
          return { result: 'fail', error: 'gave_up', attempts: attempt.attempts, library_error: 'TimeoutError' };
        }
        return failure(err, { attempts: attempt.attempts });
      }
      held.set(req.key, { mutex, attempt });
      return {
        result: 'ok',
        token: mutex.identifier,
        attempts: attempt.attempts,
        sent_after_ns: Number(attempt.sent - received),
        lock_key: PREFIX + req.key,
      };
    },

    async release(req) {
      const entry = held.get(req.key);
      if (!entry) return fail(`no lock of this adapter is held for "${req.key}"`);
      held.delete(req.key);
      const { mutex, attempt } = entry;
      if (!mutex.isAcquired) {
        // A refresh found the lock gone (onLockLost): release() sends nothing at all.
        await mutex.release();
        return { result: 'ok', deleted: 0, library_error: errorName(attempt.lost), message: 'the Mutex had marked the lock lost; release sent nothing' };
      }
      attempt.lastScriptReply = null;
      await mutex.release(); // its errors reach the loop's failure()
      return { result: 'ok', deleted: Number(attempt.lastScriptReply) === 1 ? 1 : 0 };
    },

    // No extend: a Mutex has no public way to extend a held lock (its refresh is internal).

    async stopRenewal() {
      for (const { mutex } of held.values()) mutex.stopRefresh();
    },
  };
}

common.run({
  hello: { worker: 'redis-semaphore', version: common.version('redis-semaphore'), lock_key: `${PREFIX}{key}` },
  variants: [
    { name: 'lib:redis-semaphore', renews: true },
    { name: 'lib:redis-semaphore-norefresh', renews: false },
  ],
  makeWorker,
});
