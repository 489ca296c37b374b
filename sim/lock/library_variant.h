// library_variant.h: a third-party lock library as a variant, run through its adapter.
//
// A library is not called from locksim: its adapter (adapters/<language>-<library>/, see
// adapters/README.md) runs as each client's process and speaks the worker protocol. The variant
// only says what the library is (its declarations, the reference it is judged like) and how to
// start the adapter. adapters/libraries.json lists them:
//
//   {"libraries": [
//     {"name": "lib:redis-py", "adapter": "python-redis-py",
//      "command": ["/usr/bin/python3", "{adapters}/python-redis-py/adapter.py"],
//      "summary": "redis-py 4.3.4 Lock: SET NX PX with a random token, Lua compare-and-delete",
//      "like": "lua_owner", "uses_ttl": true, "renews": false, "lock_key": "{key}",
//      "runtime_check": ["/usr/bin/python3", "-c", "import redis"],
//      "install": "apt-get install -y python3-redis"}]}
//
// "{adapters}" in the command stands for the adapters directory; "like" names the built-in whose
// scenarios the library joins and whose expectations it must meet there, unless "expect" is
// "any" (the verdicts are reported, not asserted: the run is the finding); "lock_key" says where
// the library keeps its lock ("mutex:{key}"), for the run's ACL user and the key conditions of
// scripted steps; "quorum": true says the library takes its lock over every server of a topology
// (its adapter gets connect's "servers"), like the built-in redlock; "cluster": true says its
// adapter builds a Redis Cluster client when connect carries "cluster" (every node of a cluster
// topology), so it joins the cluster scenarios of its "like" ("cluster": "none: <why>" says why
// it cannot); "cancel" says how its adapter
// cancels a call (the hello's "cancel"), for scenarios with "cancel_after_ms"; "kind":
// "semaphore" says the library is a counting semaphore of lock.permits permits (connect's
// "lock" carries them), judged as one (LockVariant::semaphore), "reentrant" that it is a
// reentrant lock owned by the client (connect's "client"), judged by its depth
// (LockVariant::reentrant); its "like" must be of the same kind ("mutex", the default, a mutex);
// "other_keys" lists the other keys and channels the library names after the lock's key
// (Redisson's "redisson_lock__channel:{{key}}"), which the run's ACL user is granted too.
//
//   const auto specs = load_library_manifest(adapters_dir() / "libraries.json");  // InputError
//   register_variant(make_library_variant(specs[0]));
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/lock/variant.h"

namespace locksim {

struct LibrarySpec {
  std::string name;     // "lib:redis-py"
  std::string adapter;  // the adapter's folder under adapters/
  std::string summary;
  std::string like;          // the built-in whose scenarios it joins
  bool assert_like = true;   // "expect": "like" (its expectations must hold) or "any" (reported)
  // "reported_in": scenario name -> why the library's design makes the reference's expectation
  // not apply there; the verdict is reported (any).
  std::map<std::string, std::string> reported_in;
  bool uses_ttl = true;
  bool renews = false;
  // "quorum": true: the library takes its lock over every server of a topology itself (Redlock);
  // connect then carries "servers", and it joins the multi-server scenarios of its "like".
  bool quorum = false;
  // "cluster": true: the adapter builds a Redis Cluster client (ioredis's Cluster, redis-py's
  // RedisCluster) when connect carries "cluster", and the library joins the cluster scenarios of
  // its "like"; its client follows a failover by itself. cluster_refusal: the <why> of
  // "cluster": "none: <why>" (the adapter cannot), the reason a cluster scenario is skipped.
  // Not with "quorum".
  bool cluster = false;
  std::string cluster_refusal;
  // "kind": "semaphore": a counting semaphore of lock.permits permits (LockVariant::semaphore);
  // false: a mutex ("kind": "mutex", or no kind).
  bool semaphore = false;
  // "kind": "reentrant": a reentrant lock whose owner is the client (LockVariant::reentrant).
  bool reentrant = false;
  // "cancel": how the adapter cancels a call a scenario cancels ("cancel_after_ms"), in words
  // (redis-py asyncio: "Task.cancel ..."), or "none: " and why the library cannot be cancelled
  // (a blocking call, a promise); empty: not said. See cancels().
  std::string cancel;
  // cancels: whether the adapter cancels calls ("cancel" given and not "none: ...").
  bool cancels() const { return !cancel.empty() && cancel.rfind("none:", 0) != 0; }
  std::string lock_key = "{key}";
  // "other_keys": templates with {key} of the keys and channels the library uses beside the lock
  // ("redisson_unlock_latch:{{key}}:"): granted to the run's ACL user and cleaned up after a run.
  std::vector<std::string> other_keys;
  std::vector<std::string> command;        // {adapters} already replaced
  std::vector<std::string> runtime_check;  // exits 0 when the library's runtime is installed
  std::string install;                     // the command that installs a missing runtime
};

// adapters_dir: $LOCKSIM_ADAPTERS_DIR if set (made absolute), else the source tree's adapters/.
std::filesystem::path adapters_dir();

// load_library_manifest: the libraries of `path` (strict: every field named, every error with
// the file and the field). `known_variants` validates "like".
std::vector<LibrarySpec> load_library_manifest(const std::filesystem::path& path,
                                               const std::vector<std::string>& known_variants);

// library_key: where the library keeps the lock of `key` ("mutex:" + key for "mutex:{key}").
std::string library_key(const std::string& lock_key_template, const std::string& key);

// library_prefixes: the prefixes other than `prefix` under which `variant` keeps keys or
// channels for the keys that start with `prefix` (its stored_prefix when that differs, and a
// library's "other_keys"), for the run's ACL user and the cleanup after a run; empty for a
// variant that keeps everything under `prefix`.
std::vector<std::string> library_prefixes(const LockVariant& variant, const std::string& prefix);

std::unique_ptr<const LockVariant> make_library_variant(const LibrarySpec& spec);

// library_spec: the spec of a registered library variant, or nullptr (a built-in or user lock).
const LibrarySpec* library_spec(const LockVariant& variant);

}  // namespace locksim
