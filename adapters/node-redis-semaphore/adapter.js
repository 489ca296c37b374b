#!/usr/bin/env node
'use strict';
// locksim worker-protocol adapter for redis-semaphore's Mutex, Semaphore and MultiSemaphore (with
// ioredis); see README.md. Variants: lib:redis-semaphore (the Mutex with the library's default:
// it refreshes itself every 0.8 x lockTimeout while held), lib:redis-semaphore-norefresh
// (refreshInterval 0), lib:redis-semaphore-semaphore (a Semaphore of lock.permits, default
// refresh) and lib:redis-semaphore-multi (a MultiSemaphore of 2 x lock.permits taking 2 per
// acquire, default refresh: at most lock.permits holders, as the Semaphore).

const common = require('../node/common');
const { emit, fail, failure, errorName } = common;
const { Mutex, Semaphore, MultiSemaphore } = common.lib('redis-semaphore');

// How many of the MultiSemaphore's permits one acquire takes: its limit is this many times
// lock.permits, so that no more than lock.permits clients hold it at once, which is what the
// harness counts (it counts holders, not permits).
const MULTI_PERMITS_PER_ACQUIRE = 2;

// Each variant: the class it runs, where that class keeps its lock, and whether it refreshes.
const VARIANTS = {
  'lib:redis-semaphore': { kind: 'mutex', prefix: 'mutex:', refresh: true },
  'lib:redis-semaphore-norefresh': { kind: 'mutex', prefix: 'mutex:', refresh: false },
  'lib:redis-semaphore-semaphore': { kind: 'semaphore', prefix: 'semaphore:', refresh: true },
  'lib:redis-semaphore-multi': { kind: 'multi', prefix: 'semaphore:', refresh: true },
};

async function makeWorker(req, ctx) {
  const { kind, prefix, refresh } = VARIANTS[req.variant];
  const permits = Number.isInteger(req.lock.permits) ? req.lock.permits : 1;
  if (kind !== 'mutex' && permits < 1) throw new common.ProtocolError('lock.permits must be at least 1');
  const held = new Map(); // key -> {mutex, attempt}

  // watched: ctx.redis as this lock sees it. Its acquire commands count the attempts (the first
  // refusal is the busy event): the Mutex's SET NX, the semaphores' acquire script (EVALSHA, and
  // the EVAL that follows a NOSCRIPT as the same attempt). The replies of its other scripts and
  // of the Semaphore's ZREM say what a release removed, which the library keeps to itself
  // (release() resolves the same either way).
  function watched(attempt) {
    return new Proxy(ctx.redis, {
      get(target, prop) {
        if (prop === 'set' || (attempt.acquiring && (prop === 'evalsha' || prop === 'eval'))) {
          return async (...args) => {
            if (prop !== 'eval') attempt.attempts += 1;
            attempt.sent = process.hrtime.bigint();
            const reply = await target[prop](...args);
            const granted = prop === 'set' ? reply === 'OK' : Number(reply) === 1;
            if (!granted && attempt.attempts === 1) emit({ event: 'busy' });
            return reply;
          };
        }
        if (prop === 'evalsha' || prop === 'eval' || prop === 'zrem') {
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
      const attempt = { attempts: 0, lastScriptReply: null, acquiring: true };
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
      const client = watched(attempt);
      const mutex =
        kind === 'mutex' ? new Mutex(client, req.key, options)
        : kind === 'semaphore' ? new Semaphore(client, req.key, permits, options)
        : new MultiSemaphore(client, req.key, MULTI_PERMITS_PER_ACQUIRE * permits,
                             MULTI_PERMITS_PER_ACQUIRE, options);
      // The refresh is a private method the lock's timer calls: wrapped here to be seen.
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
        attempt.acquiring = false;
        if (errorName(err) === 'TimeoutError') {
          return { result: 'fail', error: 'gave_up', attempts: attempt.attempts, library_error: 'TimeoutError' };
        }
        return failure(err, { attempts: attempt.attempts });
      }
      attempt.acquiring = false;
      held.set(req.key, { mutex, attempt });
      return {
        result: 'ok',
        token: mutex.identifier,
        attempts: attempt.attempts,
        sent_after_ns: Number(attempt.sent - received),
        lock_key: prefix + req.key,
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
        return { result: 'ok', deleted: 0, library_error: errorName(attempt.lost), message: `the ${kind === 'mutex' ? 'Mutex' : 'semaphore'} had marked the lock lost; release sent nothing` };
      }
      attempt.lastScriptReply = null;
      await mutex.release(); // its errors reach the loop's failure()
      // The Mutex's script answers 1 or 0, the Semaphore's ZREM 1 or 0, the MultiSemaphore's
      // script how many of its permits it removed (all or none: they share one score).
      const removed = Number(attempt.lastScriptReply);
      if (kind === 'multi') return { result: 'ok', deleted: removed > 0 ? 1 : 0, permits_removed: removed };
      return { result: 'ok', deleted: removed === 1 ? 1 : 0 };
    },

    // No extend: none of the three has a public way to extend a held lock (its refresh is
    // internal).

    async stopRenewal() {
      for (const { mutex } of held.values()) mutex.stopRefresh();
    },
  };
}

common.run({
  // lock_key: the Mutex's (the adapter's first variants); each variant names its own below.
  hello: { worker: 'redis-semaphore', version: common.version('redis-semaphore'), lock_key: 'mutex:{key}' },
  variants: Object.entries(VARIANTS).map(([name, v]) => ({
    name,
    renews: v.refresh,
    kind: v.kind === 'mutex' ? 'mutex' : 'semaphore',
    lock_key: `${v.prefix}{key}`,
  })),
  makeWorker,
});
