// The top-level "resource": the protected data a critical section reads and writes.
#include <regex>
#include <string>
#include <vector>

#include "sim/scenario/scenario_parts.h"

namespace locksim::scenario_internal {
namespace {

constexpr std::int64_t kMaxInitialStock = 1000000000;
constexpr std::int64_t kMaxRecordIds = 1000000;

struct KindName {
  ResourceConfig::Kind kind;
  const char* name;
};
constexpr KindName kKinds[] = {
    {ResourceConfig::Kind::kCounter, "counter"},
    {ResourceConfig::Kind::kFindOrCreate, "find_or_create"},
    {ResourceConfig::Kind::kFencedCounter, "fenced_counter"},
};

}  // namespace

std::string resource_kind_name(ResourceConfig::Kind kind) {
  for (const KindName& k : kKinds) {
    if (k.kind == kind) return k.name;
  }
  return "";
}

ResourceConfig parse_resource(const JsonReader& node) {
  static const std::regex kNamePattern("[A-Za-z0-9_:.-]{1,64}");
  node.expect_object({"kind", "name", "initial", "ids"});
  ResourceConfig resource;
  std::vector<std::string> names;
  for (const KindName& k : kKinds) names.emplace_back(k.name);
  const std::string kind = node.member("kind").one_of(names, "resource kind", "allowed");
  for (const KindName& k : kKinds) {
    if (kind == k.name) resource.kind = k.kind;
  }
  const bool counts = resource.counts();
  const std::string own_key = counts ? "initial" : "ids";
  const std::string other_key = counts ? "ids" : "initial";
  if (node.has(other_key)) {
    node.member(other_key).fail(
        "not allowed when \"kind\" is \"" + kind + "\" (only with \"kind\": " +
        (counts ? "\"find_or_create\"" : "\"counter\" or \"fenced_counter\"") + ")");
  }
  if (const auto name = node.optional_member("name")) {
    resource.name = name->matching(kNamePattern, "a key of 1 to 64 letters, digits or _ : . -");
  }
  if (const auto value = node.optional_member(own_key)) {
    if (counts) {
      resource.initial = value->count(0, kMaxInitialStock, "an initial stock");
    } else {
      resource.ids = static_cast<int>(value->count(1, kMaxRecordIds, "a number of record ids"));
    }
  }
  return resource;
}

nlohmann::json resolved_resource(const ResourceConfig& resource) {
  if (resource.kind == ResourceConfig::Kind::kNone) return nullptr;
  nlohmann::json result = {{"kind", resource_kind_name(resource.kind)}, {"name", resource.name}};
  if (resource.counts()) {
    result["initial"] = resource.initial;
  } else {
    result["ids"] = resource.ids;
  }
  return result;
}

}  // namespace locksim::scenario_internal
