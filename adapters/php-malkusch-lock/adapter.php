#!/usr/bin/php
<?php
// locksim worker-protocol adapter for malkusch/lock 2.2 (Debian php-malkusch-lock)
// PHPRedisMutex over phpredis; see README.md. One variant, lib:malkusch-lock: SET lock_<name>
// token NX EX (timeout + 1) seconds, retried with a growing random wait until `timeout`
// seconds; release is a compare-and-delete script, refused (ExecutionOutsideLockException,
// nothing sent) when the holder ran longer than `timeout`.

declare(strict_types=1);

namespace LocksimAdapter;

require __DIR__ . '/../php/common.php';
require_once '/usr/share/php/Malkusch/Lock/autoload.php';

use malkusch\lock\exception\ExecutionOutsideLockException;
use malkusch\lock\exception\LockAcquireException;
use malkusch\lock\exception\LockReleaseException;
use malkusch\lock\exception\TimeoutException;
use malkusch\lock\mutex\PHPRedisMutex;

// ObservedMutex: the library's mutex with its protected lock()/unlock() (the two halves of
// synchronized()) reachable, and its per-server calls watched: SET replies (attempts, busy),
// release script replies (what a release deleted), errors (the connection is renewed).
class ObservedMutex extends PHPRedisMutex
{
    public int $attempts = 0;
    public bool $busy = false;
    public int $sent = 0;
    public array $released = []; // script replies or exceptions of the last release

    public function take(): void
    {
        $this->lock();
    }

    public function give(): void
    {
        $this->released = [];
        $this->unlock();
    }

    public function token(): string
    {
        $property = new \ReflectionProperty(\malkusch\lock\mutex\RedisMutex::class, 'token');
        $property->setAccessible(true);
        return (string) $property->getValue($this);
    }

    protected function add($redisAPI, string $key, string $value, int $expire): bool
    {
        $this->attempts++;
        $sent = hrtime(true);
        try {
            $added = parent::add($redisAPI, $key, $value, $expire);
        } catch (LockAcquireException $e) {
            if ($redisAPI instanceof Client) $redisAPI->renew();
            throw $e;
        }
        if ($added) $this->sent = $sent;
        elseif (!$this->busy) {
            $this->busy = true;
            emit(['event' => 'busy']);
        }
        return $added;
    }

    protected function evalScript($redis, string $script, int $numkeys, array $arguments)
    {
        try {
            $reply = parent::evalScript($redis, $script, $numkeys, $arguments);
        } catch (LockReleaseException $e) {
            $this->released[] = $e;
            if ($redis instanceof Client) $redis->renew();
            throw $e;
        }
        $this->released[] = $reply;
        return $reply;
    }
}

class Worker
{
    private array $clients;
    private array $held = []; // key -> mutex

    public function __construct(array $req, array $ctx)
    {
        $this->clients = [$ctx['redis']];
    }

    public function acquire(array $req): array
    {
        // One number, `timeout` (whole seconds, at least 1), is both the wait and the TTL - 1 s:
        // SpinlockMutex::lock() SETs with EX timeout + 1. The adapter keeps the TTL as close to
        // ttl_ms as the library allows (timeout = round(ttl_ms / 1000) - 1, at least 1), so the
        // wait is that many seconds, not timeout_ms.
        $timeout = max(1, (int) round($req['ttl_ms'] / 1000) - 1);
        $mutex = new ObservedMutex($this->clients, $req['key'], $timeout);
        $received = hrtime(true);
        try {
            $mutex->take();
        } catch (TimeoutException $e) {
            return ['result' => 'fail', 'error' => 'gave_up', 'attempts' => $mutex->attempts, 'library_error' => short_class($e)];
        } catch (\Throwable $e) {
            return failure($e, ['attempts' => $mutex->attempts]);
        }
        $this->held[$req['key']] = $mutex;
        return ['result' => 'ok', 'token' => $mutex->token(), 'attempts' => $mutex->attempts,
                'sent_after_ns' => max(0, $mutex->sent - $received), 'lock_key' => 'lock_' . $req['key']];
    }

    public function release(array $req): array
    {
        $mutex = $this->held[$req['key']] ?? null;
        if ($mutex === null) return fail(sprintf('no lock of this adapter is held for "%s"', $req['key']));
        unset($this->held[$req['key']]);
        try {
            $mutex->give();
        } catch (ExecutionOutsideLockException $e) {
            // The holder ran longer than `timeout`: the library sends nothing and says so.
            return ['result' => 'ok', 'deleted' => 0, 'library_error' => short_class($e), 'message' => $e->getMessage()];
        } catch (LockReleaseException $e) {
            $errors = array_filter($mutex->released, fn ($r) => $r instanceof \Throwable);
            if ($errors) return failure(end($errors));
            return ['result' => 'ok', 'deleted' => 0, 'library_error' => short_class($e), 'message' => $e->getMessage()];
        } catch (\Throwable $e) {
            return failure($e);
        }
        return ['result' => 'ok', 'deleted' => 1];
    }
}

$version = '2.2';
if (is_readable('/usr/share/doc/php-malkusch-lock/changelog.Debian.gz')) {
    $text = (string) @gzdecode((string) file_get_contents('/usr/share/doc/php-malkusch-lock/changelog.Debian.gz'));
    if (preg_match('/\(([0-9][^)+~-]*)/', $text, $m)) $version = $m[1];
}
run(['worker' => 'malkusch-lock', 'version' => $version, 'lock_key' => 'lock_{key}'],
    [['name' => 'lib:malkusch-lock', 'renews' => false]],
    fn ($req, $ctx) => new Worker($req, $ctx));
