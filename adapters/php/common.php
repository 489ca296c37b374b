<?php
// common.php: what the PHP adapters share (as adapters/node/common.js does for node): the
// worker protocol v1 loop on stdin/stdout (sim/host/worker_protocol.h), a phpredis client
// with 2 s connect and read timeouts, the resource ops (read, write and the fenced store's
// script) and the mapping of errors to the protocol's words. An adapter calls run($hello,
// $variants, $makeWorker); the worker object answers acquire, release, extend (optional) and
// stopRenewal (optional).

declare(strict_types=1);

namespace LocksimAdapter;

const COMMAND_TIMEOUT_S = 2.0;

// sim/client/fenced_store.cc's script, verbatim.
const FENCED_WRITE = '
local fencing = tonumber(ARGV[2])
if fencing >= 0 then
  local highest = tonumber(redis.call(\'GET\', KEYS[2]) or \'-1\')
  if fencing < highest then return 0 end
  redis.call(\'SET\', KEYS[2], ARGV[2])
end
redis.call(\'SET\', KEYS[1], ARGV[1])
return 1
';

class ProtocolError extends \Exception {}

// A reply error (phpredis returns false and keeps the error text for getLastError()).
class ReplyError extends \Exception {}

function emit(array $message): void
{
    fwrite(STDOUT, json_encode($message, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE) . "\n");
    fflush(STDOUT);
}

function fail(string $message, string $error = 'protocol'): array
{
    return ['result' => 'fail', 'error' => $error, 'message' => $message];
}

function short_class(\Throwable $e): string
{
    $name = get_class($e);
    $at = strrpos($name, '\\');
    return $at === false ? $name : substr($name, $at + 1);
}

// The innermost cause of a library's exception chain.
function cause(\Throwable $e): \Throwable
{
    while ($e->getPrevious() !== null) $e = $e->getPrevious();
    return $e;
}

// failure: an error in the protocol's words: "info" when the server may have run the command
// (a timeout, a connection lost under it), "fail" when it did not. library_error names the
// library's exception, the words come from the innermost cause.
function failure(\Throwable $e, array $extra = []): array
{
    $inner = cause($e);
    $message = substr($inner->getMessage(), 0, 300);
    $result = 'fail';
    $error = 'unexpected_reply';
    // phpredis says "socket error on read socket" when its read timeout ends a call (a closed
    // connection usually reads "Connection lost"): both may have run on the server.
    if (preg_match('/timed out|read error on connection|socket error on read socket/i', $message)) {
        $result = 'info';
        $error = 'timeout';
    } elseif (preg_match('/Connection refused/i', $message)) {
        $error = 'refused';
    } elseif ($inner instanceof ReplyError || preg_match('/^[A-Z]{3,}[ :]/', $message)) {
        $error = 'reply_error';
    } elseif (preg_match('/went away|Connection lost|closed|reset|broken pipe|socket/i', $message)) {
        $result = 'info';
        $error = 'closed';
    }
    return array_merge(['result' => $result, 'error' => $error, 'message' => $message,
                        'library_error' => short_class($e)], $extra);
}

// Client: phpredis with the endpoint it was opened with. After a read timeout phpredis keeps
// the connection, and the reply it still owes would answer the next command: renew() drops the
// connection and opens a new one (callers do it on every RedisException).
class Client extends \Redis
{
    public array $endpoint = [];

    public function renew(): void
    {
        try {
            $this->close();
        } catch (\Throwable $e) {
        }
        try {
            open($this, $this->endpoint);
        } catch (\Throwable $e) {
            // the next command fails and says why
        }
    }
}

// guarded: $fn() on $redis; a RedisException renews the connection before it goes on up.
function guarded(\Redis $redis, callable $fn)
{
    try {
        return $fn();
    } catch (\RedisException $e) {
        if ($redis instanceof Client) $redis->renew();
        throw $e;
    }
}

// connect: a phpredis client for an endpoint {host, port, username, password, db}, checked
// with PING. $class: Client or a subclass (an adapter's observed client).
function connect(array $endpoint, string $class = Client::class): \Redis
{
    $redis = new $class();
    $redis->endpoint = $endpoint;
    return open($redis, $endpoint);
}

function open(\Redis $redis, array $endpoint): \Redis
{
    // connect(host, port, timeout, persistent_id, retry_interval, read_timeout)
    $redis->connect($endpoint['host'], (int) $endpoint['port'], COMMAND_TIMEOUT_S, null, 0, COMMAND_TIMEOUT_S);
    if (!empty($endpoint['password'])) {
        $auth = !empty($endpoint['username']) ? [$endpoint['username'], $endpoint['password']] : $endpoint['password'];
        if (!$redis->auth($auth)) throw new ReplyError($redis->getLastError() ?? 'AUTH failed');
    }
    if (!empty($endpoint['db'])) $redis->select((int) $endpoint['db']);
    check($redis, $redis->ping());
    return $redis;
}

// check: a phpredis reply that is false because of an error reply -> ReplyError.
function check(\Redis $redis, $reply)
{
    if ($reply === false && ($err = $redis->getLastError()) !== null) {
        $redis->clearLastError();
        throw new ReplyError($err);
    }
    return $reply;
}

function need(array $req, array $fields): void
{
    foreach ($fields as $field => $type) {
        $value = $req;
        foreach (explode('.', $field) as $part) $value = is_array($value) ? ($value[$part] ?? null) : null;
        $ok = $type === 'int' ? is_int($value) : ($type === 'string' ? is_string($value) : is_array($value));
        if (!$ok) throw new ProtocolError(sprintf('malformed "%s" request: %s must be a %s', $req['op'] ?? '?', $field, $type === 'int' ? 'integer' : $type));
    }
}

function read_resource(\Redis $redis, array $req): array
{
    need($req, ['resource.kind' => 'string', 'resource.key' => 'string']);
    $kind = $req['resource']['kind'];
    $key = $req['resource']['key'];
    if ($kind === 'find_or_create') {
        return ['result' => 'ok', 'value' => check($redis, $redis->hExists($key, (string) ($req['record'] ?? ''))) ? 1 : 0];
    }
    $redis->clearLastError();
    $value = $redis->get($key);
    if ($value === false && $redis->getLastError() !== null) check($redis, false);
    if ($value !== false && !preg_match('/^-?\d+$/', $value)) {
        return fail(sprintf('the counter holds "%s", not an integer', substr($value, 0, 40)), 'unexpected_reply');
    }
    return ['result' => 'ok', 'value' => $value === false ? 0 : (int) $value];
}

function write_resource(\Redis $redis, string $client, array $req): array
{
    need($req, ['resource.kind' => 'string', 'resource.key' => 'string']);
    $kind = $req['resource']['kind'];
    $key = $req['resource']['key'];
    if ($kind === 'find_or_create') {
        check($redis, $redis->hSet($key, (string) ($req['record'] ?? ''), $client));
        return ['result' => 'ok'];
    }
    need($req, ['value' => 'int']);
    if ($kind === 'counter') {
        check($redis, $redis->set($key, (string) $req['value']));
        return ['result' => 'ok'];
    }
    $fencing = is_int($req['fencing'] ?? null) ? $req['fencing'] : -1;
    $redis->clearLastError();
    $written = $redis->eval(FENCED_WRITE, [$key, $key . ':highest_fencing', (string) $req['value'], (string) $fencing], 2);
    check($redis, $written);
    if ((int) $written === 0) {
        return fail(sprintf('fencing number %d is lower than one the store has accepted', $fencing), 'fenced');
    }
    return ['result' => 'ok'];
}

// run: the request loop, one request at a time.
function run(array $hello, array $variants, callable $makeWorker): void
{
    $names = array_map(fn ($v) => $v['name'], $variants);
    $ctx = null;
    $worker = null;
    $handle = function (array $req) use (&$ctx, &$worker, $hello, $variants, $names, $makeWorker): array {
        $op = $req['op'] ?? null;
        if (($req['v'] ?? null) !== 1) return fail('this adapter speaks protocol 1');
        if ($op === 'hello') return array_merge(['result' => 'ok', 'protocol' => 1], $hello, ['variants' => $variants]);
        if ($op === 'connect') {
            need($req, ['redis.host' => 'string', 'redis.port' => 'int', 'variant' => 'string', 'lock.ttl_ms' => 'int']);
            if (!in_array($req['variant'], $names, true)) {
                return fail(sprintf('unknown variant "%s"; this adapter has %s', $req['variant'], implode(', ', $names)));
            }
            $worker = null;
            $ctx = ['client' => (string) ($req['client'] ?? ''), 'variant' => $req['variant']];
            $ctx['redis'] = connect($req['redis']);
            $worker = $makeWorker($req, $ctx);
            return ['result' => 'ok'];
        }
        if ($worker === null) return fail(sprintf('"%s" before "connect"', (string) $op));
        if (($op === 'acquire' || $op === 'release') && (isset($req['crash_at']) || isset($req['pause_at']))) {
            return fail('checkpoints are not supported by this adapter');
        }
        switch ($op) {
            case 'acquire':
                need($req, ['key' => 'string', 'ttl_ms' => 'int', 'timeout_ms' => 'int']);
                return $worker->acquire($req);
            case 'release':
                need($req, ['key' => 'string']);
                return $worker->release($req);
            case 'extend':
                need($req, ['key' => 'string', 'ttl_ms' => 'int']);
                return method_exists($worker, 'extend') ? $worker->extend($req) : fail('this library has no extend');
            case 'stop_renewal':
                if (method_exists($worker, 'stopRenewal')) $worker->stopRenewal();
                return ['result' => 'ok'];
            case 'read':
                return guarded($ctx['redis'], fn () => read_resource($ctx['redis'], $req));
            case 'write':
                return guarded($ctx['redis'], fn () => write_resource($ctx['redis'], $ctx['client'], $req));
            default:
                return fail(sprintf('unknown op "%s"', (string) $op));
        }
    };
    while (($line = fgets(STDIN)) !== false) {
        $req = json_decode($line, true);
        if (!is_array($req) || array_is_list($req) && $req !== []) {
            emit(fail('not a JSON object'));
            continue;
        }
        if (($req['op'] ?? null) === 'continue') continue;
        try {
            $reply = $handle($req);
        } catch (ProtocolError $e) {
            $reply = fail($e->getMessage());
        } catch (\Throwable $e) {
            $reply = failure($e);
        }
        emit(array_merge(['id' => $req['id'] ?? 0], $reply));
    }
    exit(0);
}

// The run's own prefix (locksim:<run>:) from a key, for the names a library keeps outside the
// lock key (its ACL user may touch only the run's names).
function run_prefix(string $key): string
{
    return preg_match('/^([^:]*:[^:]*:)/', $key, $m) ? $m[1] : '';
}
