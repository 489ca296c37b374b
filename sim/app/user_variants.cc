// User Lua locks (--variant-file): registered before scenarios load, so scenario files may name
// them; added to every scenario that lists their reference variant (`like`, or the built-in that
// matches what they declare), with that variant's expectation.
#include <algorithm>

#include "sim/app/commands.h"
#include "sim/lock/registry.h"
#include "sim/lock/script_variant.h"
#include "sim/scenario/scenario.h"

namespace locksim {

std::vector<UserVariant> register_variant_files(const std::vector<std::string>& files) {
  std::vector<UserVariant> users;
  for (const std::string& file : files) {
    const ScriptVariantSpec spec = load_script_variant(file, variant_names());
    register_variant(make_script_variant(spec));
    users.push_back(UserVariant{spec.name, reference_variant(spec), spec});
  }
  return users;
}

void add_user_variants(std::vector<Scenario>& scenarios, const std::vector<UserVariant>& users) {
  for (Scenario& scenario : scenarios) {
    for (const UserVariant& user : users) {
      const auto& listed = scenario.variants;
      if (std::find(listed.begin(), listed.end(), user.name) != listed.end()) continue;
      if (std::find(listed.begin(), listed.end(), user.like) == listed.end()) continue;
      const Expectation expected = scenario.expect.at(user.like);
      const nlohmann::json resolved_expectation = scenario.resolved["expect"][user.like];
      scenario.variants.push_back(user.name);
      scenario.expect[user.name] = expected;
      scenario.resolved["variants"].push_back(user.name);
      scenario.resolved["expect"][user.name] = resolved_expectation;
    }
  }
}

}  // namespace locksim
