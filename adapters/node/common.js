'use strict';
// common.js: what the node adapters share. The worker protocol v1 loop on stdin/stdout (see
// sim/host/worker_protocol.h), the plain ioredis client (a Cluster when connect carries
// "cluster"), the resource ops (read, write and the fenced store's script) and the mapping of
// errors to the protocol's words. An adapter hands run() its hello fields and makeWorker(request, ctx), whose object answers acquire, release,
// extend (optional: without it "this library has no extend") and stopRenewal. A connect's
// clock_offset_ms shifts Date.now for the process (setClientClock).

const fs = require('fs');
const path = require('path');
const readline = require('readline');
const { createRequire } = require('module');

// lib: require() from adapters/node/node_modules, whichever adapter folder asks.
const lib = createRequire(path.join(__dirname, 'package.json'));
const Redis = lib('ioredis');

function version(name) {
  const file = path.join(__dirname, 'node_modules', name, 'package.json');
  return JSON.parse(fs.readFileSync(file, 'utf8')).version;
}

// sim/client/fenced_store.cc's script, verbatim.
const FENCED_WRITE = `
local fencing = tonumber(ARGV[2])
if fencing >= 0 then
  local highest = tonumber(redis.call('GET', KEYS[2]) or '-1')
  if fencing < highest then return 0 end
  redis.call('SET', KEYS[2], ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`;

// The machine's time of day, before any client clock offset (setClientClock).
const machineDateNow = Date.now;

// setClientClock: this process is one client whose own clock runs offsetMs ahead of the run's
// (negative: behind): connect's clock_offset_ms, the scenario's client_clocks. Date.now is where
// the node libraries read the time of day (redis-semaphore's permit scores, redis-lock's expiry
// value, redlock's validity), so it is the one shifted, for the whole process; a library that
// only subtracts two readings sees no difference. Timers and the monotonic clock are left alone.
// A clock that drifts (connect's clock_drift_ms_per_s) gains driftMsPerS each second since the
// run's time 0, which every request after connect carries as clock_origin_ns (an instant of the
// machine's monotonic clock, process.hrtime's): before the first one, no drift.
let clockOriginNs = null;
function setClientClock(offsetMs, driftMsPerS = 0) {
  clockOriginNs = null;
  if (offsetMs === 0 && driftMsPerS === 0) {
    Date.now = machineDateNow;
    return;
  }
  Date.now = () => {
    let drift = 0;
    if (driftMsPerS !== 0 && clockOriginNs !== null) {
      const since = Number(process.hrtime.bigint()) - clockOriginNs;
      drift = Math.trunc((driftMsPerS * Math.max(0, since)) / 1e9);
    }
    return machineDateNow() + offsetMs + drift;
  };
}

// The per-command bound, as locksim's own connections have (sim/redis/connection.h).
const COMMAND_TIMEOUT_MS = 2000;

function emit(message) {
  process.stdout.write(JSON.stringify(message) + '\n'); // synchronous on a pipe (Linux)
}

function fail(message, error = 'protocol') {
  return { result: 'fail', error, message };
}

class ProtocolError extends Error {}

// errorName: the exception's class, for "library_error".
function errorName(err) {
  if (!(err instanceof Error)) return typeof err;
  if (err.name && err.name !== 'Error') return err.name;
  return (err.constructor && err.constructor.name) || 'Error';
}

// failure: an error from a client or a library in the protocol's words: "info" when the server
// may have run the command (a timeout, a connection closed under it), "fail" when it did not.
function failure(err, extra = {}) {
  const message = String((err && err.message) || err).slice(0, 300);
  const name = errorName(err);
  let result = 'fail';
  let error = 'unexpected_reply';
  if (/timed out|ConnectionTimeout/i.test(message + name)) {
    result = 'info';
    error = 'timeout';
  } else if ((err && err.code === 'ECONNREFUSED') || /ECONNREFUSED/.test(message)) {
    error = 'refused';
  } else if (/^(ReplyError|ErrorReply)$/.test(name) || /^[A-Z]{3,}[ :]/.test(message)) {
    error = 'reply_error'; // ERR, NOPERM, WRONGPASS, NOSCRIPT, ...
  } else if (/closed|ECONNRESET|EPIPE|max retries|offline|socket/i.test(message + name)) {
    result = 'info';
    error = 'closed';
  }
  return { result, error, message, library_error: name, ...extra };
}

// redisOptions: the ioredis options of every node adapter's client for an endpoint {host, port,
// username, password, db}: each command sent at most once (no resend after a reconnect) and
// bounded in time, no ready check (its INFO is refused to locksim's per-run ACL user,
// -@dangerous). For a library that makes its own ioredis clients from options (node-redisson).
function redisOptions(endpoint) {
  return {
    host: endpoint.host,
    port: endpoint.port,
    username: endpoint.username || undefined,
    password: endpoint.password || undefined,
    db: endpoint.db || 0,
    connectTimeout: COMMAND_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times) => Math.min(times * 50, 500),
    enableReadyCheck: false,
  };
}

// dropAfterTimeout: after a command of `client` timed out, its connection is dropped and made
// anew, because ioredis would otherwise pair the next command with the reply it is still owed (a
// lost reply shifts every later one).
function dropAfterTimeout(client) {
  const send = client.sendCommand.bind(client);
  client.sendCommand = (command, stream) => {
    const promise = send(command, stream);
    command.promise.catch((err) => {
      if (err && err.message === 'Command timed out') client.disconnect(true);
    });
    return promise;
  };
  return client;
}

// connect: a ready ioredis client for an endpoint (redisOptions, dropAfterTimeout).
async function connect(endpoint) {
  const client = dropAfterTimeout(new Redis({ ...redisOptions(endpoint), lazyConnect: true }));
  let lastError = null; // every failure also reaches the command it broke, except at connect
  client.on('error', (err) => (lastError = err));
  try {
    await client.connect();
    // Without the ready check, connect() resolves before AUTH is answered: a wrong password
    // would surface only at the first command. One PING settles it before "connect" answers.
    await client.ping();
  } catch (err) {
    client.disconnect();
    // connect() reports the close; the error event before it says why (ECONNREFUSED, WRONGPASS).
    throw lastError || err;
  }
  return client;
}

// connectCluster: a ready ioredis Cluster for connect's "cluster" (every node of a Redis Cluster
// topology, the lock's primary first: the seeds of its slot map). Each node's connection has
// redisOptions' credentials and bounds; the Cluster keeps its own defaults, as a user's would: it
// follows MOVED and ASK, and after a node's connection closes (a failover) it reads the slot
// map again and sends the command anew, at most maxRedirections (16) times, 100 ms apart. No
// dropAfterTimeout: a cluster runs no link faults, so no reply is lost (a timed-out command's
// reply still comes, in its turn), and a Cluster's disconnect(true) would drop every node.
async function connectCluster(nodes) {
  const { host, port, ...perNode } = redisOptions(nodes[0]);
  const cluster = new Redis.Cluster(nodes.map((n) => ({ host: n.host, port: n.port })), {
    redisOptions: perNode,
    lazyConnect: true,
  });
  let lastError = null;
  // An "error" event without a listener would end the process; each also reaches its command.
  cluster.on('error', (err) => (lastError = err));
  try {
    await cluster.connect(); // the slot map read, CLUSTER INFO says ok
    await cluster.ping();
  } catch (err) {
    cluster.disconnect();
    throw lastError || err;
  }
  return cluster;
}

// boundedCommands: for a node-redis v4 client, which has no command timeout of its own, a
// function that bounds a command's promise to COMMAND_TIMEOUT_MS. After a timeout the connection
// is made anew: a reply still owed would otherwise answer the next command.
function boundedCommands(client) {
  return function bounded(promise) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => {
        reject(new Error('Command timed out'));
        client.disconnect().then(() => client.connect()).catch(() => {});
      }, COMMAND_TIMEOUT_MS);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  };
}

function need(req, fields) {
  for (const [field, type] of Object.entries(fields)) {
    const value = field.split('.').reduce((o, k) => (o == null ? undefined : o[k]), req);
    if (typeof value !== type || (type === 'number' && !Number.isInteger(value))) {
      throw new ProtocolError(`malformed "${req.op}" request: ${field} must be a ${type === 'number' ? 'integer' : type}`);
    }
  }
}

async function read(ctx, req) {
  need(req, { 'resource.kind': 'string', 'resource.key': 'string' });
  const { kind, key } = req.resource;
  if (kind === 'find_or_create') {
    return { result: 'ok', value: await ctx.redis.hexists(key, String(req.record ?? '')) };
  }
  const value = await ctx.redis.get(key);
  if (value !== null && !/^-?\d+$/.test(value)) {
    return fail(`the counter holds "${value.slice(0, 40)}", not an integer`, 'unexpected_reply');
  }
  return { result: 'ok', value: value === null ? 0 : Number(value) };
}

async function write(ctx, req) {
  need(req, { 'resource.kind': 'string', 'resource.key': 'string' });
  const { kind, key } = req.resource;
  if (kind === 'find_or_create') {
    await ctx.redis.hset(key, String(req.record ?? ''), ctx.client);
    return { result: 'ok' };
  }
  need(req, { value: 'number' });
  if (kind === 'counter') {
    await ctx.redis.set(key, String(req.value));
    return { result: 'ok' };
  }
  const fencing = Number.isInteger(req.fencing) ? req.fencing : -1;
  const written = await ctx.redis.eval(FENCED_WRITE, 2, key, `${key}:highest_fencing`, req.value, fencing);
  if (written === 0) {
    return fail(`fencing number ${fencing} is lower than one the store has accepted`, 'fenced');
  }
  return { result: 'ok' };
}

// run: the request loop; one request at a time, events from timers in between.
// An acquire is answered at most ACQUIRE_OVERRUN_MS after its wait (timeout_ms) should have
// ended, within the harness's patience for a worker (15 s past timeout_ms). Libraries that count
// their wait in retries (redlock's retryCount, derived here from timeout_ms and the retry delay)
// wait as long as the servers take to answer each attempt: with commands lost, every attempt
// costs a command timeout (and redlock 4's unlock of it another), and a 5 s wait became over a
// minute (drop-every-nth-command, lib:redlock4). The answer is then "info": the library's call
// goes on and may still take the lock, which is exactly what the caller cannot know.
const ACQUIRE_OVERRUN_MS = 10000;

function answerInTime(promise, ms) {
  promise.catch(() => {}); // a rejection after the answer below is nobody's to handle
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve({
      result: 'info',
      error: 'timeout',
      message: `the library's acquire had not returned ${ACQUIRE_OVERRUN_MS} ms after its wait ended (it waits by retry count, and each attempt waits for the servers); it goes on and may still take the lock`,
    }), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function run({ hello, variants, makeWorker }) {
  let ctx = null;
  let worker = null;
  const names = variants.map((v) => v.name);

  async function close() {
    if (worker && worker.close) await worker.close().catch(() => {});
    if (ctx) ctx.clients.forEach((c) => c.disconnect());
    worker = null;
    ctx = null;
  }

  async function handle(req) {
    const op = req.op;
    if (req.v !== 1) return fail('this adapter speaks protocol 1');
    if (Number.isInteger(req.clock_origin_ns)) clockOriginNs = req.clock_origin_ns;
    if (op === 'hello') return { result: 'ok', protocol: 1, ...hello, variants };
    if (op === 'connect') {
      need(req, { 'redis.host': 'string', 'redis.port': 'number', variant: 'string', 'lock.ttl_ms': 'number' });
      if (!names.includes(req.variant)) {
        return fail(`unknown variant "${req.variant}"; this adapter has ${names.join(', ')}`);
      }
      const offset = req.clock_offset_ms ?? 0;
      if (!Number.isInteger(offset)) {
        throw new ProtocolError('malformed "connect" request: clock_offset_ms must be an integer');
      }
      const drift = req.clock_drift_ms_per_s ?? 0;
      if (!Number.isInteger(drift)) {
        throw new ProtocolError('malformed "connect" request: clock_drift_ms_per_s must be an integer');
      }
      await close();
      setClientClock(offset, drift);
      const next = { client: String(req.client ?? ''), variant: req.variant, lock: req.lock, clients: [] };
      next.connect = async (endpoint) => {
        const client = await connect(endpoint);
        next.clients.push(client);
        return client;
      };
      if (req.cluster !== undefined && (!Array.isArray(req.cluster) || req.cluster.length === 0 ||
          !req.cluster.every((n) => typeof n.host === 'string' && Number.isInteger(n.port)))) {
        throw new ProtocolError('malformed "connect" request: cluster must be a list of {host, port}');
      }
      try {
        if (req.cluster) {
          // A Redis Cluster: the library is given a Cluster, which it uses as it would a Redis.
          next.redis = await connectCluster(req.cluster);
          next.clients.push(next.redis);
        } else {
          next.redis = await next.connect(req.redis);
        }
        worker = await makeWorker(req, next);
        ctx = next;
      } catch (err) {
        next.clients.forEach((c) => c.disconnect());
        throw err;
      }
      return { result: 'ok' };
    }
    if (!worker) return fail(`"${op}" before "connect"`);
    if ((op === 'acquire' || op === 'release') && ('crash_at' in req || 'pause_at' in req)) {
      return fail('checkpoints are not supported by this adapter');
    }
    switch (op) {
      case 'acquire':
        need(req, { key: 'string', ttl_ms: 'number', timeout_ms: 'number' });
        return answerInTime(worker.acquire(req), req.timeout_ms + ACQUIRE_OVERRUN_MS);
      case 'release':
        need(req, { key: 'string' });
        return worker.release(req);
      case 'extend':
        need(req, { key: 'string', ttl_ms: 'number' });
        return worker.extend ? worker.extend(req) : fail('this library has no extend');
      case 'stop_renewal':
        if (worker.stopRenewal) await worker.stopRenewal();
        return { result: 'ok' };
      case 'read':
        return read(ctx, req);
      case 'write':
        return write(ctx, req);
      default:
        return fail(`unknown op "${op}"`);
    }
  }

  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of input) {
    let req = null;
    try {
      req = JSON.parse(line);
    } catch (_) {
      // handled below
    }
    if (req === null || typeof req !== 'object' || Array.isArray(req)) {
      emit(fail('not a JSON object'));
      continue;
    }
    if (req.op === 'continue') continue; // needs no reply; this adapter never pauses
    let reply;
    try {
      reply = await handle(req);
    } catch (err) {
      reply = err instanceof ProtocolError ? fail(err.message) : failure(err);
    }
    emit({ id: req.id ?? 0, ...reply });
  }
  process.exit(0); // end of input; open connections and timers would keep node alive
}

module.exports = { lib, version, emit, fail, failure, errorName, run, ProtocolError, COMMAND_TIMEOUT_MS, boundedCommands, redisOptions, dropAfterTimeout };
