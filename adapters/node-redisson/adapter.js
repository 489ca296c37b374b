#!/usr/bin/env node
'use strict';
// locksim worker-protocol adapter for node-redisson's RLock (a Node port of Java Redisson's
// reentrant lock, over ioredis); see README.md. The lock is the client's: each process is one
// Redisson instance and its clientId is the client's name (connect's "client"), so an acquire by
// the holder is a nested acquire the library counts, and a release takes one hold away.
// Variants: lib:node-redisson (leaseTime = ttl_ms, no watchdog), lib:node-redisson-watchdog
// (leaseTime omitted: the library's watchdog, lockWatchdogTimeout = ttl_ms, renews every third).

const common = require('../node/common');
const { emit, failure, errorName } = common;
const { Redisson } = common.lib('node-redisson');

const VARIANTS = {
  'lib:node-redisson': { watchdog: false },
  'lib:node-redisson-watchdog': { watchdog: true },
};

async function makeWorker(req, ctx) {
  const { watchdog } = VARIANTS[req.variant];
  const clientId = ctx.client;
  // Redisson makes its own two ioredis clients (commands, and the subscriber its waiters listen
  // on) from these options: the same bounds as every adapter's client.
  const redisson = new Redisson({
    redis: { options: { ...common.redisOptions(req.redis), lazyConnect: true } },
    // The watchdog's lease (and its period, a third of it); unused by a lease given to tryLock.
    lockWatchdogTimeout: BigInt(req.lock.ttl_ms),
  });
  const clients = [redisson.redis, redisson.commandExecutor.subscribeRedis];
  let lastError = null;
  for (const client of clients) {
    common.dropAfterTimeout(client);
    client.on('error', (err) => (lastError = err));
  }
  try {
    await Promise.all(clients.map((client) => client.ping()));
  } catch (err) {
    clients.forEach((client) => client.disconnect());
    throw lastError || err;
  }

  // The watchdog's renewal is its client's rRenewExpiration script (a hash field check, then
  // PEXPIRE): wrapped to be seen. The library catches its errors (console.error, to stderr) and
  // then renews no more.
  const renew = redisson.redis.rRenewExpiration.bind(redisson.redis);
  redisson.redis.rRenewExpiration = async (...args) => {
    emit({ event: 'extend', phase: 'invoke' });
    try {
      const reply = await renew(...args);
      emit({ event: 'extend', result: 'ok', extended: Number(reply) === 1 ? 1 : 0 });
      return reply;
    } catch (err) {
      emit({ event: 'extend', ...failure(err) });
      throw err;
    }
  };

  // One lock object per key, as an application keeps its RLock: its lease time (set by a
  // successful tryLock) is what an inner release resets the lease to.
  const locks = new Map(); // key -> {lock, attempt, unlockReply}
  function lockOf(key) {
    if (locks.has(key)) return locks.get(key);
    const entry = { lock: redisson.getLock(key, clientId), attempt: null, unlockReply: undefined };
    // Each try is one rTryLockInner script (nil: granted; else the lock's PTTL): counted here,
    // the first refusal is the busy event.
    const tryOnce = entry.lock.tryLockInner.bind(entry.lock);
    entry.lock.tryLockInner = async (options) => {
      const attempt = entry.attempt;
      if (attempt) {
        attempt.attempts += 1;
        attempt.sent = process.hrtime.bigint();
      }
      const ttl = await tryOnce(options);
      if (attempt && ttl !== null && attempt.attempts === 1) emit({ event: 'busy' });
      return ttl;
    };
    // unlock() resolves the same for an inner and a last release: its script's reply (true:
    // deleted, false: a hold undone, null: not the client's, then unlock() throws) is read here.
    const unlockOnce = entry.lock.unlockInner.bind(entry.lock);
    entry.lock.unlockInner = async (...args) => (entry.unlockReply = await unlockOnce(...args));
    locks.set(key, entry);
    return entry;
  }

  return {
    async acquire(req) {
      const received = process.hrtime.bigint();
      const entry = lockOf(req.key);
      const attempt = { attempts: 0, sent: received };
      entry.attempt = attempt;
      let acquired = false;
      try {
        // tryLock(waitTime, leaseTime) in ms; leaseTime true: the watchdog's lease and renewal.
        acquired = await entry.lock.tryLock(req.timeout_ms, watchdog ? true : req.ttl_ms);
      } catch (err) {
        return failure(err, { attempts: attempt.attempts });
      } finally {
        entry.attempt = null;
      }
      if (!acquired) return { result: 'fail', error: 'gave_up', attempts: attempt.attempts };
      return {
        result: 'ok',
        // The hash field that counts the holds: the Redisson instance's id and the clientId.
        token: entry.lock.getClientName(clientId),
        attempts: attempt.attempts,
        sent_after_ns: Number(attempt.sent - received),
        lock_key: req.key,
      };
    },

    // Every release is the client's unlock(), held or not (a step's "finally"): the library
    // checks the owner itself.
    async release(req) {
      const entry = lockOf(req.key);
      entry.unlockReply = undefined;
      try {
        await entry.lock.unlock();
      } catch (err) {
        if (entry.unlockReply === null) {
          // "attempt to unlock lock, not locked by current client": refused, nothing changed.
          return { result: 'ok', deleted: 0, library_error: errorName(err), message: String(err.message).split('\n')[0] };
        }
        return failure(err);
      }
      // true: the last hold, the lock deleted (and the unlock published); false: an inner
      // release, holds remain and the lease was reset.
      return { result: 'ok', deleted: entry.unlockReply === true ? 1 : 0, inner: entry.unlockReply === false };
    },

    // No extend: an RLock has none (only its watchdog).

    async stopRenewal() {
      // The watchdog's entry for the lock, with its timer (cancelExpirationRenewal without a
      // clientId removes it whole).
      for (const { lock } of locks.values()) lock.cancelExpirationRenewal(false);
    },

    async close() {
      for (const { lock } of locks.values()) lock.cancelExpirationRenewal(false);
      clients.forEach((client) => client.disconnect());
    },
  };
}

common.run({
  hello: { worker: 'node-redisson', version: common.version('node-redisson'), lock_key: '{key}' },
  variants: Object.entries(VARIANTS).map(([name, v]) => ({ name, renews: v.watchdog, kind: 'reentrant' })),
  makeWorker,
});
