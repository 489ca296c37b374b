// A third-party lock library as a variant: what it declares and how to start its adapter.
#include "sim/lock/library_variant.h"

#include <algorithm>
#include <cstdlib>
#include <regex>

#include "sim/json/file.h"
#include "sim/json/json_reader.h"
#include "sim/lock/registry.h"

namespace locksim {
namespace {

using json::JsonReader;

constexpr std::size_t kMaxLibraries = 64;
constexpr std::size_t kMaxField = 400;

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::vector<std::string> strings(const JsonReader& reader, const std::string& adapters) {
  std::vector<std::string> out;
  for (const JsonReader& element : reader.elements(/*non_empty=*/true)) {
    out.push_back(replace_all(element.non_empty_string(kMaxField), "{adapters}", adapters));
  }
  return out;
}

// The variant itself is never called in-process: the driver runs a library's clients as its
// adapter's processes. Calls answer an error that names the mistake instead of crashing.
class LibraryVariant final : public LockVariant {
 public:
  explicit LibraryVariant(LibrarySpec spec) : spec_(std::move(spec)) {}

  std::string_view name() const override { return spec_.name; }
  std::string_view summary() const override { return spec_.summary; }
  bool uses_ttl() const override { return spec_.uses_ttl; }
  bool renews() const override { return spec_.renews; }
  bool multi_server() const override { return spec_.quorum; }
  bool semaphore() const override { return spec_.semaphore; }
  // A library's semaphore is taken to read its process's clock (redis-semaphore's Date.now()):
  // what it reads is not known here, and a clock shifted under it (--confirm) may matter.
  bool reads_client_clock() const override { return spec_.semaphore; }
  bool reentrant() const override { return spec_.reentrant; }
  bool in_process() const override { return false; }
  std::string stored_key(const std::string& key) const override {
    return library_key(spec_.lock_key, key);
  }
  std::string stored_prefix(const std::string& prefix) const override {
    return spec_.lock_key.substr(0, spec_.lock_key.find("{key}")) + prefix;
  }
  const LibrarySpec& spec() const { return spec_; }

  AcquireAttempt try_acquire(const LockContext&, const std::string&,
                             std::int64_t) const override {
    AcquireAttempt attempt;
    attempt.outcome = AcquireAttempt::Outcome::kError;
    attempt.error = not_here();
    return attempt;
  }
  ReleaseResult release(const LockContext&, const std::string&,
                        const std::string&) const override {
    ReleaseResult result;
    result.outcome = ReleaseResult::Outcome::kError;
    result.error = not_here();
    return result;
  }

 private:
  RedisResult not_here() const {
    RedisResult result;
    result.error = RedisErrorKind::kRefused;
    result.message = spec_.name + " runs only as its adapter's client processes";
    return result;
  }

  LibrarySpec spec_;
};

}  // namespace

std::filesystem::path adapters_dir() {
  if (const char* dir = std::getenv("LOCKSIM_ADAPTERS_DIR"); dir != nullptr && *dir != '\0') {
    // Absolute: the runtime checks hand it to node's require(), which reads a relative
    // "adapters/..." as a package name (LOCKSIM_ADAPTERS_DIR=adapters failed every node check).
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::absolute(dir, error);
    return error ? std::filesystem::path(dir) : absolute;
  }
  return std::filesystem::path(LOCKSIM_SOURCE_DIR) / "adapters";
}

std::string library_key(const std::string& lock_key_template, const std::string& key) {
  return replace_all(lock_key_template, "{key}", key);
}

std::vector<LibrarySpec> load_library_manifest(const std::filesystem::path& path,
                                               const std::vector<std::string>& known_variants) {
  static const std::regex kName("lib:[a-z][a-z0-9-]{0,39}");
  static const std::regex kAdapter("[a-z0-9][a-z0-9_.-]{0,63}");
  const std::string file = path.string();
  const nlohmann::json document = json::read_json_file(path, json::kVariantFileLimits,
                                                       "library manifest");
  const JsonReader root(document, "$", file);
  root.expect_object({"libraries"});
  const std::vector<JsonReader> entries = root.member("libraries").elements(true);
  if (entries.size() > kMaxLibraries) {
    root.member("libraries").fail("at most " + std::to_string(kMaxLibraries) + " libraries");
  }
  const std::string adapters = path.parent_path().string();
  std::vector<LibrarySpec> specs;
  for (const JsonReader& entry : entries) {
    entry.expect_object({"name", "adapter", "command", "summary", "like", "expect", "uses_ttl",
                         "renews", "quorum", "cluster", "kind", "lock_key", "other_keys",
                         "runtime_check", "install", "reported_in", "cancel"});
    LibrarySpec spec;
    const JsonReader name = entry.member("name");
    spec.name = name.matching(kName, "\"lib:\" then a lowercase name (letters, digits, '-')");
    for (const LibrarySpec& other : specs) {
      if (other.name == spec.name) name.fail("\"" + spec.name + "\" is listed twice");
    }
    spec.adapter = entry.member("adapter").matching(kAdapter, "an adapter folder name");
    spec.command = strings(entry.member("command"), adapters);
    spec.summary = entry.member("summary").non_empty_string(kMaxField);
    spec.like = entry.member("like").one_of(known_variants, "variant", "known");
    if (const auto expect = entry.optional_member("expect")) {
      spec.assert_like = expect->one_of({"like", "any"}, "expectation", "expected") == "like";
    }
    if (const auto uses_ttl = entry.optional_member("uses_ttl")) spec.uses_ttl = uses_ttl->boolean();
    if (const auto renews = entry.optional_member("renews")) spec.renews = renews->boolean();
    if (const auto quorum = entry.optional_member("quorum")) spec.quorum = quorum->boolean();
    if (const auto cluster = entry.optional_member("cluster")) {
      if (cluster->value().is_boolean()) {
        spec.cluster = cluster->boolean();
      } else {
        const std::string words = cluster->non_empty_string(kMaxField);
        constexpr std::string_view kNone = "none: ";
        if (!words.starts_with(kNone) || words.size() == kNone.size()) {
          cluster->fail(
              "expected true, false or \"none: \" and why the adapter cannot use a "
              "Redis Cluster");
        }
        spec.cluster_refusal = words.substr(kNone.size());
      }
      // Redlock over one cluster's primaries is not the quorum of independent servers a quorum
      // library's scenarios judge.
      if (spec.cluster && spec.quorum) {
        cluster->fail(
            "a quorum library (\"quorum\": true) takes its lock over independent "
            "servers; over a Redis Cluster it is not supported");
      }
    }
    if (const auto kind = entry.optional_member("kind")) {
      const std::string named = kind->one_of({"mutex", "semaphore", "reentrant"}, "kind", "kinds");
      spec.semaphore = named == "semaphore";
      spec.reentrant = named == "reentrant";
    }
    // A semaphore's verdicts count holders against its permits, a reentrant lock's count its
    // owner's holds, a mutex's allow one hold: a library joins the scenarios of its "like" with
    // that built-in's expectations, so both are one kind.
    if (const LockVariant* like = find_variant(spec.like);
        like != nullptr &&
        (like->semaphore() != spec.semaphore || like->reentrant() != spec.reentrant)) {
      const auto kind_of = [](bool semaphore, bool reentrant) {
        return std::string(semaphore ? "semaphore" : reentrant ? "reentrant lock" : "mutex");
      };
      entry.member("like").fail("\"" + spec.like + "\" is a " +
                                kind_of(like->semaphore(), like->reentrant()) + " and \"" +
                                spec.name + "\" a " + kind_of(spec.semaphore, spec.reentrant) +
                                " (\"kind\"): a library is judged like a built-in of its own kind");
    }
    if (const auto cancel = entry.optional_member("cancel")) {
      spec.cancel = cancel->non_empty_string(kMaxField);
    }
    if (const auto lock_key = entry.optional_member("lock_key")) {
      spec.lock_key = lock_key->non_empty_string(kMaxField);
      if (spec.lock_key.find("{key}") == std::string::npos) {
        lock_key->fail("expected a template containing {key}");
      }
    }
    if (const auto others = entry.optional_member("other_keys")) {
      for (const JsonReader& other : others->elements(/*non_empty=*/true)) {
        std::string key_template = other.non_empty_string(kMaxField);
        if (key_template.find("{key}") == std::string::npos) {
          other.fail("expected a template containing {key}");
        }
        spec.other_keys.push_back(std::move(key_template));
      }
    }
    if (const auto check = entry.optional_member("runtime_check")) {
      spec.runtime_check = strings(*check, adapters);
    }
    if (const auto reported = entry.optional_member("reported_in")) {
      for (const std::string& scenario : reported->keys()) {
        spec.reported_in[scenario] = reported->member(scenario).non_empty_string(kMaxField);
      }
    }
    if (const auto install = entry.optional_member("install")) {
      spec.install = replace_all(install->non_empty_string(kMaxField), "{adapters}", adapters);
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::vector<std::string> library_prefixes(const LockVariant& variant, const std::string& prefix) {
  std::vector<std::string> prefixes;
  const auto add = [&](std::string more) {
    if (more != prefix && std::find(prefixes.begin(), prefixes.end(), more) == prefixes.end()) {
      prefixes.push_back(std::move(more));
    }
  };
  add(variant.stored_prefix(prefix));
  if (const LibrarySpec* spec = library_spec(variant)) {
    for (const std::string& other : spec->other_keys) {
      add(other.substr(0, other.find("{key}")) + prefix);
    }
  }
  return prefixes;
}

std::unique_ptr<const LockVariant> make_library_variant(const LibrarySpec& spec) {
  return std::make_unique<LibraryVariant>(spec);
}

const LibrarySpec* library_spec(const LockVariant& variant) {
  const auto* library = dynamic_cast<const LibraryVariant*>(&variant);
  return library != nullptr ? &library->spec() : nullptr;
}

}  // namespace locksim
