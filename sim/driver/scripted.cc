// Scripted scenarios: steps run on their clients' threads in the listed order, coordinated on
// observable conditions (client state and keys on the server) rather than on sleeps, so that an
// outcome does not depend on how fast the machine is.
//
// Ordering rule: a step starts once every earlier step has started and every earlier acquire has
// finished, except the steps of a client that is waiting for the lock (its acquire was answered
// "busy" and it keeps trying): a correct lock must be able to hold such a client back without
// stalling the script, or a scenario could only pass by timing out. A client whose acquire is
// merely in flight still holds later steps back, so the listed order of acquisitions is kept.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/assert.h"
#include "sim/driver/runners.h"
#include "sim/fault/server_fault.h"
#include "sim/run/conditions.h"
#include "sim/topology/topology.h"

namespace locksim::driver_internal {
namespace {

// turn_has_come: requires run.mutex. An earlier step holds step `index` back until it has started;
// an earlier acquire until it has finished, so acquisitions happen in the listed order, unless
// its client is waiting for the lock (answered "busy" and trying again).
bool turn_has_come(RunContext& run, std::size_t index) {
  const std::vector<Step>& steps = run.scenario().steps;
  for (std::size_t j = run.steps_started_and_acquired; j < index; ++j) {
    const bool waiting = !Step::server_action(steps[j].action) && run.waiting[run.step_client[j]];
    if (waiting) continue;
    if (!run.step_started[j]) return false;
    if (steps[j].action == Step::Action::kAcquire && !run.step_finished[j]) return false;
  }
  return true;
}

// wait_for_turn: blocks until the ordering rule lets step `index` start; false if the run stops.
bool wait_for_turn(RunContext& run, std::size_t index) {
  std::unique_lock<std::mutex> lock(run.mutex);
  while (!turn_has_come(run, index)) {
    if (run.should_stop()) return false;
    run.clock().base().pause(run.changed, lock, ms_to_ns(20));
  }
  return true;
}

void mark_started(RunContext& run, std::size_t index) {
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    run.step_started[index] = true;
    while (run.steps_started < run.step_started.size() && run.step_started[run.steps_started]) {
      ++run.steps_started;
    }
  }
  run.notify_changed();
}

// mark_started_once: mark_started, unless the step has started already.
void mark_started_once(RunContext& run, std::size_t index) {
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    if (run.step_started[index]) return;
  }
  mark_started(run, index);
}

void mark_done(RunContext& run, std::size_t index) {
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    const std::vector<Step>& steps = run.scenario().steps;
    run.step_finished[index] = true;
    // Steps below this bound have started and, if acquires, finished: no later step waits on them.
    while (run.steps_started_and_acquired < steps.size() &&
           run.step_started[run.steps_started_and_acquired] &&
           (steps[run.steps_started_and_acquired].action != Step::Action::kAcquire ||
            run.step_finished[run.steps_started_and_acquired])) {
      ++run.steps_started_and_acquired;
    }
  }
  run.notify_changed();
}

CallFaults faults_of(const Step& step) {
  CallFaults faults;
  faults.crash_at = step.crash_at;
  faults.pause_at = step.pause_at;
  faults.pause_until = step.pause_until;
  faults.pause_max_ns = ms_to_ns(step.pause_max_ms);
  faults.cancel_after_ms = step.cancel_after_ms;
  return faults;
}

// hold_fault: a pause or partition lasts work_ms, or until its conditions hold (at most max_ms).
void hold_fault(RunContext& run, DriverClient& client, const Step& step, const char* what) {
  if (step.until.empty()) {
    run.pause(ms_to_ns(step.work_ms));
  } else if (!wait_for_conditions(run, client.observer(), step.until, ms_to_ns(step.max_ms)) &&
             !run.should_stop()) {
    run.note(client.name() + " (" + step.id + "): " + what + " the full " +
             std::to_string(step.max_ms) + " ms; never saw " + describe_conditions(step.until));
  }
}

// link_servers: the server indices of the links a partition or link fault of `step` is on
// (empty: every link).
std::vector<std::size_t> link_servers(const RunContext& run, const Step& step) {
  if (step.link_servers.empty()) {
    const bool window =
        step.action == Step::Action::kPartition || step.action == Step::Action::kLinkFault;
    return window ? std::vector<std::size_t>{} : run.call_links();
  }
  std::vector<std::size_t> servers;
  for (const std::string& name : step.link_servers) {
    servers.push_back(run.scenario().topology->server_index(name));
  }
  return servers;
}

// LinkFaultScope: the link fault of an acquire or release step, armed before the call sends its
// first command. A delayed command is held by the proxy until its time or its conditions come,
// watched by a thread of its own (the client's thread is blocked in the call); like a late
// packet it reaches the server then even if the client gave up on it (a timeout), and the step
// ends only after that.
class LinkFaultScope {
 public:
  LinkFaultScope(RunContext& run, DriverClient& client, const Step& step) {
    const auto index = static_cast<std::size_t>(client.index());
    const std::vector<std::size_t> links = link_servers(run, step);
    if (step.link_fault == LinkFault::kLoseReply) run.nemesis().lose_next_reply(index, links);
    if (step.link_fault != LinkFault::kDelay) return;
    run.nemesis().hold_next_command(index, links);
    watcher_ = Thread(run.runtime().threads(), [&run, &client, &step, index, links] {
      const std::unique_ptr<Connection> observer = run.admin_connection();
      if (step.delay_until.empty()) {
        run.pause(ms_to_ns(step.delay_ms));
      } else if (!wait_for_conditions(run, *observer, step.delay_until,
                                      ms_to_ns(step.delay_max_ms)) &&
                 !run.should_stop()) {
        run.note(client.name() + " (" + step.id + "): delayed the full " +
                 std::to_string(step.delay_max_ms) + " ms; never saw " +
                 describe_conditions(step.delay_until));
      }
      run.nemesis().forward_held(index, links);
    });
  }
  ~LinkFaultScope() { watcher_.join(); }
  LinkFaultScope(const LinkFaultScope&) = delete;
  LinkFaultScope& operator=(const LinkFaultScope&) = delete;

 private:
  Thread watcher_;
};

// LinkFaultWindow: the window of a link fault step (a kind with a LinkFaultType, such as
// drop_commands). It opens on the client's thread and is closed by a thread of its own after
// work_ms, or once `until` holds (at most max_ms), so that the client's next steps run inside it:
// a window on a client that waits for it to end would fault nothing but its renewal. The step is
// done when the window closes. The destructor waits for the close.
class LinkFaultWindow {
 public:
  LinkFaultWindow(RunContext& run, const DriverClient& client, const Step& step,
                  std::size_t step_index) {
    const auto index = static_cast<std::size_t>(client.index());
    const std::vector<std::size_t> links = link_servers(run, step);
    run.nemesis().open_link_fault(index, step.link_fault_kind, *step.link_fault_settings, links);
    closer_ = Thread(
        run.runtime().threads(),
        [&run, &step, who = client.name() + " (" + step.id + ")", index, links, step_index] {
          if (step.until.empty()) {
            run.pause(ms_to_ns(step.work_ms));
          } else {
            const std::unique_ptr<Connection> observer = run.admin_connection();
            if (!wait_for_conditions(run, *observer, step.until, ms_to_ns(step.max_ms)) &&
                !run.should_stop()) {
              run.note(who + ": " + std::string(traits(step.link_fault_kind).word) + " the full " +
                       std::to_string(step.max_ms) + " ms; never saw " +
                       describe_conditions(step.until));
            }
          }
          run.nemesis().close_link_fault(index, step.link_fault_kind, links);
          mark_done(run, step_index);
        });
  }
  ~LinkFaultWindow() { closer_.join(); }
  LinkFaultWindow(const LinkFaultWindow&) = delete;
  LinkFaultWindow& operator=(const LinkFaultWindow&) = delete;

 private:
  Thread closer_;
};

// after_call: a crash_at point the variant never reached means "crash right after the call".
void after_call(RunContext& run, DriverClient& client, const Step& step, const CallFaults& faults,
                const std::string& who) {
  if (!step.crash_at.empty() && !faults.reached && !client.crashed()) {
    run.note(who + ": the variant has no checkpoint \"" + step.crash_at +
             "\"; crashed right after the call instead");
    client.crash();
  }
}

// ScriptedServerFaultHost: what a server fault step's kind may do, through the run's nemesis,
// which records each fault event; the step's window is waited out on the nemesis's thread.
class ScriptedServerFaultHost final : public ServerFaultHost {
 public:
  ScriptedServerFaultHost(RunContext& run, const Step& step, std::string who)
      : run_(run), nemesis_(run.nemesis()), step_(step), who_(std::move(who)) {}

  std::string kill(std::size_t server) override { return nemesis_.kill_server(server); }
  std::string restart(std::size_t server) override { return nemesis_.restart_server(server); }
  std::string pause(std::size_t server) override { return nemesis_.pause_server(server); }
  std::string resume(std::size_t server) override { return nemesis_.resume_server(server); }
  std::string shift_clock(std::size_t server, std::int64_t ahead_ms) override {
    return nemesis_.clock_jump(server, ahead_ms);
  }
  std::string cut_replication(std::size_t replica) override {
    return nemesis_.cut_replication(replica);
  }
  std::string heal_replication(std::size_t replica) override {
    return nemesis_.heal_replication(replica);
  }
  std::string promote(std::size_t replica) override { return nemesis_.promote(replica); }
  std::string wait_for_failover(std::int64_t max_ms) override {
    return nemesis_.failover(max_ms, [this] { return run_.should_stop(); });
  }
  std::string cluster_failover(std::size_t replica, std::string_view mode,
                               std::int64_t max_ms) override {
    return nemesis_.cluster_failover(replica, mode, max_ms);
  }
  std::string migrate_slot_start(std::size_t from, std::size_t to) override {
    return nemesis_.migrate_slot_start(from, to);
  }
  std::string migrate_slot_finish(std::size_t from, std::size_t to) override {
    return nemesis_.migrate_slot_finish(from, to);
  }
  std::string partition(std::size_t server) override { return nemesis_.partition_server(server); }
  std::string heal_partition(std::size_t server) override {
    return nemesis_.heal_server_partition(server);
  }
  std::size_t server_index(std::string_view name) const override {
    return run_.request().topology->spec().server_index(std::string(name));
  }
  void hold_window(std::string_view doing) override {
    // An `open` condition on the step holds while its window is held.
    const auto index = static_cast<std::size_t>(&step_ - run_.scenario().steps.data());
    LOCKSIM_ASSERT(index < run_.step_window_open.size());
    const auto set_open = [this, index](bool open) {
      {
        std::lock_guard<std::mutex> lock(run_.mutex);
        run_.step_window_open[index] = open;
      }
      run_.notify_changed();
    };
    set_open(true);
    struct Close {
      std::function<void()> close;
      ~Close() { close(); }
    } closing{[&set_open] { set_open(false); }};
    if (step_.until.empty()) {
      run_.pause(ms_to_ns(step_.work_ms));
      return;
    }
    const std::unique_ptr<Connection> observer = run_.admin_connection();
    if (!wait_for_conditions(run_, *observer, step_.until, ms_to_ns(step_.max_ms)) &&
        !run_.should_stop()) {
      run_.note(who_ + ": " + std::string(doing) + " " + step_.server + " the full " +
                std::to_string(step_.max_ms) + " ms; never saw " +
                describe_conditions(step_.until));
    }
  }

 private:
  RunContext& run_;
  Nemesis& nemesis_;
  const Step& step_;
  std::string who_;
};

// execute_server_fault: one server fault, on the nemesis's own thread: its kind runs it.
void execute_server_fault(RunContext& run, const Step& step) {
  const Topology& topology = *run.request().topology;
  const std::size_t server = step.server.empty() ? 0 : topology.spec().server_index(step.server);
  const std::string who = "nemesis (" + step.id + ")";
  ScriptedServerFaultHost host(run, step, who);
  const std::string error = step.server_fault->run(host, server);
  if (!error.empty() && run.should_stop()) {
    // Cut short by what stopped the run (Ctrl-C, a server that died): that is what its history
    // and reports say; the fault's own failure is a consequence, not a harness failure.
    run.note(who + ": the server fault was cut short as the run stopped: " + error);
  } else if (!error.empty()) {
    // The fault could not be done as scripted: the run cannot show what it meant to.
    run.fail_harness(who + ": the server fault failed: " + error);
  }
}

void execute(RunContext& run, DriverClient& client, const Step& step) {
  const Scenario& scenario = run.scenario();
  const std::string who = client.name() + " (" + step.id + ")";
  if (client.crashed()) {
    run.note(who + ": skipped, " + client.name() + " has crashed");
    return;
  }
  switch (step.action) {
    case Step::Action::kAcquire: {
      const LockVariant& variant = run.request().variant;
      // A read-write lock's client that holds it may ask again (a second hold, or an upgrade).
      const bool nested = client.holding() && (variant.reentrant() || variant.read_write());
      if (client.holding() && !nested) {
        run.note(who + ": skipped, " + client.name() + " already holds the lock");
        return;
      }
      const std::int64_t timeout_ms =
          step.acquire_timeout_ms.value_or(scenario.lock.acquire_timeout_ms);
      CallFaults faults = faults_of(step);
      LinkFaultScope link(run, client, step);
      client.set_acquire_mode(variant.read_write() ? step.mode : LockMode::kExclusive);
      const AcquireStatus status = client.acquire(scenario.lock.key, timeout_ms, &faults);
      if (status == AcquireStatus::kFailed && nested) {
        run.note(who + ": a nested acquire of " + scenario.lock.key + " by its holder was refused");
      } else if (status == AcquireStatus::kFailed) {
        run.note(who + ": could not acquire " + scenario.lock.key +
                 (timeout_ms == 0 ? std::string(": it was held at its single try")
                                  : " within " + std::to_string(timeout_ms) + " ms"));
      } else if (status == AcquireStatus::kIndeterminate) {
        run.note(who + ": acquire outcome unknown (" +
                 (step.cancel_after_ms >= 0
                      ? "cancelled by its caller after " + std::to_string(step.cancel_after_ms) +
                            " ms, or its reply was lost"
                      : std::string("the reply was lost")) +
                 ")");
      } else if (status == AcquireStatus::kCrashed) {
        run.note(who + ": crashed at " + step.crash_at + " inside the acquire");
      }
      after_call(run, client, step, faults, who);
      return;
    }
    case Step::Action::kRelease: {
      // A client whose release was cancelled may try it again.
      const bool unheld = !client.holding() && !client.release_pending();
      if (unheld && !step.finally_release) {
        run.note(who + ": release skipped, " + client.name() + " does not hold the lock");
        return;
      }
      CallFaults faults = faults_of(step);
      LinkFaultScope link(run, client, step);
      if (unheld && !client.release_unheld(scenario.lock.key, &faults)) {
        run.note(who + ": crashed at " + step.crash_at + " inside the release");
      } else if (!unheld && !client.release(step.unsaved_token, &faults)) {
        run.note(who + ": crashed at " + step.crash_at + " inside the release");
      }
      after_call(run, client, step, faults, who);
      return;
    }
    case Step::Action::kExtend: {
      if (!client.holding()) {
        run.note(who + ": extend skipped, " + client.name() + " does not hold the lock");
        return;
      }
      CallFaults faults = faults_of(step);
      LinkFaultScope link(run, client, step);
      client.extend(&faults);
      return;
    }
    case Step::Action::kWork:
      if (!client.holding()) {
        run.note(who + ": work skipped, " + client.name() + " does not hold the lock");
        return;
      }
      if (step.until.empty()) {
        client.record_work(step.work_ms);
        run.pause(ms_to_ns(step.work_ms));
      } else {
        client.record_work(step.max_ms);
        if (!wait_for_conditions(run, client.observer(), step.until, ms_to_ns(step.max_ms)) &&
            !run.should_stop()) {
          run.note(who + ": worked the full " + std::to_string(step.max_ms) + " ms; never saw " +
                   describe_conditions(step.until));
        }
      }
      return;
    case Step::Action::kCrash:
      client.crash();
      return;
    case Step::Action::kPause:
    case Step::Action::kPartition: {
      const auto index = static_cast<std::size_t>(client.index());
      const bool pause = step.action == Step::Action::kPause;
      const std::vector<std::size_t> links = pause ? std::vector<std::size_t>{}
                                                   : link_servers(run, step);
      if (pause) {
        run.nemesis().pause(index);
      } else {
        run.nemesis().partition(index, step.partition_reset, links);
      }
      hold_fault(run, client, step, pause ? "paused" : "cut off");
      if (pause) {
        run.nemesis().resume(index);
      } else {
        run.nemesis().heal(index, links);
      }
      return;
    }
    case Step::Action::kSleep:
      run.pause(ms_to_ns(step.work_ms));
      return;
    case Step::Action::kLinkFault:
      LOCKSIM_ASSERT(false);  // run_scripted_client opens its window (LinkFaultWindow)
      return;
    case Step::Action::kServerFault:
      LOCKSIM_ASSERT(false);  // the nemesis's thread runs these (run_scripted_server_faults)
      return;
    case Step::Action::kRead:
    case Step::Action::kWrite:
      // A job touches the resource only inside its critical section, as the documents' code does.
      if (!client.holding()) {
        run.note(who + ": skipped, " + client.name() + " does not hold the lock");
        return;
      }
      if (step.action == Step::Action::kRead) {
        client.resource_read(step.record_id);
      } else {
        client.resource_write(step.record_id);
      }
      return;
  }
}

}  // namespace

void run_scripted_server_faults(RunContext& run) {
  const std::vector<Step>& steps = run.scenario().steps;
  for (std::size_t index = 0; index < steps.size(); ++index) {
    const Step& step = steps[index];
    if (!Step::server_action(step.action)) continue;
    if (!wait_for_turn(run, index)) {
      run.stopped_early = true;
      return;
    }
    if (!step.wait_for.empty()) {
      const std::unique_ptr<Connection> observer = run.admin_connection();
      if (!wait_for_conditions(run, *observer, step.wait_for, ms_to_ns(step.wait_max_ms))) {
        if (run.should_stop()) {
          run.stopped_early = true;
          return;
        }
        run.note("nemesis (" + step.id + "): started after " + std::to_string(step.wait_max_ms) +
                 " ms without " + describe_conditions(step.wait_for));
      }
    }
    mark_started(run, index);
    execute_server_fault(run, step);
    mark_done(run, index);
    if (run.should_stop()) {
      run.stopped_early = true;
      return;
    }
  }
}

void run_scripted_client(RunContext& run, DriverClient& client) {
  const std::vector<Step>& steps = run.scenario().steps;
  // Declared before the loop: every way out of it waits for the windows to close.
  std::vector<std::unique_ptr<LinkFaultWindow>> windows;
  for (std::size_t index = 0; index < steps.size(); ++index) {
    const Step& step = steps[index];
    if (Step::server_action(step.action) ||
        run.step_client[index] != static_cast<std::size_t>(client.index())) {
      continue;
    }
    if (!wait_for_turn(run, index)) {
      run.stopped_early = true;
      return;
    }
    if (!step.wait_for.empty() &&
        !wait_for_conditions(run, client.observer(), step.wait_for, ms_to_ns(step.wait_max_ms))) {
      if (run.should_stop()) {
        run.stopped_early = true;
        return;
      }
      run.note(client.name() + " (" + step.id + "): started after " +
               std::to_string(step.wait_max_ms) + " ms without " +
               describe_conditions(step.wait_for));
    }
    // A call's step starts when its invoke is recorded, not before: the next client's step,
    // free to go once this one started, then never records its own call first (on a loaded
    // machine this thread can lose the core between the two: a real run showed A's acquire
    // before C's release of the step before it, which the simulator, whose fibers run until
    // they wait, never does). A call that records no invoke (a crash before it) starts after it.
    const bool call = step.action == Step::Action::kAcquire ||
                      step.action == Step::Action::kRelease ||
                      step.action == Step::Action::kExtend;
    ClientLog& log = run.recorder().log(static_cast<std::size_t>(client.index()));
    if (call) {
      log.on_next_invoke([&run, index] { mark_started(run, index); });
    } else {
      mark_started(run, index);
    }
    if (step.action == Step::Action::kLinkFault && !client.crashed()) {
      windows.push_back(std::make_unique<LinkFaultWindow>(run, client, step, index));
    } else {
      if (step.action == Step::Action::kLinkFault) {
        run.note(client.name() + " (" + step.id + "): skipped, " + client.name() + " has crashed");
      } else {
        execute(run, client, step);
      }
      if (call) {
        log.on_next_invoke({});
        mark_started_once(run, index);
      }
      mark_done(run, index);
    }
    if (run.should_stop()) {
      run.stopped_early = true;
      return;
    }
  }
}

}  // namespace locksim::driver_internal
