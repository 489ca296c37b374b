// script_variant_load_test: a --variant-file is read by the one strict JSON reader (no Redis
// needed): unknown keys with did-you-mean and paths, wrong types, placeholders (unknown and
// unclosed), caps on scripts and templates, hostile files; and filling placeholders is bounded.
// And a library's lock_key template: the key it stores and the prefix a run grants and cleans;
// and its kind: a semaphore is judged as one, like a built-in semaphore only, and a reentrant
// library as a reentrant lock, like a built-in reentrant lock only; and its other keys are granted.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>

#include "sim/core/error.h"
#include "sim/lock/library_variant.h"
#include "sim/lock/registry.h"
#include "sim/lock/script_variant.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kKnown = {"naive", "set_nx_ex", "lua_owner"};

class VariantFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    directory_ = fs::temp_directory_path() /
                 ("locksim-variant-file-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  fs::path write(const std::string& text) {
    const fs::path path = directory_ / "v.json";
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // error_of: the InputError message for a variant file holding `text`, or "" if it loaded.
  std::string error_of(const std::string& text) { return error_of_file(write(text)); }
  std::string error_of_file(const fs::path& path) {
    try {
      load_script_variant(path, kKnown);
    } catch (const InputError& error) {
      return error.what();
    }
    return "";
  }

  void expect_error(const std::string& text, std::initializer_list<std::string> parts) {
    const std::string message = error_of(text);
    EXPECT_NE(message.find((directory_ / "v.json").string() + ": "), std::string::npos) << message;
    for (const std::string& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos)
          << "message: " << message << "\nmissing: " << part;
    }
  }

  fs::path directory_;
};

// A lock from docs/variants.md loads with its defaults.
TEST_F(VariantFileTest, ValidFileLoadsWithDefaults) {
  const fs::path path = write(R"({"name": "my_lock", "like": "lua_owner",
    "acquire": {"script": "return 1", "args": ["{token}", "{ttl_s}", "x{key}y"]},
    "release": {"script": "return 1"}})");
  const ScriptVariantSpec spec = load_script_variant(path, kKnown);
  EXPECT_EQ(spec.name, "my_lock");
  EXPECT_EQ(spec.like, "lua_owner");
  EXPECT_TRUE(spec.uses_ttl);
  EXPECT_EQ(spec.acquire.keys, std::vector<std::string>{"{key}"});
  EXPECT_EQ(spec.release.args, std::vector<std::string>{"{token}"});
  EXPECT_FALSE(spec.extend.has_value());
  EXPECT_EQ(spec.summary, "user Lua lock from " + path.string() + "; judged as lua_owner");
}

// What a lock declares is read from its placeholders unless given: a TTL when the acquire passes
// {ttl_ms} or {ttl_s}, an owner check when the release passes {token}; the reference it is judged
// against follows (like, else the built-in with the same declarations).
TEST_F(VariantFileTest, DeclarationsAndReferenceFollowThePlaceholders) {
  struct Case {
    std::string acquire_args, release_args, extra;
    bool uses_ttl, owner_check;
    std::string reference;
  };
  const std::vector<Case> cases = {
      {R"(["{token}", "{ttl_ms}"])", R"(["{token}"])", "", true, true, "lua_owner"},
      {R"(["{token}", "{ttl_s}"])", R"(["{token}"])", R"(, "extend": {"script": "return 1"})", true,
       true, "lua_owner_renew"},
      {R"(["{token}", "{ttl_ms}"])", R"([])", "", true, false, "set_nx_ex"},
      {R"(["{token}"])", R"(["{token}"])", "", false, true, "naive"},
      {R"(["1"])", R"([])", R"(, "extend": {"script": "return 1"})", false, false, "naive"},
      // Explicit declarations win over the placeholders.
      {R"(["{token}", "{ttl_ms}"])", R"(["{token}"])", R"(, "owner_check": false)", true, false,
       "set_nx_ex"},
      {R"(["{token}"])", R"(["{token}"])", R"(, "uses_ttl": true)", true, true, "lua_owner"},
      {R"(["{token}"])", R"([])", R"(, "like": "lua_owner")", false, false, "lua_owner"},
      // An acquire that passes the waiter keeps a queue: judged as the fair lock.
      {R"(["{token}", "{ttl_ms}", "{waiter}", "{queue_timeout_ms}"])", R"(["{token}"])", "", true,
       true, "lua_fair_queue"},
      {R"(["{token}", "{waiter}"])", R"(["{token}"])", "", false, true, "naive"},
      // A semaphore is judged as the semaphore timed by the server.
      {R"(["{token}", "{ttl_ms}", "{permits}", "{now_ms}"])", R"(["{token}"])",
       R"(, "kind": "semaphore")", true, true, "zset_semaphore_server"},
      {R"(["{token}", "{ttl_ms}"])", R"(["{token}"])", R"(, "kind": "mutex")", true, true,
       "lua_owner"},
  };
  for (const Case& c : cases) {
    const std::string text = R"({"name": "x", "acquire": {"script": "r", "args": )" +
                             c.acquire_args + R"(}, "release": {"script": "r", "args": )" +
                             c.release_args + "}" + c.extra + "}";
    const ScriptVariantSpec spec = load_script_variant(write(text), kKnown);
    EXPECT_EQ(spec.uses_ttl, c.uses_ttl) << text;
    EXPECT_EQ(spec.owner_check, c.owner_check) << text;
    EXPECT_EQ(reference_variant(spec), c.reference) << text;
  }
  const auto load = [&](const std::string& acquire_args, const std::string& extra) {
    return load_script_variant(
        write(R"({"name": "x", "acquire": {"script": "r", "args": )" + acquire_args +
              R"(}, "release": {"script": "r"})" + extra + "}"),
        kKnown);
  };
  // A read-write lock that passes {waiter} names a waiting writer with it: no queue, so no
  // barging to judge; its reference is rw_lock_fair.
  const ScriptVariantSpec rw =
      load(R"(["{token}", "{ttl_ms}", "{mode}", "{waiter}"])", R"(, "kind": "read_write")");
  EXPECT_FALSE(rw.queues);
  EXPECT_EQ(reference_variant(rw), "rw_lock_fair");
  EXPECT_TRUE(load(R"(["{token}", "{ttl_ms}", "{waiter}"])", "").queues);
  // A lock reads its clients' clocks when a script is given {now_ms}, whatever its kind.
  EXPECT_TRUE(
      load(R"(["{token}", "{ttl_ms}", "{permits}", "{now_ms}"])", R"(, "kind": "semaphore")")
          .reads_client_clock);
  EXPECT_FALSE(load(R"(["{token}", "{ttl_ms}", "{permits}"])", R"(, "kind": "semaphore")")
                   .reads_client_clock);
  EXPECT_TRUE(load(R"(["{token}", "{now_ms}"])", "").reads_client_clock);
}

// Unknown keys name their path with a did-you-mean; wrong types name what was expected.
TEST_F(VariantFileTest, UnknownKeysAndWrongTypesNameTheirPath) {
  expect_error(R"({"name": "x", "acqire": {"script": "return 1"}, "release": {"script": "r"}})",
               {"$.acqire: unknown key (did you mean \"acquire\"?)"});
  expect_error(
      R"({"name": "x", "acquire": {"script": "r", "argz": []}, "release": {"script": "r"}})",
      {"$.acquire.argz: unknown key (did you mean \"args\"?)"});
  expect_error(R"({"name": 5, "acquire": {"script": "r"}, "release": {"script": "r"}})",
               {"$.name: expected a string, got 5"});
  expect_error(R"({"name": "x", "uses_ttl": "no", "acquire": {"script": "r"},
                   "release": {"script": "r"}})",
               {"$.uses_ttl: expected true or false, got \"no\""});
  expect_error(R"({"name": "x", "acquire": {"script": "r", "keys": "{key}"},
                   "release": {"script": "r"}})",
               {"$.acquire.keys: expected an array, got \"{key}\""});
  expect_error(
      R"({"name": "x", "acquire": {"script": "r", "args": [1]}, "release": {"script": "r"}})",
      {"$.acquire.args[0]: expected a string, got 1"});
  expect_error(R"({"name": "x", "acquire": "return 1", "release": {"script": "r"}})",
               {"$.acquire: expected an object with \"script\""});
  expect_error(R"({"name": "x", "acquire": {"script": "r"}})",
               {"$: missing required key \"release\""});
  expect_error(R"([1, 2])", {"$: expected an object, got an array"});
  expect_error(R"({"name": "x", "like": "lua_ownr", "acquire": {"script": "r"},
                   "release": {"script": "r"}})",
               {"$.like: unknown variant \"lua_ownr\" (did you mean \"lua_owner\"?)"});
  expect_error(R"({"name": "Bad-Name", "acquire": {"script": "r"}, "release": {"script": "r"}})",
               {"$.name: expected a variant name"});
  expect_error(R"({"name": "x", "kind": "semafore", "acquire": {"script": "r"},
                   "release": {"script": "r"}})",
               {"$.kind: unknown kind \"semafore\" (did you mean \"semaphore\"?)"});
  expect_error(R"({"name": "x", "kind": "semaphore", "acquire": {"script": "r"},
                   "release": {"script": "r"}, "extend": {"script": "r"}})",
               {"$.extend: a semaphore"});
}

// A '{' without its '}' is refused at load (it made fill() loop forever); unknown placeholders get
// a did-you-mean.
TEST_F(VariantFileTest, PlaceholdersAreValidated) {
  expect_error(R"({"name": "x", "acquire": {"script": "r", "keys": ["{key}", "{token"]},
                   "release": {"script": "r"}})",
               {"$.acquire.keys[1]: unclosed placeholder: the '{' at character 1 has no closing "
                "'}'; expected {key}, {token}, {ttl_ms}, {ttl_s}, {waiter} or "
                "{queue_timeout_ms}"});
  expect_error(R"({"name": "x", "acquire": {"script": "r"},
                   "release": {"script": "r", "args": ["a{key}b{"]}})",
               {"$.release.args[0]: unclosed placeholder: the '{' at character 8"});
  expect_error(R"({"name": "x", "acquire": {"script": "r", "args": ["{tokn}"]},
                   "release": {"script": "r"}})",
               {"$.acquire.args[0]: unknown placeholder {tokn} (did you mean {token}?)"});
}

// Scripts, templates and their number are capped, each with the path and the limit.
TEST_F(VariantFileTest, SizesAreCapped) {
  const std::string big_script = std::string(64 * 1024 + 1, '-');
  expect_error(R"({"name": "x", "acquire": {"script": ")" + big_script +
                   R"("}, "release": {"script": "r"}})",
               {"$.acquire.script: expected Lua source of at most 65536 bytes, got 65537 bytes"});
  std::string many = "[";
  for (int i = 0; i < 33; ++i) many += std::string(i == 0 ? "" : ",") + "\"{key}\"";
  expect_error(R"({"name": "x", "acquire": {"script": "r", "keys": )" + many +
                   R"(]}, "release": {"script": "r"}})",
               {"$.acquire.keys: expected at most 32 entries, got 33"});
  expect_error(R"({"name": "x", "acquire": {"script": "r", "args": [")" + std::string(257, 'a') +
                   R"("]}, "release": {"script": "r"}})",
               {"$.acquire.args[0]: expected a string of at most 256 characters"});
  expect_error(R"({"name": "x", "summary": "two\nlines", "acquire": {"script": "r"},
                   "release": {"script": "r"}})",
               {"$.summary: expected one line"});
}

// Hostile files are InputErrors, never an abort or a hang: 1e400, duplicate keys, deep nesting,
// a FIFO, a directory.
TEST_F(VariantFileTest, HostileFilesAreInputErrors) {
  expect_error(R"({"name": 1e400})", {"line 1, column 10: number 1e400 is out of range"});
  expect_error(R"({"name": "x", "acquire": {"script": "r", "script": "s"}})",
               {"$.acquire.script: duplicate key"});
  expect_error(R"({"name": "x", "acquire": )" + std::string(100, '[') + std::string(100, ']') + "}",
               {"nested more than 64 levels deep"});
  const fs::path fifo = directory_ / "fifo.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of_file(fifo),
            fifo.string() + ": not a regular file (a FIFO); expected a variant file");
  EXPECT_EQ(error_of_file(directory_),
            directory_.string() + ": not a regular file (a directory); expected a variant file");
}

// Filling placeholders replaces each known one and ends on any input, an unclosed '{' included.
TEST(ExpandPlaceholders, FillsKnownOnesAndAlwaysEnds) {
  EXPECT_EQ(expand_placeholders("{key}:{token}:{ttl_ms}:{ttl_s}", "k", "t", 1500), "k:t:1500:2");
  EXPECT_EQ(expand_placeholders("{key}:queue {waiter} {queue_timeout_ms}", "k", "t", 1, "c3", 400),
            "k:queue c3 400");
  EXPECT_EQ(expand_placeholders("{key} {permits} {now_ms}", "k", "t", 1, "c3", 400, 3, 1234567),
            "k 3 1234567");
  EXPECT_EQ(expand_placeholders("{other}", "k", "t", 1), "{other}");
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(expand_placeholders("{token", "k", "t", 1), "{token");
  EXPECT_EQ(expand_placeholders("a{key}{", "k", "t", 1), "ak{");
  EXPECT_EQ(expand_placeholders("}{}{", "k", "t", 1), "}{}{");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

}  // namespace
}  // namespace locksim

namespace locksim {
namespace {

// A library's lock_key places the lock's key inside a template: stored_key fills it in, and
// stored_prefix is what the ACL pattern and the cleanup SCAN of a run's prefix start with, so a
// template with a suffix ("{key}_lock") still grants and cleans every key of the run.
TEST(LibraryVariantKeys, StoredKeyAndPrefixFollowTheTemplate) {
  LibrarySpec spec;
  spec.name = "lib:test";
  spec.like = "lua_owner";
  spec.lock_key = "b'_tooz'_{key}_lock";
  const auto suffixed = make_library_variant(spec);
  EXPECT_EQ(suffixed->stored_key("locksim:r:k"), "b'_tooz'_locksim:r:k_lock");
  EXPECT_EQ(suffixed->stored_prefix("locksim:r:"), "b'_tooz'_locksim:r:");
  spec.lock_key = "mutex:{key}";
  const auto prefixed = make_library_variant(spec);
  EXPECT_EQ(prefixed->stored_key("locksim:r:k"), "mutex:locksim:r:k");
  EXPECT_EQ(prefixed->stored_prefix("locksim:r:"), "mutex:locksim:r:");
  spec.lock_key = "{key}";
  const auto plain = make_library_variant(spec);
  EXPECT_EQ(plain->stored_prefix("locksim:r:"), "locksim:r:");
  EXPECT_TRUE(library_prefixes(*plain, "locksim:r:").empty());
  EXPECT_EQ(library_prefixes(*prefixed, "locksim:r:"),
            std::vector<std::string>{"mutex:locksim:r:"});
}

// A library's "other_keys" (Redisson's pub/sub channel and unlock latch, named after the lock's
// key inside a hash tag) become prefixes the run's ACL user is granted and its cleanup scans,
// besides the lock's own; a template without {key} is refused at its path.
TEST_F(VariantFileTest, LibraryOtherKeysArePrefixesOfTheRun) {
  const auto manifest = [](const std::string& other) {
    return R"({"libraries": [{"name": "lib:rl", "adapter": "rl", "command": ["/bin/true"],
               "summary": "a reentrant lock", "like": "hash_reentrant", "kind": "reentrant",
               "other_keys": [")" +
           other + R"(", "redisson_unlock_latch:{{key}}:"]}]})";
  };
  const std::vector<LibrarySpec> specs =
      load_library_manifest(write(manifest("redisson_lock__channel:{{key}}")), variant_names());
  ASSERT_EQ(specs.size(), 1u);
  const auto variant = make_library_variant(specs[0]);
  EXPECT_EQ(library_prefixes(*variant, "locksim:r:"),
            (std::vector<std::string>{"redisson_lock__channel:{locksim:r:",
                                      "redisson_unlock_latch:{locksim:r:"}));
  try {
    load_library_manifest(write(manifest("redisson_lock__channel")), variant_names());
    ADD_FAILURE() << "a template without {key} was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("$.libraries[0].other_keys[0]"), std::string::npos)
        << error.what();
  }
}

// A library's "kind": "semaphore" makes its variant a semaphore (the checker counts its holders
// against lock.permits), and a library is judged like a built-in of its own kind: a semaphore
// like a mutex, or a mutex like a semaphore, is refused at its "like".
TEST_F(VariantFileTest, LibraryKindIsItsReferenceKind) {
  const auto manifest = [](const std::string& like, const std::string& kind) {
    return R"({"libraries": [{"name": "lib:sem", "adapter": "sem", "command": ["/bin/true"],
               "summary": "a semaphore", "like": ")" +
           like + "\"" + (kind.empty() ? "" : R"(, "kind": ")" + kind + "\"") + "}]}";
  };
  const auto load = [&](const std::string& like, const std::string& kind) {
    return load_library_manifest(write(manifest(like, kind)), variant_names());
  };
  const std::vector<LibrarySpec> semaphore = load("zset_semaphore", "semaphore");
  ASSERT_EQ(semaphore.size(), 1u);
  EXPECT_TRUE(make_library_variant(semaphore[0])->semaphore());
  EXPECT_FALSE(make_library_variant(load("lua_owner", "mutex")[0])->semaphore());
  EXPECT_FALSE(make_library_variant(load("lua_owner", "")[0])->semaphore());
  const auto error_of_manifest = [&](const std::string& like, const std::string& kind) {
    try {
      load(like, kind);
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  const std::string mutex_like = error_of_manifest("lua_owner", "semaphore");
  EXPECT_NE(mutex_like.find("$.libraries[0].like"), std::string::npos) << mutex_like;
  EXPECT_NE(mutex_like.find("\"lua_owner\" is a mutex and \"lib:sem\" a semaphore"),
            std::string::npos)
      << mutex_like;
  const std::string semaphore_like = error_of_manifest("zset_semaphore_server", "");
  EXPECT_NE(semaphore_like.find("\"zset_semaphore_server\" is a semaphore and \"lib:sem\" a mutex"),
            std::string::npos)
      << semaphore_like;
  const std::string unknown = error_of_manifest("zset_semaphore", "counting");
  EXPECT_NE(unknown.find("$.libraries[0].kind"), std::string::npos) << unknown;

  // A reentrant library (Redisson's RLock) is judged by its owner's depth, like hash_reentrant;
  // like a mutex, or a mutex like a reentrant lock, is refused.
  const auto reentrant = make_library_variant(load("hash_reentrant", "reentrant")[0]);
  EXPECT_TRUE(reentrant->reentrant());
  EXPECT_FALSE(reentrant->semaphore());
  EXPECT_FALSE(make_library_variant(load("lua_owner", "")[0])->reentrant());
  const std::string reentrant_like_mutex = error_of_manifest("lua_owner", "reentrant");
  EXPECT_NE(reentrant_like_mutex.find("\"lua_owner\" is a mutex and \"lib:sem\" a reentrant lock"),
            std::string::npos)
      << reentrant_like_mutex;
  const std::string mutex_like_reentrant = error_of_manifest("hash_reentrant", "mutex");
  EXPECT_NE(
      mutex_like_reentrant.find("\"hash_reentrant\" is a reentrant lock and \"lib:sem\" a mutex"),
      std::string::npos)
      << mutex_like_reentrant;
}

// A library's "cluster": true (its adapter builds a cluster client) or "none: <why>" (the reason
// a cluster scenario is skipped, kept without "none: "); any other string, and a quorum library
// on a cluster, are refused at "cluster".
TEST_F(VariantFileTest, LibraryClusterSaysWhetherItsAdapterUsesOne) {
  const auto load = [&](const std::string& more) {
    return load_library_manifest(
        write(R"({"libraries": [{"name": "lib:c", "adapter": "c", "command": ["/bin/true"],
                  "summary": "a lock", "like": "lua_owner")" +
              more + "}]}"),
        variant_names());
  };
  EXPECT_TRUE(load(R"(, "cluster": true)")[0].cluster);
  EXPECT_FALSE(load("")[0].cluster);
  const LibrarySpec refused = load(R"(, "cluster": "none: one server's URL only")")[0];
  EXPECT_FALSE(refused.cluster);
  EXPECT_EQ(refused.cluster_refusal, "one server's URL only");
  const auto error_of = [&](const std::string& more) {
    try {
      load(more);
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  for (const std::string bad : {R"(, "cluster": "yes")", R"(, "cluster": "none: ")",
                                R"(, "cluster": true, "quorum": true)"}) {
    EXPECT_NE(error_of(bad).find("$.libraries[0].cluster"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace locksim
