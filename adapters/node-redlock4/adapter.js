#!/usr/bin/env node
'use strict';
// locksim worker-protocol adapter for redlock 4.2.0 (npm's `latest` tag; installed beside v5 as
// the alias "redlock4"), with ioredis; see README.md. Variants: lib:redlock4 (one server) and
// lib:redlock4-quorum (connect's "servers": every server of the topology, the library's quorum
// N/2 + 1). Its acquire answers the servers that granted ("granted_on") and the validity the
// library computed (lock.expiration - now: TTL minus the attempt's time minus the drift).
//
// redlock 4 reports nothing per server (a server's error is a "clientError" event, a refusal
// is silent), so the adapter watches the library's own script calls: Redlock#_executeScript
// (server, name, args, callback) is wrapped to see which server answered what, per attempt.

const common = require('../node/common');
const { emit, fail, failure, errorName } = common;
const Redlock = common.lib('redlock4');

const PKG = 'redlock4';

async function makeWorker(req, ctx) {
  const quorum = req.variant === 'lib:redlock4-quorum';
  if (quorum && !Array.isArray(req.servers)) {
    throw new common.ProtocolError('lib:redlock4-quorum needs connect\'s "servers" (a topology of several servers)');
  }
  const clients = quorum ? await Promise.all(req.servers.map(ctx.connect)) : [ctx.redis];
  const names = quorum ? req.servers.map((s, i) => s.name || `server ${i + 1}`) : ['redis'];
  const majority = Math.floor(clients.length / 2) + 1;

  // What the library's scripts answered while the adapter's current call runs:
  // call.attempts[i] = {sent: Set(index), granted: Set, refused: Set, errors: Map(index -> err)}
  // for lockScript (acquire) and extendScript (extend); call.unlocks likewise for the release.
  let call = null;
  function watch(redlock) {
    const execute = redlock._executeScript.bind(redlock);
    redlock._executeScript = (server, name, args, callback) => {
      const index = clients.indexOf(server);
      const current = call;
      let round = null;
      if (current) {
        const list = name === 'unlockScript' ? current.unlocks : current.attempts;
        if (list.length === 0 || list[list.length - 1].sent.has(index)) {
          list.push({ sent: new Set(), granted: new Set(), refused: new Set(), errors: new Map() });
        }
        round = list[list.length - 1];
        round.sent.add(index);
      }
      return execute(server, name, args, (err, result) => {
        if (round) {
          if (err) round.errors.set(index, err);
          else if (Number(result) >= 1) round.granted.add(index);
          else {
            round.refused.add(index);
            if (name === 'lockScript' && current.op === 'acquire' && !current.busy) {
              current.busy = true;
              emit({ event: 'busy' });
            }
          }
        }
        callback(err, result);
      });
    };
    return redlock;
  }

  // The library's defaults: driftFactor 0.01, retryCount 10, retryDelay 200 ms, retryJitter
  // 100 ms. A per-call retryCount of 0 cannot be asked for (`options.retryCount ||
  // self.retryCount` takes 0 for "unset"): a single try is a second instance built with 0.
  const redlock = watch(new Redlock(clients));
  const once = watch(new Redlock(clients, { retryCount: 0 }));
  const held = new Map(); // key -> lock

  // cause: the last server error of the rounds, if a majority of the last round did not refuse.
  function cause(rounds) {
    const last = rounds[rounds.length - 1];
    if (last && last.refused.size >= majority) return null; // a definite no
    for (let i = rounds.length - 1; i >= 0; i -= 1) {
      const errors = [...rounds[i].errors.values()];
      if (errors.length > 0) return errors[errors.length - 1];
    }
    return null;
  }

  function lastVotes(round) {
    const name = (i) => names[i] || '?';
    const against = [...round.refused].map((i) => `${name(i)} (refused)`)
      .concat([...round.errors].map(([i, e]) => `${name(i)} (${errorName(e)}: ${String(e.message).slice(0, 60)})`));
    return `last attempt: for ${[...round.granted].map(name).join(', ') || 'none'}; against ${against.join(', ') || 'none'}`;
  }

  return {
    async acquire(req) {
      const retryCount = Math.floor(req.timeout_ms / redlock.retryDelay);
      const instance = retryCount === 0 ? once : redlock;
      const options = retryCount === 0 ? {} : { retryCount };
      call = { op: 'acquire', busy: false, attempts: [], unlocks: [] };
      const attempt = call;
      let lock;
      try {
        // lock(resource, ttl, callback) takes no options: lockWithOptions does.
        lock = await instance.lockWithOptions(req.key, req.ttl_ms, options);
      } catch (err) {
        const why = cause(attempt.attempts);
        const tried = attempt.attempts.length;
        if (why) return failure(why, { library_error: errorName(err), attempts: tried });
        const refused = { result: 'fail', error: 'gave_up', attempts: tried, library_error: errorName(err) };
        if (quorum && tried > 0) refused.message = lastVotes(attempt.attempts[tried - 1]);
        return refused;
      } finally {
        call = null;
      }
      held.set(req.key, lock);
      const last = attempt.attempts[attempt.attempts.length - 1];
      const ok = { result: 'ok', token: lock.value, attempts: lock.attempts };
      if (quorum) {
        ok.granted_on = [...last.granted].sort((a, b) => a - b);
        ok.validity_ms = Math.max(0, Math.floor(lock.expiration - Date.now()));
      }
      return ok;
    },

    async release(req) {
      const lock = held.get(req.key);
      if (!lock) return fail(`no lock of this adapter is held for "${req.key}"`);
      held.delete(req.key);
      call = { op: 'release', attempts: [], unlocks: [] };
      const watched = call;
      try {
        await lock.unlock(); // one round, no retries: resolves when a majority deleted the value
      } catch (err) {
        // LockError "Unable to fully release the lock": the value was gone on a majority, or a
        // server did not answer.
        const round = watched.unlocks[watched.unlocks.length - 1];
        const errors = round ? [...round.errors.values()] : [];
        const deletedSomewhere = round && round.granted.size > 0;
        if (errors.length > 0 && (!round || round.refused.size < majority)) {
          return failure(errors[errors.length - 1], { library_error: errorName(err) });
        }
        return { result: 'ok', deleted: 0, library_error: errorName(err), message: err.message + (deletedSomewhere ? ` (deleted on a minority: ${[...round.granted].map((i) => names[i]).join(', ')})` : '') };
      } finally {
        call = null;
      }
      return { result: 'ok', deleted: 1 };
    },

    async extend(req) {
      const lock = held.get(req.key);
      if (!lock) return fail(`no lock of this adapter is held for "${req.key}"`);
      call = { op: 'extend', attempts: [], unlocks: [] };
      const watched = call;
      try {
        // redlock.extend re-runs _lock with the lock's value and the extend script, with the
        // instance's retries (10 x 200 ms): a lost lock answers after about 2 s.
        await lock.extend(req.ttl_ms);
      } catch (err) {
        const why = cause(watched.attempts);
        if (why) return failure(why, { library_error: errorName(err) });
        return { result: 'ok', extended: 0, library_error: errorName(err), message: err.message };
      } finally {
        call = null;
      }
      return { result: 'ok', extended: 1 };
    },
  };
}

common.run({
  hello: { worker: 'redlock4', version: common.version(PKG), lock_key: '{key}' },
  variants: [
    { name: 'lib:redlock4', renews: false },
    { name: 'lib:redlock4-quorum', renews: false },
  ],
  makeWorker,
});
