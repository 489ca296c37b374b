#include "sim/lock/script_variant.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "sim/core/error.h"

namespace locksim {
namespace {

using Json = nlohmann::json;

[[noreturn]] void bad(const std::string& file, const std::string& path, const std::string& what) {
  throw InputError(file + ": " + path + ": " + what);
}

void only_keys(const Json& object, const std::set<std::string>& allowed, const std::string& file,
               const std::string& path) {
  for (const auto& [key, value] : object.items()) {
    if (allowed.count(key) == 0) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      bad(file, path + "." + key, "unknown key; expected one of: " + list);
    }
  }
}

std::string string_at(const Json& object, const std::string& key, const std::string& file,
                      const std::string& path, bool required) {
  if (!object.contains(key)) {
    if (required) bad(file, path + "." + key, "missing; expected a string");
    return "";
  }
  if (!object.at(key).is_string()) bad(file, path + "." + key, "expected a string");
  return object.at(key).get<std::string>();
}

std::vector<std::string> templates_at(const Json& object, const std::string& key,
                                      std::vector<std::string> fallback, const std::string& file,
                                      const std::string& path) {
  if (!object.contains(key)) return fallback;
  const Json& list = object.at(key);
  if (!list.is_array()) bad(file, path + "." + key, "expected an array of strings");
  static const std::regex kPlaceholder(R"(\{([^}]*)\})");
  static const std::set<std::string> kKnown = {"key", "token", "ttl_ms", "ttl_s"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item_path = path + "." + key + "[" + std::to_string(i) + "]";
    if (!list[i].is_string()) bad(file, item_path, "expected a string");
    const std::string text = list[i].get<std::string>();
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kPlaceholder);
         it != std::sregex_iterator(); ++it) {
      if (kKnown.count((*it)[1].str()) == 0) {
        bad(file, item_path,
            "unknown placeholder {" + (*it)[1].str() +
                "}; expected {key}, {token}, {ttl_ms} or {ttl_s}");
      }
    }
    out.push_back(text);
  }
  return out;
}

ScriptCall call_at(const Json& root, const std::string& key, const std::string& file,
                   std::vector<std::string> default_args) {
  const std::string path = "$." + key;
  const Json& object = root.at(key);
  if (!object.is_object())
    bad(file, path, "expected an object with \"script\", \"keys\", \"args\"");
  only_keys(object, {"script", "keys", "args"}, file, path);
  ScriptCall call;
  call.source = string_at(object, "script", file, path, true);
  if (call.source.empty()) bad(file, path + ".script", "expected Lua source, got an empty string");
  call.keys = templates_at(object, "keys", {"{key}"}, file, path);
  call.args = templates_at(object, "args", std::move(default_args), file, path);
  return call;
}

std::string fill(const std::string& text, const std::string& key, const std::string& token,
                 std::int64_t ttl_ms) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '{') {
      const std::size_t close = text.find('}', i);
      const std::string name = text.substr(i + 1, close - i - 1);
      if (name == "key") out += key;
      if (name == "token") out += token;
      if (name == "ttl_ms") out += std::to_string(ttl_ms);
      if (name == "ttl_s") out += std::to_string((ttl_ms + 999) / 1000);
      i = close + 1;
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string describe_reply(const Reply& reply) {
  switch (reply.type) {
    case Reply::Type::kNil:
      return "nil";
    case Reply::Type::kString:
      return "the string \"" + reply.str + "\"";
    case Reply::Type::kStatus:
      return "the status " + reply.str;
    case Reply::Type::kInteger:
      return "the integer " + std::to_string(reply.integer);
    case Reply::Type::kArray:
      return "an array";
    case Reply::Type::kError:
      return "an error";
  }
  return "an unknown reply";
}

// wrong_reply: the script ran but answered something the contract does not allow; what it did to
// the key is unknown, so the result is indeterminate (kUnexpectedReply).
RedisResult wrong_reply(RedisResult result, const std::string& script,
                        const std::string& expected) {
  result.error = RedisErrorKind::kUnexpectedReply;
  result.message =
      "script " + script + " returned " + describe_reply(result.reply) + "; expected " + expected;
  return result;
}

// ScriptedLuaLock: the user's scripts behind the LockVariant interface.
class ScriptedLuaLock final : public LockVariant {
 public:
  explicit ScriptedLuaLock(ScriptVariantSpec spec)
      : spec_(std::move(spec)),
        acquire_(spec_.name + ".acquire", spec_.acquire.source),
        release_(spec_.name + ".release", spec_.release.source),
        extend_(spec_.name + ".extend", spec_.extend ? spec_.extend->source : "return 0") {}

  std::string_view name() const override { return spec_.name; }
  std::string_view summary() const override { return spec_.summary; }
  bool uses_ttl() const override { return spec_.uses_ttl; }
  bool renews() const override { return spec_.extend.has_value(); }

  AcquireAttempt try_acquire(const LockContext& context, const std::string& key,
                             std::int64_t ttl_ms) const override {
    std::string token = context.rng.token_hex(32);
    RedisResult result =
        acquire_.run(context.connection, expand(spec_.acquire.keys, key, token, ttl_ms),
                     expand(spec_.acquire.args, key, token, ttl_ms));
    AcquireAttempt attempt;
    if (!result.ok()) {
      attempt.outcome = AcquireAttempt::Outcome::kError;
      attempt.error = std::move(result);
    } else if (result.reply.is_integer(1) || result.reply.is_status("OK")) {
      attempt.outcome = AcquireAttempt::Outcome::kAcquired;
      attempt.token = std::move(token);
    } else if (result.reply.is_integer(0) || result.reply.is_nil()) {
      attempt.outcome = AcquireAttempt::Outcome::kBusy;
    } else {
      attempt.outcome = AcquireAttempt::Outcome::kError;
      attempt.error =
          wrong_reply(std::move(result), acquire_.name(), "1 or OK (acquired), 0 or nil (busy)");
    }
    return attempt;
  }

  ReleaseResult release(const LockContext& context, const std::string& key,
                        const std::string& token) const override {
    const std::int64_t no_ttl = 0;
    RedisResult result =
        release_.run(context.connection, expand(spec_.release.keys, key, token, no_ttl),
                     expand(spec_.release.args, key, token, no_ttl));
    ReleaseResult release;
    if (result.ok() && result.reply.type == Reply::Type::kInteger) {
      release.deleted = result.reply.integer;
      release.outcome = release.deleted >= 1 ? ReleaseResult::Outcome::kReleased
                                             : ReleaseResult::Outcome::kNotHeld;
    } else {
      release.outcome = ReleaseResult::Outcome::kError;
      release.error = result.ok() ? wrong_reply(std::move(result), release_.name(),
                                                "an integer (keys deleted; 0 = refused)")
                                  : std::move(result);
    }
    return release;
  }

  ExtendResult extend(const LockContext& context, const std::string& key, const std::string& token,
                      std::int64_t ttl_ms) const override {
    if (!spec_.extend) return {};
    RedisResult result =
        extend_.run(context.connection, expand(spec_.extend->keys, key, token, ttl_ms),
                    expand(spec_.extend->args, key, token, ttl_ms));
    ExtendResult extended;
    if (result.ok() && (result.reply.is_integer(1) || result.reply.is_integer(0))) {
      extended.outcome = result.reply.integer == 1 ? ExtendResult::Outcome::kExtended
                                                   : ExtendResult::Outcome::kNotHeld;
    } else {
      extended.outcome = ExtendResult::Outcome::kError;
      extended.error = result.ok() ? wrong_reply(std::move(result), extend_.name(),
                                                 "1 (extended) or 0 (not held)")
                                   : std::move(result);
    }
    return extended;
  }

  const ScriptVariantSpec& spec() const { return spec_; }
  const Script& acquire_script() const { return acquire_; }
  const Script& release_script() const { return release_; }

 private:
  static std::vector<std::string> expand(const std::vector<std::string>& templates,
                                         const std::string& key, const std::string& token,
                                         std::int64_t ttl_ms) {
    std::vector<std::string> out;
    out.reserve(templates.size());
    for (const std::string& t : templates) out.push_back(fill(t, key, token, ttl_ms));
    return out;
  }

  ScriptVariantSpec spec_;
  Script acquire_;
  Script release_;
  Script extend_;
};

}  // namespace

ScriptVariantSpec load_script_variant(const std::filesystem::path& path,
                                      const std::vector<std::string>& known_variants) {
  const std::string file = path.string();
  std::ifstream in(path);
  if (!in) throw InputError(file + ": cannot open (expected a JSON variant file)");
  std::stringstream text;
  text << in.rdbuf();
  Json root;
  try {
    root = Json::parse(text.str());
  } catch (const Json::parse_error& e) {
    throw InputError(file + ": invalid JSON: " + e.what());
  }
  if (!root.is_object()) bad(file, "$", "expected an object");
  only_keys(root, {"name", "summary", "like", "uses_ttl", "acquire", "release", "extend"}, file,
            "$");
  ScriptVariantSpec spec;
  spec.file = file;
  spec.name = string_at(root, "name", file, "$", true);
  static const std::regex kName("[a-z][a-z0-9_]{0,31}");
  if (!std::regex_match(spec.name, kName)) {
    bad(file, "$.name", "expected [a-z][a-z0-9_]{0,31}, got \"" + spec.name + "\"");
  }
  for (const std::string& known : known_variants) {
    if (known == spec.name)
      bad(file, "$.name", "\"" + spec.name + "\" is already a variant's name");
  }
  spec.summary = string_at(root, "summary", file, "$", false);
  if (spec.summary.empty()) spec.summary = "user Lua lock from " + file;
  spec.like = string_at(root, "like", file, "$", false);
  if (!spec.like.empty() &&
      std::find(known_variants.begin(), known_variants.end(), spec.like) == known_variants.end()) {
    std::string list;
    for (const std::string& k : known_variants) list += (list.empty() ? "" : ", ") + k;
    bad(file, "$.like", "unknown variant \"" + spec.like + "\"; known: " + list);
  }
  if (root.contains("uses_ttl")) {
    if (!root.at("uses_ttl").is_boolean()) bad(file, "$.uses_ttl", "expected true or false");
    spec.uses_ttl = root.at("uses_ttl").get<bool>();
  }
  if (!root.contains("acquire")) bad(file, "$.acquire", "missing; expected the acquire script");
  if (!root.contains("release")) bad(file, "$.release", "missing; expected the release script");
  spec.acquire = call_at(root, "acquire", file, {"{token}", "{ttl_ms}"});
  spec.release = call_at(root, "release", file, {"{token}"});
  if (root.contains("extend")) spec.extend = call_at(root, "extend", file, {"{token}", "{ttl_ms}"});
  return spec;
}

std::unique_ptr<const LockVariant> make_script_variant(const ScriptVariantSpec& spec) {
  return std::make_unique<ScriptedLuaLock>(spec);
}

std::string compile_script_variant(const ScriptVariantSpec& spec, Connection& connection) {
  const std::vector<std::pair<std::string, const ScriptCall*>> calls = {
      {"acquire", &spec.acquire},
      {"release", &spec.release},
      {"extend", spec.extend ? &*spec.extend : nullptr}};
  for (const auto& [which, call] : calls) {
    if (call == nullptr) continue;
    const Script script(spec.name + "." + which, call->source);
    const RedisResult loaded = script.load(connection);
    if (!loaded.ok()) return spec.file + ": $." + which + ".script: " + loaded.message;
  }
  return "";
}

}  // namespace locksim
