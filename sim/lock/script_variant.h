// script_variant.h: a lock variant defined by the user's own Lua scripts (--variant-file).
//
// The file names the variant, its acquire and release scripts (and optionally an extend script,
// which makes the driver renew the lease), and how each script's KEYS and ARGV are filled from
// placeholders: {key} (the lock's Redis key), {token} (a fresh random token per acquire call,
// sent again by each retry of the call: LockContext::acquisition_token), {ttl_ms} and {ttl_s} (the
// lease, in ms or whole seconds rounded up), {waiter} (the client's stable waiter id) and
// {queue_timeout_ms} (lock.queue_timeout_ms), for queueing locks, {permits} (lock.permits) for a
// semaphore ("kind": "semaphore"), {now_ms} (the client's own clock: a lock given it
// reads_client_clock); a reentrant lock ("kind": "reentrant") is owned by {waiter}; a read-write
// lock ("kind": "read_write") is asked for a read or write hold by {mode}. In a release, {ttl_ms}
// is the lock's TTL. Replies are read as:
//   acquire: 1 or status OK = acquired; 0 or nil = busy;
//   release: an integer = keys deleted (0 = refused);  extend: 1 = extended, 0 = not held.
// Any other reply is reported as an error naming the script ("my_lock.acquire returned ...").
//
//   {"name": "my_lock", "like": "lua_owner",
//    "acquire": {"script": "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1
//    or 0",
//                "keys": ["{key}"], "args": ["{token}", "{ttl_ms}"]},
//    "release": {"script": "...", "keys": ["{key}"], "args": ["{token}"]}}
//
//   ScriptVariantSpec spec = load_script_variant("my_lock.json", variant_names());  // InputError
//   register_variant(make_script_variant(spec));
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/lock/variant.h"
#include "sim/redis/script.h"

namespace locksim {

// ScriptCall: one script and how its KEYS and ARGV are filled.
struct ScriptCall {
  std::string source;
  std::vector<std::string> keys;  // templates with {key}, {token}, {ttl_ms}, {ttl_s}, {waiter}...
  std::vector<std::string> args;
};

struct ScriptVariantSpec {
  std::string file;
  std::string name;     // [a-z][a-z0-9_]{0,31}, not a built-in name
  std::string summary;  // optional; defaults to "user Lua lock from <file>; judged as <reference>"
  std::string like;     // optional built-in whose expectations it should meet
  // uses_ttl: the acquire sets a lease (default: its KEYS or ARGV use {ttl_ms} or {ttl_s}).
  bool uses_ttl = true;
  // owner_check: the release deletes only its own token's key (default: the release's KEYS or
  // ARGV use {token}).
  bool owner_check = true;
  // queues: the lock keeps a queue of waiters (its acquire passes {waiter}).
  bool queues = false;
  // semaphore: "kind": "semaphore": a counting semaphore of lock.permits permits (its scripts
  // read {permits}); judged by the checker as one, against zset_semaphore_server.
  bool semaphore = false;
  // reads_client_clock: a script reads the client's own clock ({now_ms}).
  bool reads_client_clock = false;
  // reentrant: "kind": "reentrant": the client ({waiter}) owns the lock and may acquire it again
  // while it holds it; each release undoes one hold (release replies: 1 the lock was freed, 0 a
  // hold undone or refused). Judged against hash_reentrant.
  bool reentrant = false;
  // read_write: "kind": "read_write": a read-write lock whose acquire reads {mode} ("read" or
  // "write") and whose read holds share the lock. Judged against rw_lock_fair.
  bool read_write = false;
  ScriptCall acquire;
  ScriptCall release;
  std::optional<ScriptCall> extend;  // present: the variant renews
};

// load_script_variant: reads and validates the file (json::read_json_file with
// json::kVariantFileLimits); InputError naming file, JSON path and what was expected: unknown keys
// (with a did-you-mean), wrong types, missing scripts, unknown or unclosed placeholders, a name in
// use, a script over 64 KiB, more than 32 keys or args, a template over 256 characters.
ScriptVariantSpec load_script_variant(const std::filesystem::path& path,
                                      const std::vector<std::string>& known_variants);

// expand_placeholders: `text` with {key}, {token}, {ttl_ms}, {ttl_s}, {waiter},
// {queue_timeout_ms}, {permits} (lock.permits) and {now_ms} (the client's own clock, in ms:
// LockContext::client_now_ms) filled in ({ttl_s} is the lease in whole seconds, rounded up).
// Anything else, including a '{' without its '}', is copied as written; linear in the size of the
// result for any input.
std::string expand_placeholders(std::string_view text, std::string_view key, std::string_view token,
                                std::int64_t ttl_ms, std::string_view waiter = {},
                                std::int64_t queue_timeout_ms = 0, std::int64_t permits = 1,
                                std::int64_t now_ms = 0, std::string_view mode = "write");

// reference_variant: the built-in a user lock is judged against: `like` if given, else from what
// it declares: a semaphore -> zset_semaphore_server; a reentrant lock -> hash_reentrant; a
// read-write lock -> rw_lock_fair; renewal +
// owner check + TTL -> lua_owner_renew; owner check + TTL + a queue
// (`queues`) -> lua_fair_queue; owner check + TTL -> lua_owner;
// TTL -> set_nx_ex; no TTL -> naive.
std::string reference_variant(const ScriptVariantSpec& spec);

// make_script_variant: the variant the spec describes.
std::unique_ptr<const LockVariant> make_script_variant(const ScriptVariantSpec& spec);

// compile_script_variant: SCRIPT LOAD of each script on `connection`, so syntax errors are found
// before a run. Returns "" or a message naming the file, the script and the Lua error.
std::string compile_script_variant(const ScriptVariantSpec& spec, Connection& connection);

}  // namespace locksim
