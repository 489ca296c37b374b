#include "sim/simulate/sim_connection.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/assert.h"

namespace locksim {

// Pending: one command in flight, shared by the waiting fiber and the scheduled delivery (which
// may outlive the wait: a reply that comes after a timeout is dropped).
struct SimConnection::Pending {
  Simulation::FiberId waiter = 0;
  bool answered = false;
  bool abandoned = false;
  Reply reply;
};

SimConnection::SimConnection(Simulation& simulation, ModelServer& server, Endpoint endpoint,
                             ConnectionOptions options, SimLinkLatency latency,
                             std::shared_ptr<SimLinkState> link,
                             std::shared_ptr<SimServerHost> host)
    : simulation_(simulation),
      server_(server),
      endpoint_(std::move(endpoint)),
      options_(options),
      latency_(latency),
      link_(std::move(link)),
      host_(std::move(host)) {
  reconnect();
}

SimConnection::~SimConnection() { close(); }

RedisResult SimConnection::reconnect() {
  if (!broken_ && server_.connected(client_)) server_.disconnect(client_);
  if (link_ && link_->faults.resetting()) {
    // A resetting partition closes every new connection at once.
    fail(RedisErrorKind::kClosed, "Connection reset by peer");
    return last_error_;
  }
  if (host_ && host_->down) {
    fail(RedisErrorKind::kRefused, "Connection refused");  // a killed server
    return last_error_;
  }
  if (link_) resets_ = link_->resets;
  if (host_) host_epoch_ = host_->epoch;
  client_ = server_.connect();
  generation_ = server_.generation();
  broken_ = false;
  last_error_ = RedisResult{};
  return RedisResult{};
}

void SimConnection::close() {
  if (!broken_ && server_.connected(client_)) server_.disconnect(client_);
  fail(RedisErrorKind::kClosed, "connection closed by the client");
}

void SimConnection::fail(RedisErrorKind kind, std::string message) {
  broken_ = true;
  last_error_ = RedisResult{kind, std::move(message), {}};
}

bool SimConnection::check_open() {
  if (broken_) return false;
  if (link_ && link_->resets != resets_) {
    fail(RedisErrorKind::kClosed, "Connection reset by peer");  // a partition that resets
    return false;
  }
  if (server_.generation() != generation_ || !server_.connected(client_) ||
      (host_ && host_->epoch != host_epoch_)) {
    fail(RedisErrorKind::kClosed, "Server closed the connection");  // hiredis's words for EOF
    return false;
  }
  return true;
}

namespace {

// WaitCall: a WAIT the model answered with fewer replicas than asked for, still inside its
// timeout: the connection asks again until enough acknowledged or the deadline.
struct WaitCall {
  std::int64_t replicas = 0;
  Nanos deadline = 0;
};
constexpr Nanos kWaitRecheckNs = 100'000;

std::optional<WaitCall> wait_call(const std::vector<std::string>& argv, const Reply& reply,
                                  Nanos now) {
  if (argv.size() != 3 || reply.type != Reply::Type::kInteger) return std::nullopt;
  const std::string& name = argv[0];
  if (name.size() != 4 || (name[0] | 0x20) != 'w' || (name[1] | 0x20) != 'a' ||
      (name[2] | 0x20) != 'i' || (name[3] | 0x20) != 't') {
    return std::nullopt;
  }
  WaitCall wait;
  std::int64_t timeout_ms = 0;
  try {
    wait.replicas = std::stoll(argv[1]);
    timeout_ms = std::stoll(argv[2]);
  } catch (const std::exception&) {
    return std::nullopt;  // the model answered the error already
  }
  if (reply.integer >= wait.replicas) return std::nullopt;
  // WAIT n 0 blocks for ever; bounded here at an hour of virtual time.
  wait.deadline = now + ms_to_ns(timeout_ms == 0 ? 3'600'000 : timeout_ms);
  return wait;
}

Nanos draw_hop(Simulation& simulation, const SimLinkLatency& latency) {
  return latency.min_ns >= latency.max_ns
             ? latency.min_ns
             : simulation.rng().uniform(latency.min_ns, latency.max_ns);
}

}  // namespace

Nanos SimConnection::hop() { return draw_hop(simulation_, latency_); }

RedisResult SimConnection::command(std::span<const std::string_view> args) {
  if (!check_open()) return last_error_;
  ++round_trips_;
  auto pending = std::make_shared<Pending>();
  pending->waiter = simulation_.current();
  LOCKSIM_ASSERT(pending->waiter != 0);  // a command waits: only a fiber can send one
  // What the link's faults decide for it (none without a link).
  CommandFate fate;
  fate.due = simulation_.now();
  if (link_) fate = link_->faults.next_command(simulation_.now());
  if (!fate.drop_command) {
    // The delivery outlives neither the server nor the simulation, but may outlive this
    // connection (a command abandoned at its timeout) and its link: it holds only what it needs.
    Simulation* simulation = &simulation_;
    ModelServer* server = &server_;
    std::shared_ptr<SimLinkState> link = link_;
    const std::uint64_t resets = resets_;
    auto last_arrival = last_arrival_;
    auto travel = [simulation, server, link, resets, last_arrival, latency = latency_,
                   replies = replies_, pending,
                   argv = std::vector<std::string>(args.begin(), args.end()),
                   generation = generation_, client = client_, due = fate.due,
                   drop_reply = fate.drop_reply, host = host_, host_epoch = host_epoch_] {
      if (link && link->resets != resets) return;  // the connection was reset meanwhile
      const Nanos arrival =
          std::max({simulation->now() + draw_hop(*simulation, latency), due, *last_arrival + 1});
      *last_arrival = arrival;
      // arrive: the command at the server; a paused server keeps it (itself) until it resumes.
      const auto arrive = [simulation, server, link, resets, latency, replies, pending, argv,
                           generation, client, drop_reply, host,
                           host_epoch](const auto& self) -> void {
        if (link && link->resets != resets) return;
        const auto answer = [simulation, link, resets, latency, replies, pending](Reply reply,
                                                                                  bool closed) {
          auto back = [simulation, link, resets, latency, replies, pending,
                       reply = std::move(reply), closed]() mutable {
            const Nanos at =
                std::max(simulation->now() + draw_hop(*simulation, latency), *replies + 1);
            *replies = at;
            simulation->at(at, [simulation, link, resets, pending, reply = std::move(reply),
                                closed]() mutable {
              if (pending->abandoned || (link && link->resets != resets)) return;
              if (!closed) {
                pending->reply = std::move(reply);
                pending->answered = true;
              }
              simulation->wake(pending->waiter);
            });
          };
          if (link) {
            link->pass(std::move(back));
          } else {
            back();
          }
        };
        const bool killed = host && (host->down || host->epoch != host_epoch);
        if (host && host->paused && !killed) {
          host->held.push_back([self] { self(self); });
          return;
        }
        if (server->generation() != generation || !server->connected(client) || killed) {
          // The server dropped the connection (a restart, a kill) before the command came: it
          // runs nothing, and the client sees the connection closed.
          answer(Reply{}, true);
          return;
        }
        std::vector<std::string_view> views(argv.begin(), argv.end());
        Reply reply = server->execute(client, views, simulation->now());
        if (const std::optional<WaitCall> wait = wait_call(argv, reply, simulation->now())) {
          // WAIT blocks in Redis until enough replicas acknowledged or its timeout passed; the
          // model answers at once (docs/model.md), so it is asked again every 100 µs.
          const auto again = [simulation, server, client, generation, host, host_epoch, argv,
                              wait = *wait, answer, drop_reply](const auto& retry) -> void {
            if (server->generation() != generation || !server->connected(client) ||
                (host && (host->down || host->epoch != host_epoch))) {
              answer(Reply{}, true);
              return;
            }
            const std::vector<std::string_view> words(argv.begin(), argv.end());
            Reply count = server->execute(client, words, simulation->now());
            if (count.type != Reply::Type::kInteger || count.integer >= wait.replicas ||
                simulation->now() >= wait.deadline) {
              if (!drop_reply) answer(std::move(count), false);
              return;
            }
            simulation->at(std::min(simulation->now() + kWaitRecheckNs, wait.deadline),
                           [retry] { retry(retry); });
          };
          simulation->at(std::min(simulation->now() + kWaitRecheckNs, wait->deadline),
                         [again] { again(again); });
          return;
        }
        if (drop_reply) return;  // it ran; the reply is lost on the way back
        answer(std::move(reply), false);
      };
      simulation->at(arrival, [arrive] { arrive(arrive); });
    };
    if (link_ && fate.held) {
      link_->held_commands.push_back(std::move(travel));
    } else if (link_) {
      link_->pass(std::move(travel));
    } else {
      travel();
    }
  }
  const Nanos deadline =
      simulation_.now() + std::chrono::nanoseconds(options_.command_timeout).count();
  if (link_) link_->waiting.insert(pending->waiter);
  while (!pending->answered) {
    if (simulation_.now() >= deadline || !check_open()) break;
    simulation_.park(deadline);
  }
  if (link_) link_->waiting.erase(pending->waiter);
  if (!pending->answered) {
    pending->abandoned = true;
    if (!broken_) fail(RedisErrorKind::kTimeout, "Resource temporarily unavailable");
    return last_error_;
  }
  RedisResult result;
  if (pending->reply.type == Reply::Type::kError) {
    result.error = RedisErrorKind::kReplyError;
    result.message = pending->reply.str;
  }
  result.reply = std::move(pending->reply);
  return result;
}

std::optional<RedisResult> SimConnection::next_message(std::int64_t timeout_ns) {
  const Nanos deadline = simulation_.now() + std::max<std::int64_t>(timeout_ns, 0);
  while (true) {
    if (!check_open()) return last_error_;
    if (std::optional<Reply> message = server_.next_push(client_)) {
      RedisResult result;
      result.reply = std::move(*message);
      return result;
    }
    if (simulation_.now() >= deadline) return std::nullopt;
    simulation_.sleep_until(std::min(deadline, simulation_.now() + kNanosPerMilli));
  }
}

}  // namespace locksim
