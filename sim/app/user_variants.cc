// User Lua locks (--variant-file): registered before scenarios load, so scenario files may name
// them; added to every scenario that lists their reference variant (`like`, or the built-in that
// matches what they declare), with that variant's expectation, and held to no finding of their
// own beside it when the reference is a correct lock; a renewing or queueing lease lock also runs
// every scenario of lua_owner's, expecting no finding of its own.
#include <algorithm>
#include <optional>
#include <set>

#include "sim/app/commands.h"
#include "sim/checker/check.h"
#include "sim/core/clock.h"
#include "sim/core/error.h"
#include "sim/lock/registry.h"
#include "sim/lock/script_variant.h"
#include "sim/model/model_connection.h"
#include "sim/model/model_server.h"
#include "sim/scenario/scenario.h"

namespace locksim {

std::vector<UserVariant> register_variant_files(const std::vector<std::string>& files) {
  std::vector<UserVariant> users;
  // Every script is compiled by the model's Lua (the one Redis embeds) as it is registered, so a
  // syntax error is bad input for every command that reads the file: explore ran a lock that
  // did not compile for 20,000 schedules and called its errors the lock's own findings.
  std::optional<ModelServer> model;
  std::optional<ModelConnection> compiler;
  for (const std::string& file : files) {
    const ScriptVariantSpec spec = load_script_variant(file, variant_names());
    if (!compiler) compiler.emplace(model.emplace(), real_clock());
    if (const std::string error = compile_script_variant(spec, *compiler); !error.empty()) {
      throw InputError(error);
    }
    register_variant(make_script_variant(spec));
    users.push_back(UserVariant{spec.name, reference_variant(spec), spec});
  }
  return users;
}

namespace {

// kCorrectReferences: the correct locks of each kind. A user lock held to one of them must also
// show no finding that is a lock's own bug: a green row with a red "Stale release" under it was
// an ok that was not earned.
const std::set<std::string> kCorrectReferences = {
    "lua_owner",      "lua_owner_renew", "lua_fair_queue", "redlock", "zset_semaphore_server",
    "hash_reentrant", "rw_lock_fair"};

// expects_own: whether an expectation itself expects a lock's own bug (a built-in's failure).
bool expects_own(const Expectation& e) {
  const bool cause = e.causes && std::any_of(e.causes->begin(), e.causes->end(),
                                             [](const std::string& c) { return is_own_cause(c); });
  return cause || e.stolen_renewal.value_or(false) || e.idle_hold.value_or(false) ||
         e.finding.has_value();
}

void add(Scenario& scenario, const std::string& name, Expectation expected,
         nlohmann::json resolved) {
  if (!expects_own(expected)) {
    expected.no_own_findings = true;
    if (resolved.is_string()) resolved = {{"verdict", resolved}};
    resolved["own_findings"] = "none";
  }
  scenario.variants.push_back(name);
  scenario.expect[name] = std::move(expected);
  scenario.resolved["variants"].push_back(name);
  scenario.resolved["expect"][name] = std::move(resolved);
}

}  // namespace

void add_user_variants(std::vector<Scenario>& scenarios, const std::vector<UserVariant>& users) {
  for (Scenario& scenario : scenarios) {
    for (const UserVariant& user : users) {
      const auto& listed = scenario.variants;
      const auto lists = [&](const std::string& v) {
        return std::find(listed.begin(), listed.end(), v) != listed.end();
      };
      if (lists(user.name)) continue;
      const bool correct = kCorrectReferences.count(user.like) > 0;
      if (lists(user.like)) {
        const Expectation expected = scenario.expect.at(user.like);
        const nlohmann::json resolved = scenario.resolved["expect"][user.like];
        if (correct) {
          add(scenario, user.name, expected, resolved);
        } else {
          // Held to a built-in with known bugs ("like": "set_nx_ex"), as it asked.
          scenario.variants.push_back(user.name);
          scenario.expect[user.name] = expected;
          scenario.resolved["variants"].push_back(user.name);
          scenario.resolved["expect"][user.name] = resolved;
        }
        continue;
      }
      // Every scenario a lease lock can run: a renewing or queueing lock runs lua_owner's too
      // (stale-release, delayed-release), where it may do better than lua_owner but must show
      // no finding of its own.
      if (correct && user.like != "redlock" && user.spec.uses_ttl && lists("lua_owner")) {
        Expectation any;
        any.any = true;
        add(scenario, user.name, any, nlohmann::json{{"verdict", "any"}});
      }
    }
  }
}

}  // namespace locksim
