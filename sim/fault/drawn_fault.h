// drawn_fault.h: what a drawn fault of one kind is, written once for every kind. A drawn fault
// is one a workload draws for each cycle of each client from the run's seed ("crash_probability":
// 0.1); DrawnFault is one kind's settings in one workload, with its draw and its injection, and
// DrawnFaultType how a kind's keys are read from the "workload" object.
//
// A drawn fault kind's own code is one file, sim/fault/drawn/<word>.cc (pause.cc is the model):
// its DrawnFault (its keys' values, validated and written back; its draw for one cycle; its
// injection: what the workload client does in a cycle that drew it, through a DrawnFaultHost)
// and its DrawnFaultType (its word, its keys, its traits, its parser), plus its row in
// drawn_fault.cc's table. A kind whose injection needs something of the client that no
// DrawnFaultHost verb does needs that verb in every host too (lose needs lose_lock), and one
// that records an event of its own a FaultKind (fault.h). The workload parser accepts every
// kind's keys, the plan draws every kind for every cycle (Plan::cycle), the workload client
// hands each kind its cycle's draw at each point of the cycle (workload_client in
// sim/client/workload.cc), and the event loop refuses a kind it cannot host before the run: none
// of them names a kind.
//
// Draws are counter-based, like the rest of a plan. The first four kinds (lose, crash, pause,
// lost_reply) draw from the cycle's own stream around its work and rest draws, where they always
// have (DrawSlot), so that a seed still gives the runs it gave; a later kind draws from a stream
// of its own (DrawSlot::kOwnStream, the default), so that adding it shifts no other draw.
//
//   const DrawnFaultType* type = drawn_fault_type("pause");
//   std::shared_ptr<const DrawnFault> pause = type->parse(workload_reader);
//   std::int64_t drawn = pause->draw(cycle_rng);  // 0, or how long the holder is frozen (ms)
//   if (drawn != 0) co_await pause->inside(host, {.client = "c0", .cycle = 3, .drawn = drawn});
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/clock.h"
#include "sim/core/random.h"
#include "sim/core/task.h"
#include "sim/fault/fault.h"
#include "sim/json/json_reader.h"

namespace locksim {

struct DrawnFaultType;

// kMaxDrawnFaultKinds: room for every kind of drawn_fault.cc's table in a CyclePlan.
inline constexpr std::size_t kMaxDrawnFaultKinds = 8;

// DrawSlot: where a kind draws in a cycle's random stream (see Plan::cycle).
enum class DrawSlot : std::uint8_t {
  kBeforeWork,  // the cycle's stream, before the work's draw (lose)
  kBeforeRest,  // the cycle's stream, between the work's and the rest's draws (crash)
  kAfterRest,   // the cycle's stream, after the rest's draw, in table order (pause, lost_reply)
  kOwnStream,   // a stream forked for the kind alone (from its word): every kind added later
};

// WorkRole: how a kind's injection inside the critical section relates to the cycle's work.
enum class WorkRole : std::uint8_t {
  kNone,  // it does nothing inside (it acts before the acquire or before the release)
  // kBeside: it runs inside before the work, and its draw is how long (ms) it keeps the holder
  // there: the work recorded for the cycle is its work plus that draw (a pause).
  kBeside,
  // kInstead: it runs inside instead of the work, which is neither done nor recorded, and the
  // cycle keeps no draw of a kind beside the work or of another kind instead of it (Doc D's lost
  // iteration).
  kInstead,
};

// DrawnFaultHost: what a drawn fault's injection may ask of the host of the workload client it
// is drawn for: the part of WorkloadHost (sim/client/workload.h) that is not the lock's calls.
// A host that cannot honour a call refuses the workload before the run (event_loop_refusal).
class DrawnFaultHost {
 public:
  virtual ~DrawnFaultHost() = default;

  // sleep: waits `duration` (the work, the rest, a fault's time inside); false if the run's stop
  // cut it short.
  virtual Ask<bool> sleep(Nanos duration) = 0;
  // crash: the client dies inside the critical section; its connections close.
  virtual void crash() = 0;
  // end_renewal: the client stops renewing the lease it holds (an extension under way ends
  // first); nothing is recorded.
  virtual Task<void> end_renewal() = 0;
  // record_fault: the client records a fault event of `kind` (an instant the client itself knows
  // of, such as Doc D's lost iteration) at the key it holds.
  virtual void record_fault(FaultKind kind) = 0;
  // lose_next_reply: the nemesis drops the reply of the client's next command on its link.
  virtual void lose_next_reply() = 0;
  // pause_holder, resume_holder: the nemesis freezes the client (SIGSTOP for a process, its
  // renewal thread held for a thread) and thaws it.
  virtual void pause_holder() = 0;
  virtual void resume_holder() = 0;
  // note: a line for the run's notes (printed, and kept with the report).
  virtual void note(const std::string& line) = 0;
};

// DrawnCycle: one cycle of one client, as the injection of a kind drawn for it sees it.
struct DrawnCycle {
  std::string_view client;  // the client's name ("c0"); the scenario outlives the run
  std::int64_t cycle = 0;   // 0-based
  std::int64_t drawn = 0;   // the kind's draw for the cycle; never 0 (an undrawn kind is not asked)
};

// DrawnFault: one kind's settings in one workload, validated, and what the kind does with them.
// Immutable once the scenario is loaded (a Workload shares it between its copies).
class DrawnFault {
 public:
  DrawnFault(const DrawnFaultType& type, double probability)
      : type_(&type), probability_(probability) {}
  virtual ~DrawnFault() = default;

  const DrawnFaultType& type() const { return *type_; }
  // probability: the chance that a cycle draws the fault (its "<...>_probability" key).
  double probability() const { return probability_; }
  // on: some cycle may draw it; a kind that is off changes nothing in a run.
  bool on() const { return probability_ > 0; }

  // --- its JSON --------------------------------------------------------------------------------

  // write: adds the kind's keys to the "workload" entry of the resolved scenario.json, every
  // default filled in, in a form DrawnFaultType::parse accepts again.
  virtual void write(nlohmann::json& workload) const = 0;
  // with_lock_ttl: these settings once the lock's lease is known, for a kind with a default that
  // follows it (a lost iteration sleeps three leases); nullptr: they do not depend on it.
  virtual std::shared_ptr<const DrawnFault> with_lock_ttl(std::int64_t /*ttl_ms*/) const {
    return nullptr;
  }
  // event_loop_refusal: "<JSON path>: <reason>" if the kind is on and one event loop cannot host
  // it ("clients_run_as": "event_loop": no lost renewal, no nemesis); "" if it can. `why` is the
  // executor's own reason, to be said after the kind's.
  virtual std::string event_loop_refusal(std::string_view /*why*/) const { return ""; }
  // estimated_inside_ms: the mean time the kind adds to a holder's stay inside per cycle, as the
  // driver's estimate of a run's events counts it (a frozen holder records nothing: 0 for pause).
  virtual double estimated_inside_ms() const { return 0; }

  // --- its draw --------------------------------------------------------------------------------

  // draw: the kind's draw for one cycle, from the stream its DrawSlot names; 0: not this cycle.
  // It must take the same draws from `rng` whatever it decides, so that one outcome never shifts
  // a later draw. By default: 1 with the probability.
  virtual std::int64_t draw(Rng& rng) const { return rng.chance(probability_) ? 1 : 0; }

  // --- its injection (the workload client asks only the kinds the cycle drew) ------------------

  // before_acquire: before the cycle's acquire is sent.
  virtual void before_acquire(DrawnFaultHost& /*host*/, const DrawnCycle& /*cycle*/) const {}
  // unanswered_acquire: the cycle's acquire ended without an answer (indeterminate): the client
  // does not know whether it holds the lock, and goes on without it.
  virtual void unanswered_acquire(DrawnFaultHost& /*host*/, const DrawnCycle& /*cycle*/) const {}
  // inside: while the client holds the lock, after its resource read; asked only of a kind whose
  // WorkRole is not kNone, in table order.
  virtual Task<void> inside(DrawnFaultHost& /*host*/, DrawnCycle /*cycle*/) const { co_return; }
  // before_release: after the time inside and the resource write; true: the client is gone (it
  // neither releases nor runs another cycle).
  virtual bool before_release(DrawnFaultHost& /*host*/, const DrawnCycle& /*cycle*/) const {
    return false;
  }

 private:
  const DrawnFaultType* type_;
  double probability_;
};

// DrawnFaultType: one kind: its word, its keys in "workload", its traits and its parser.
struct DrawnFaultType {
  // word: the kind's name for tests, docs and CyclePlan::of ("pause"); not a JSON key.
  std::string_view word;
  // keys: the kind's keys in the "workload" object ("pause_probability", "pause_ms").
  std::vector<std::string> keys;
  DrawSlot slot = DrawSlot::kOwnStream;
  WorkRole work_role = WorkRole::kNone;
  // needs_link_proxy: the injection reaches the client's links, so a workload with the kind on
  // runs every client link through its fault proxy (a dropped reply).
  bool needs_link_proxy = false;
  // loses_lock: the holder is made to lose its lock, so summary.md says how many violations
  // began outside such a faulted window.
  bool loses_lock = false;
  // parse: the kind's settings from the "workload" object `workload` (whose keys are all
  // allowed), off when its keys are absent; throws InputError naming the file, the JSON path and
  // what was expected.
  std::shared_ptr<const DrawnFault> (*parse)(const json::JsonReader& workload) = nullptr;
};

// drawn_fault_types: every kind, in the order of drawn_fault.cc's table: the order of a
// Workload's drawn_faults and of a CyclePlan's draws.
std::span<const DrawnFaultType* const> drawn_fault_types();
// drawn_fault_type: the kind whose word is `word`; nullptr for any other word.
const DrawnFaultType* drawn_fault_type(std::string_view word);
// drawn_fault_index: the place of the kind whose word is `word` in drawn_fault_types(); asserts
// that there is one.
std::size_t drawn_fault_index(std::string_view word);
// own_stream: the stream a DrawSlot::kOwnStream kind draws from, forked from its word.
std::uint64_t own_stream(const DrawnFaultType& type);

// read_probability: the probability at `key` of a "workload" object; 0 when absent.
double read_probability(const json::JsonReader& workload, std::string_view key);

}  // namespace locksim
