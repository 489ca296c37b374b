// confirm.h: the confirmation: a minimal scenario (shrink.h) run on a private real redis-server in
// real time, and where those runs and the simulator's disagree (compare_backends).
//
//   Confirmation c = confirm(minimal.document, *target.variant, 5, stop);
//   BackendDifference d = compare_backends(minimal, c);
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/stop.h"
#include "sim/explore/shrink.h"
#include "sim/lock/variant.h"

namespace locksim {

// Confirmation: the minimal scenario run on a real redis-server in real time.
struct Confirmation {
  int runs = 0;
  int reproduced = 0;
  // other_clients: runs that did not reproduce it but showed its signature between other clients
  // (who won a race went the other way: the finding all the same), and the first such run's
  // clients ("C and A").
  int other_clients = 0;
  std::string other_clients_seen;
  // signatures: every signature the runs showed (exercise.h signatures), with how many showed it.
  std::map<std::string, int> signatures;
  std::vector<std::string> observed;  // what each run that did not reproduce observed
  std::string error;                  // the server could not be started
};
// BackendDifference: what a real server's runs of a minimal scenario showed that the simulator's
// runs of it (fresh and sampled seeds: ShrinkResult::sampled_signatures) never did, and what the
// simulator showed under every fresh seed, and under its sampled seeds so often that the real
// runs' count is a draw of less than 1 in 100, that not every real run did: where the two disagree,
// the simulator is wrong (the model or its timing), and the difference is named
// (docs/simulator.md).
struct BackendDifference {
  std::vector<std::string> only_real;    // "<signature> (k of N real runs)"
  // "<signature> (k of N real runs, every one of M simulated seeds)" (or "m of M").
  std::vector<std::string> not_on_real;
  bool empty() const { return only_real.empty() && not_on_real.empty(); }
};
BackendDifference compare_backends(const ShrinkResult& simulated, const Confirmation& real);
// describe_difference: explore's lines for a difference (empty: agreement), for the finding
// `signature` that `reproduced` real runs showed: one those runs confirmed stands, however often
// the simulator shows it besides.
std::string describe_difference(const BackendDifference& difference, const std::string& signature,
                                int reproduced);

// binomial_at_most: the probability that at most `k` of `n` runs show what each shows with
// probability `p` (1 when k >= n).
double binomial_at_most(int n, int k, double p);

// confirm: runs `document` (whose expect says what it must show) `runs` times on a private
// redis-server.
Confirmation confirm(const nlohmann::json& document, const LockVariant& variant, int runs,
                     StopSignal& stop);

}  // namespace locksim
