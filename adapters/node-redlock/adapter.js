#!/usr/bin/env node
'use strict';
// locksim worker-protocol adapter for redlock v5 (the Redlock algorithm, with ioredis); see
// README.md. Variants: lib:redlock (acquire/release/extend) and lib:redlock-using (using(): the
// library extends the lock by itself while the routine runs, and releases when it returns).
// lib:redlock and lib:redlock-using use one server; lib:redlock-quorum takes connect's "servers"
// (every server of the topology) and is the library's Redlock over all of them: its acquire
// answers the servers that granted ("granted_on", indices) and the validity the library computed
// (lock.expiration - now: TTL minus the time the acquire took minus the drift).

// The same code drives @sesamecare-oss/redlock, the maintained fork of v5 with the same API
// (adapters/node-sesamecare-redlock/adapter.js calls main() with its module and variant names).

const common = require('../node/common');
const { emit, fail, failure, errorName } = common;

let Redlock, ExecutionError, ResourceLockedError; // set by main(), from the library's module
let VARIANT = 'lib:redlock'; // the variant names' stem: VARIANT, VARIANT-using, VARIANT-quorum

// votesAgainst: every error the servers answered in an ExecutionError's attempts.
async function votesAgainst(err) {
  const stats = await Promise.all(err.attempts || []);
  return stats.flatMap((s) => [...s.votesAgainst.values()]);
}

// outcome: an ExecutionError as "the lock was held by another value" (every vote against it
// was ResourceLockedError: the library's answer) or as the server error that decided it. Over a
// quorum (`quorum`: the number of servers), a last attempt that a majority refused with
// ResourceLockedError is a definite no whatever the others answered (a down server's error):
// our value can be on a minority at most, and the library releases it there before it throws.
async function outcome(err, quorum = 0) {
  if (!(err instanceof ExecutionError)) return { cause: err };
  if (quorum > 0 && err.attempts.length > 0) {
    const last = await err.attempts[err.attempts.length - 1];
    const refused = [...last.votesAgainst.values()].filter((e) => e instanceof ResourceLockedError);
    if (refused.length >= Math.floor(quorum / 2) + 1) return { locked: true };
  }
  const errors = await votesAgainst(err);
  const other = errors.filter((e) => !(e instanceof ResourceLockedError));
  return other.length === 0 ? { locked: true } : { cause: other[other.length - 1] };
}

// lastVotes: the last attempt of an ExecutionError in words: "last attempt: for n3; against n1
// (ResourceLockedError), ...".
async function lastVotes(err, names, clients) {
  const stats = await err.attempts[err.attempts.length - 1];
  const name = (client) => names[clients.indexOf(client)] || '?';
  const votesFor = [...stats.votesFor].map(name);
  const against = [...stats.votesAgainst].map(([client, e]) => `${name(client)} (${errorName(e) === "Error" ? e.message : errorName(e)})`);
  return `last attempt: for ${votesFor.join(', ') || 'none'}; against ${against.join(', ') || 'none'}`;
}

async function makeWorker(req, ctx) {
  const using = req.variant === `${VARIANT}-using`;
  const quorum = req.variant === `${VARIANT}-quorum`;
  if (quorum && !Array.isArray(req.servers)) {
    throw new common.ProtocolError(`${VARIANT}-quorum needs connect's "servers" (a topology of several servers)`);
  }
  const clients = quorum ? await Promise.all(req.servers.map(ctx.connect)) : [ctx.redis];
  const names = quorum ? req.servers.map((s, i) => s.name || `server ${i + 1}`) : [];
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
        const why = await outcome(err, quorum ? clients.length : 0);
        if (why.locked) {
          const refused = { result: 'fail', error: 'gave_up', attempts: err.attempts.length, library_error: errorName(err) };
          if (quorum && err.attempts.length > 0) refused.message = await lastVotes(err, names, clients);
          return refused;
        }
        // Server errors reach here only inside an ExecutionError; anything else is the library
        // refusing the request (using() wants ttl_ms >= automaticExtensionThreshold + 100).
        if (!(err instanceof ExecutionError)) return { ...fail(err.message), library_error: errorName(err) };
        return failure(why.cause, { library_error: errorName(err), attempts: err.attempts.length });
      } finally {
        acquiring = null;
      }
      const ok = { result: 'ok', token: attempt.lock.value, attempts: attempt.lock.attempts.length };
      if (quorum) {
        // The last attempt's votes: which servers hold the value now.
        const stats = await attempt.lock.attempts[attempt.lock.attempts.length - 1];
        ok.granted_on = clients.map((c, i) => (stats.votesFor.has(c) ? i : -1)).filter((i) => i >= 0);
        ok.validity_ms = Math.max(0, Math.floor(attempt.lock.expiration - Date.now()));
      }
      return ok;
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
      if (entry.release) return fail(`in ${VARIANT}-using the library extends the lock itself; extend is for ${VARIANT}`);
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

// main: run the adapter for `pkg` (a package in adapters/node) under the variant stem `variant`.
function main({ pkg = 'redlock', variant = 'lib:redlock', worker = 'redlock' } = {}) {
  const mod = common.lib(pkg);
  Redlock = mod.Redlock || mod.default;
  ({ ExecutionError, ResourceLockedError } = mod);
  VARIANT = variant;
  common.run({
    hello: { worker, version: common.version(pkg), lock_key: '{key}' },
    variants: [
      { name: variant, renews: false },
      { name: `${variant}-using`, renews: true },
      { name: `${variant}-quorum`, renews: false },
    ],
    makeWorker,
  });
}

module.exports = { main };
if (require.main === module) main();
