#!/usr/bin/php
<?php
// locksim worker-protocol adapter for Symfony Lock 5.4 (Debian php-symfony-lock) over phpredis
// (php-redis); see README.md. Variants: lib:symfony-lock (RedisStore on one server) and
// lib:symfony-lock-combined (CombinedStore over every server of the topology, one RedisStore
// each, with ConsensusStrategy: its Redlock).

declare(strict_types=1);

namespace LocksimAdapter;

require __DIR__ . '/../php/common.php';
require_once '/usr/share/php/Symfony/Component/Lock/autoload.php';

use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Exception\LockExpiredException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Lock;
use Symfony\Component\Lock\Store\CombinedStore;
use Symfony\Component\Lock\Store\RedisStore;
use Symfony\Component\Lock\Strategy\ConsensusStrategy;

// ObservedRedis: phpredis as a RedisStore sees it. Every script reply is kept (which server
// granted, refused, deleted), and the one name RedisStore keeps outside the lock key, the
// global "symfony_check_support_time" its TIME probe writes, is moved into the run's names.
class ObservedRedis extends Client
{
    public static string $prefix = '';
    public static ?array $log = null; // [[index, kind, reply|exception], ...] while a call runs
    public int $index = 0;

    public function eval($script, $args = [], $num_keys = 0)
    {
        if (($args[0] ?? null) === 'symfony_check_support_time') $args[0] = self::$prefix . 'symfony_check_support_time';
        $kind = str_contains($script, '"__write__")') && str_contains($script, 'is already acquired') ? 'save'
            : (str_contains($script, 'redis.call("ZREM", key, uniqueToken)') ? 'delete'
            : (str_contains($script, 'lock already acquired acquired?') ? 'extend' : 'other'));
        try {
            $reply = parent::eval($script, $args, $num_keys);
        } catch (\RedisException $e) {
            if (self::$log !== null) self::$log[] = [$this->index, $kind, $e];
            $this->renew();
            throw $e;
        }
        if (self::$log !== null) {
            $error = $reply === false ? $this->getLastError() : null;
            self::$log[] = [$this->index, $kind, $error !== null ? new ReplyError($error) : $reply];
        }
        return $reply;
    }
}

class Worker
{
    private array $clients;
    private array $names;
    private bool $combined;
    private array $held = []; // key -> [lock, key object]

    public function __construct(array $req, array $ctx)
    {
        $this->combined = $req['variant'] === 'lib:symfony-lock-combined';
        if ($this->combined && !is_array($req['servers'] ?? null)) {
            throw new ProtocolError('lib:symfony-lock-combined needs connect\'s "servers" (a topology of several servers)');
        }
        $endpoints = $this->combined ? $req['servers'] : [$req['redis']];
        $this->clients = [];
        foreach ($endpoints as $i => $endpoint) {
            $client = connect($endpoint, ObservedRedis::class);
            $client->index = $i;
            $this->clients[] = $client;
        }
        $this->names = array_map(fn ($e) => $e['name'] ?? 'redis', $endpoints);
    }

    private function store(float $ttl)
    {
        // RedisStore(redis, initialTtl = 300 s): the TTL of save(); the Lock's own ttl then
        // refreshes it (Lock::acquire calls refresh($ttl) after a save).
        $stores = array_map(fn ($c) => new RedisStore($c, $ttl), $this->clients);
        return $this->combined ? new CombinedStore($stores, new ConsensusStrategy()) : $stores[0];
    }

    // replies: what the servers answered to scripts of $kind in the log.
    private static function replies(array $log, string $kind): array
    {
        return array_values(array_filter($log, fn ($entry) => $entry[1] === $kind));
    }

    public function acquire(array $req): array
    {
        ObservedRedis::$prefix = run_prefix($req['key']);
        $ttl = $req['ttl_ms'] / 1000;
        $key = new Key($req['key']);
        $lock = new Lock($key, $this->store($ttl), $ttl, false); // autoRelease off: the harness releases
        $deadline = microtime(true) + $req['timeout_ms'] / 1000;
        $attempts = 0;
        $busy = false;
        $received = hrtime(true);
        $sent = $received;
        try {
            // acquire(true) waits for ever (Lock::acquire: while (true) { save; usleep((100 +
            // random_int(-10, 10)) * 1000) }); this is that loop with the harness's deadline.
            while (true) {
                ObservedRedis::$log = [];
                $attempts++;
                $sent = hrtime(true);
                if ($lock->acquire(false)) break;
                if (!$busy) {
                    $busy = true;
                    emit(['event' => 'busy']);
                }
                $sleep = (100 + random_int(-10, 10)) * 1000;
                if (microtime(true) + $sleep / 1e6 > $deadline) {
                    $reply = ['result' => 'fail', 'error' => 'gave_up', 'attempts' => $attempts, 'library_error' => 'LockConflictedException'];
                    $error = $this->lastError(ObservedRedis::$log);
                    if ($error !== null) return failure($error, ['attempts' => $attempts, 'library_error' => 'LockConflictedException']);
                    return $reply;
                }
                usleep($sleep);
            }
        } catch (\Throwable $e) {
            // A save that came back after the TTL (Key::reduceLifetime before it,
            // checkNotExpired after): the store deleted it and threw LockExpiredException, which
            // ends even a blocking acquire. The lock is not held: the library's own refusal.
            for ($x = $e; $x !== null; $x = $x->getPrevious()) {
                if ($x instanceof LockExpiredException) {
                    return ['result' => 'fail', 'error' => 'gave_up', 'attempts' => $attempts,
                            'library_error' => 'LockExpiredException',
                            'message' => 'the save returned after the lock\'s TTL: the library deleted it and threw (' . $x->getMessage() . ')'];
                }
            }
            return failure($e, ['attempts' => $attempts]);
        } finally {
            $log = ObservedRedis::$log ?? [];
            ObservedRedis::$log = null;
        }
        $this->held[$req['key']] = [$lock, $key];
        $reply = ['result' => 'ok', 'token' => $key->getState(RedisStore::class), 'attempts' => $attempts,
                  'sent_after_ns' => $sent - $received];
        if ($this->combined) {
            $granted = [];
            foreach (self::replies($log, 'save') as [$index, , $r]) if ($r === 1 || $r === true) $granted[] = $index;
            $reply['granted_on'] = array_values(array_unique($granted));
            $reply['validity_ms'] = max(0, (int) floor(($key->getRemainingLifetime() ?? 0) * 1000));
        }
        return $reply;
    }

    // lastError: a server's error in the attempt's log when a majority did not refuse.
    private function lastError(array $log): ?\Throwable
    {
        $refused = 0;
        $error = null;
        foreach (self::replies($log, 'save') as [, , $r]) {
            if ($r instanceof \Throwable) $error = $r;
            elseif (!$r) $refused++;
        }
        return $refused > count($this->clients) / 2 ? null : $error;
    }

    public function release(array $req): array
    {
        if (!isset($this->held[$req['key']])) return fail(sprintf('no lock of this adapter is held for "%s"', $req['key']));
        [$lock] = $this->held[$req['key']];
        unset($this->held[$req['key']]);
        ObservedRedis::$log = [];
        try {
            // delete on every store (its script's reply is not read by the library), then
            // exists(): LockReleasingException if the lock is still ours.
            $lock->release();
            $log = ObservedRedis::$log;
        } catch (\Throwable $e) {
            return failure($e);
        } finally {
            ObservedRedis::$log = null;
        }
        $deleted = 0;
        $errors = [];
        foreach (self::replies($log, 'delete') as [, , $r]) {
            if ($r instanceof \Throwable) $errors[] = $r;
            elseif ($r === 1 || $r === true) $deleted++;
        }
        if ($deleted > count($this->clients) / 2) return ['result' => 'ok', 'deleted' => 1];
        if ($errors) return failure(end($errors), ['message' => 'Lock::release() reported success; a delete failed: ' . end($errors)->getMessage()]);
        return ['result' => 'ok', 'deleted' => 0, 'message' => 'the delete script found no token of ours (the library does not read its reply)'];
    }

    public function extend(array $req): array
    {
        if (!isset($this->held[$req['key']])) return fail(sprintf('no lock of this adapter is held for "%s"', $req['key']));
        [$lock] = $this->held[$req['key']];
        try {
            $lock->refresh($req['ttl_ms'] / 1000);
        } catch (LockConflictedException | LockExpiredException $e) {
            return ['result' => 'ok', 'extended' => 0, 'library_error' => short_class($e), 'message' => $e->getMessage()];
        } catch (\Throwable $e) {
            return failure($e);
        }
        return ['result' => 'ok', 'extended' => 1];
    }
}

$version = '5.4';
if (is_readable('/usr/share/doc/php-symfony-lock/changelog.Debian.gz')) {
    $text = (string) @gzdecode((string) file_get_contents('/usr/share/doc/php-symfony-lock/changelog.Debian.gz'));
    if (preg_match('/\(([0-9][^)+~]*)/', $text, $m)) $version = $m[1];
}
run(['worker' => 'symfony-lock', 'version' => $version, 'lock_key' => '{key}'],
    [['name' => 'lib:symfony-lock', 'renews' => false], ['name' => 'lib:symfony-lock-combined', 'renews' => false]],
    fn ($req, $ctx) => new Worker($req, $ctx));
