// The top-level "resource": the protected data a critical section reads and writes.
#include <regex>
#include <string>

#include "sim/scenario/scenario_parts.h"

namespace locksim::scenario_internal {
namespace {

constexpr std::int64_t kMaxInitialStock = 1000000000;
constexpr std::int64_t kMaxRecordIds = 1000000;

const char* kind_name(ResourceConfig::Kind kind) {
  return kind == ResourceConfig::Kind::kCounter ? "counter" : "find_or_create";
}

}  // namespace

ResourceConfig parse_resource(const JsonReader& node) {
  static const std::regex kNamePattern("[A-Za-z0-9_:.-]{1,64}");
  node.expect_object({"kind", "name", "initial", "ids"});
  ResourceConfig resource;
  const std::string kind =
      node.member("kind").one_of({"counter", "find_or_create"}, "resource kind", "allowed");
  resource.kind =
      kind == "counter" ? ResourceConfig::Kind::kCounter : ResourceConfig::Kind::kFindOrCreate;
  const bool counter = resource.kind == ResourceConfig::Kind::kCounter;
  const std::string own_key = counter ? "initial" : "ids";
  const std::string other_key = counter ? "ids" : "initial";
  if (node.has(other_key)) {
    node.member(other_key).fail("not allowed when \"kind\" is \"" + kind +
                                "\" (only with \"kind\": \"" +
                                (counter ? "find_or_create" : "counter") + "\")");
  }
  if (const auto name = node.optional_member("name")) {
    resource.name = name->matching(kNamePattern, "a key of 1 to 64 letters, digits or _ : . -");
  }
  if (const auto value = node.optional_member(own_key)) {
    if (counter) {
      resource.initial = value->count(0, kMaxInitialStock, "an initial stock");
    } else {
      resource.ids = static_cast<int>(value->count(1, kMaxRecordIds, "a number of record ids"));
    }
  }
  return resource;
}

nlohmann::json resolved_resource(const ResourceConfig& resource) {
  if (resource.kind == ResourceConfig::Kind::kNone) return nullptr;
  nlohmann::json result = {{"kind", kind_name(resource.kind)}, {"name", resource.name}};
  if (resource.kind == ResourceConfig::Kind::kCounter) {
    result["initial"] = resource.initial;
  } else {
    result["ids"] = resource.ids;
  }
  return result;
}

}  // namespace locksim::scenario_internal
