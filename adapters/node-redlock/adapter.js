#!/usr/bin/env node
'use strict';
// locksim worker-protocol adapter for redlock v5 (the Redlock algorithm, with ioredis); see
// README.md. Variants: lib:redlock (acquire/release/extend) and lib:redlock-using (using(): the
// library extends the lock by itself while the routine runs, and releases when it returns).
// One server now; connect may carry "servers": [endpoint, ...] for a quorum of several.

const common = require('../node/common');
const { emit, fail, failure, errorName } = common;
const redlockModule = common.lib('redlock');
const Redlock = redlockModule.default;
const { ExecutionError, ResourceLockedError } = redlockModule;

// votesAgainst: every error the servers answered in an ExecutionError's attempts.
async function votesAgainst(err) {
  const stats = await Promise.all(err.attempts || []);
  return stats.flatMap((s) => [...s.votesAgainst.values()]);
}

// outcome: an ExecutionError as "the lock was held by another value" (every vote against it
// was ResourceLockedError: the library's answer) or as the server error that decided it.
async function outcome(err) {
  if (!(err instanceof ExecutionError)) return { cause: err };
  const errors = await votesAgainst(err);
  const other = errors.filter((e) => !(e instanceof ResourceLockedError));
  return other.length === 0 ? { locked: true } : { cause: other[other.length - 1] };
}

async function makeWorker(req, ctx) {
  const using = req.variant === 'lib:redlock-using';
  const clients = Array.isArray(req.servers) ? await Promise.all(req.servers.map(ctx.connect)) : [ctx.redis];
  // The library's defaults: driftFactor 0.01, retryCount 10, retryDelay 200 ms, retryJitter
  // 100 ms, automaticExtensionThreshold 500 ms (using() extends 500 ms before the lock ends).
  const redlock = new Redlock(clients);
  const held = new Map(); // key -> {lock} or, with using(), {lock, release, done, stopped}
  let acquiring = null; // the acquire in progress: {busy}

  // The library reports every server's refusal as an "error" event: the first one of an
  // acquire is the busy answer.
  redlock.on('error', (err) => {
    if (acquiring && !acquiring.busy && err instanceof ResourceLockedError) {
      acquiring.busy = true;
      emit({ event: 'busy' });
    }
  });

  // using() takes its lock through this.acquire() and extends it through lock.extend(), which
  // calls this.extend(): both are watched here, on this instance only.
  const acquire = redlock.acquire.bind(redlock);
  redlock.acquire = async (...args) => {
    const lock = await acquire(...args);
    if (acquiring) acquiring.lock = lock;
    return lock;
  };
  redlock.extend = async (existing, duration, settings) => {
    const entry = [...held.values()].find((h) => h.lock === existing);
    if (entry && entry.stopped) {
      // stop_renewal: using() cannot be told to stop extending short of ending the routine
      // (which releases). Failing this extension before anything is sent, with the lock marked
      // expired, makes using() abort its signal and schedule no more extensions.
      existing.expiration = 0;
      throw new ExecutionError('renewal stopped by the harness (stop_renewal)', []);
    }
    emit({ event: 'extend', phase: 'invoke' });
    try {
      const lock = await Redlock.prototype.extend.call(redlock, existing, duration, settings);
      if (entry) entry.lock = lock;
      emit({ event: 'extend', result: 'ok', extended: 1 });
      return lock;
    } catch (err) {
      const why = await outcome(err);
      // A client-side refusal ("Cannot extend an already-expired lock.": the library's clock
      // says the lease is over, nothing is sent) counts as not extended, like a server's no.
      if (why.locked || (err instanceof ExecutionError && err.attempts.length === 0)) {
        emit({ event: 'extend', result: 'ok', extended: 0, library_error: errorName(err), message: err.message });
      } else {
        emit({ event: 'extend', ...failure(why.cause, { library_error: errorName(err) }) });
      }
      throw err;
    }
  };

  return {
    async acquire(req) {
      const settings = { retryCount: Math.floor(req.timeout_ms / redlock.settings.retryDelay) };
      acquiring = { busy: false, lock: null };
      const attempt = acquiring;
      try {
        if (!using) {
          attempt.lock = await redlock.acquire([req.key], req.ttl_ms, settings);
          held.set(req.key, { lock: attempt.lock });
        } else {
          let granted;
          const grant = new Promise((resolve) => (granted = resolve));
          const entry = { lock: null, stopped: false };
          entry.done = redlock.using([req.key], req.ttl_ms, settings, (signal) => {
            entry.signal = signal;
            entry.lock = attempt.lock;
            granted();
            return new Promise((resolve) => (entry.release = resolve));
          });
          entry.done.catch(() => {}); // its failure is awaited below or at the release
          await Promise.race([grant, entry.done]);
          held.set(req.key, entry);
        }
      } catch (err) {
        const why = await outcome(err);
        if (why.locked) return { result: 'fail', error: 'gave_up', attempts: err.attempts.length, library_error: errorName(err) };
        // Server errors reach here only inside an ExecutionError; anything else is the library
        // refusing the request (using() wants ttl_ms >= automaticExtensionThreshold + 100).
        if (!(err instanceof ExecutionError)) return { ...fail(err.message), library_error: errorName(err) };
        return failure(why.cause, { library_error: errorName(err), attempts: err.attempts.length });
      } finally {
        acquiring = null;
      }
      return { result: 'ok', token: attempt.lock.value, attempts: attempt.lock.attempts.length };
    },

    async release(req) {
      const entry = held.get(req.key);
      if (!entry) return fail(`no lock of this adapter is held for "${req.key}"`);
      held.delete(req.key);
      try {
        if (entry.release) {
          entry.release(); // the routine returns: using() waits for an extension in flight, then releases
          await entry.done;
        } else {
          await entry.lock.release();
        }
      } catch (err) {
        const why = await outcome(err);
        if (why.locked) return { result: 'ok', deleted: 0, library_error: errorName(err), message: err.message };
        return failure(why.cause, { library_error: errorName(err) });
      }
      return { result: 'ok', deleted: 1 };
    },

    async extend(req) {
      const entry = held.get(req.key);
      if (!entry) return fail(`no lock of this adapter is held for "${req.key}"`);
      if (entry.release) return fail('in lib:redlock-using the library extends the lock itself; extend is for lib:redlock');
      try {
        entry.lock = await Redlock.prototype.extend.call(redlock, entry.lock, req.ttl_ms);
      } catch (err) {
        const why = await outcome(err);
        if (why.locked || (err instanceof ExecutionError && err.attempts.length === 0)) {
          return { result: 'ok', extended: 0, library_error: errorName(err), message: err.message };
        }
        return failure(why.cause, { library_error: errorName(err) });
      }
      return { result: 'ok', extended: 1 };
    },

    async stopRenewal() {
      for (const entry of held.values()) entry.stopped = true;
    },
  };
}

common.run({
  hello: { worker: 'redlock', version: common.version('redlock'), lock_key: '{key}' },
  variants: [
    { name: 'lib:redlock', renews: false },
    { name: 'lib:redlock-using', renews: true },
  ],
  makeWorker,
});
