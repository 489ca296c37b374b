#include "sim/simulate/sim_connection.h"

#include <algorithm>
#include <array>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/assert.h"
#include "sim/model/numbers.h"

namespace locksim {

// Route: what a connection's commands in flight share with it, and keep after it is gone (a
// flight may outlive its connection and its link).
struct SimConnection::Route {
  Simulation* simulation = nullptr;
  ModelServer* server = nullptr;
  std::shared_ptr<SimLinkState> link;
  std::shared_ptr<SimServerHost> host;
  SimLinkLatency latency;
  // Each direction keeps its order: a message never overtakes the one sent before it.
  Nanos last_arrival = -1;  // the last command's arrival at the server
  Nanos replies = -1;       // the last reply's arrival at the client
};

// Flight: one command in flight, shared by the waiting fiber and the scheduled steps that carry
// it (which may outlive the wait: a reply that comes after a timeout is dropped). Counted by
// FlightRef (one thread: the simulation's) and recycled: a schedule sends about fifty commands,
// and a flight kept from the last one has its buffers already.
struct SimConnection::Flight {
  std::uint32_t refs = 0;
  std::shared_ptr<Route> route;
  std::uint64_t resets = 0;  // the link's resets when the command was sent
  // The command's words: the caller's own while it waits (the command is sent and, nearly
  // always, run before it stops waiting), copied by own_words() when the caller stops waiting
  // before the command ran (a timeout): their bytes in one buffer, viewed by `words` (kept
  // inline up to kInlineWords). ran: the server is done with them.
  static constexpr std::size_t kInlineWords = 8;
  std::string bytes;
  std::array<std::string_view, kInlineWords> inline_words;
  std::vector<std::string_view> more_words;
  std::span<const std::string_view> words;
  bool ran = false;
  std::uint64_t generation = 0;  // the server's, when the connection was made
  ModelClientId client = 0;
  Nanos due = 0;  // not at the server before (a delay)
  bool drop_reply = false;
  std::uint64_t host_epoch = 0;
  // The waiting side: the reply (or the closed connection) reaches it at reply_at; the fiber is
  // woken for that instant, and no event of its own carries the reply.
  Simulation::FiberId waiter = 0;
  bool abandoned = false;  // the fiber stopped waiting (its timeout)
  // The fiber's timeout: it waits without a timer while the reply is sure to come back before
  // `deadline` (no timer left behind in the queue for every command); `timed` once anything
  // holds, drops or delays the command or its reply (unsure()).
  Nanos deadline = 0;
  bool timed = false;
  Nanos reply_at = -1;
  bool closed = false;
  Reply reply;

  void copy_words(std::span<const std::string_view> args) {
    std::size_t total = 0;
    for (const std::string_view arg : args) total += arg.size();
    bytes.clear();
    bytes.reserve(total);  // the views below point into it: it must not grow after
    for (const std::string_view arg : args) bytes.append(arg);
    std::string_view* out = inline_words.data();
    if (args.size() > kInlineWords) {
      more_words.resize(args.size());
      out = more_words.data();
    }
    std::size_t at = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
      out[i] = std::string_view(bytes).substr(at, args[i].size());
      at += args[i].size();
    }
    words = std::span<const std::string_view>(out, args.size());
  }
  // own_words: the words copied out of the caller's memory, which is about to go.
  void own_words() {
    if (!ran) copy_words(words);
  }
  // recycle: as a new flight, its buffers kept.
  void recycle() {
    route.reset();
    resets = 0;
    bytes.clear();
    more_words.clear();
    words = {};
    ran = false;
    generation = 0;
    client = 0;
    due = 0;
    drop_reply = false;
    host_epoch = 0;
    waiter = 0;
    abandoned = false;
    deadline = 0;
    timed = false;
    reply_at = -1;
    closed = false;
    reply = Reply{};
  }
  bool reset() const { return route->link && route->link->resets != resets; }
  // unsure: the reply may not come back before the deadline: the waiting fiber gets its timer.
  void unsure() {
    if (timed || abandoned) return;
    timed = true;
    route->simulation->add_deadline(waiter, deadline);
  }
  bool server_gone() const {
    const SimServerHost* host = route->host.get();
    return route->server->generation() != generation || !route->server->connected(client) ||
           (host && (host->down || host->epoch != host_epoch));
  }
};

namespace {

using Flight = SimConnection::Flight;
using Route = SimConnection::Route;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kRecycleFlights = false;  // a sanitizer must see each flight allocated and freed
#else
constexpr bool kRecycleFlights = true;
#endif

// The flights kept for reuse, per thread (a simulation runs on one). pool_gone: the thread's
// pool was destroyed; a flight freed after that is deleted at once.
thread_local bool flight_pool_gone = false;
struct FlightPool {
  static constexpr std::size_t kKeep = 64;
  std::vector<Flight*> free;
  FlightPool() { free.reserve(kKeep); }
  ~FlightPool() {
    flight_pool_gone = true;
    for (Flight* flight : free) delete flight;
  }
};
FlightPool& flight_pool() {
  thread_local FlightPool pool;
  return pool;
}

// FlightRef: a counted reference to a Flight (not atomic: one simulation, one thread); the last
// one gives the flight back to the pool.
class FlightRef {
 public:
  static FlightRef make() {
    Flight* flight = nullptr;
    if (kRecycleFlights && !flight_pool_gone && !flight_pool().free.empty()) {
      flight = flight_pool().free.back();
      flight_pool().free.pop_back();
    } else {
      flight = new Flight;
    }
    return FlightRef(flight);
  }
  FlightRef(const FlightRef& other) noexcept : flight_(other.flight_) { ++flight_->refs; }
  FlightRef(FlightRef&& other) noexcept : flight_(std::exchange(other.flight_, nullptr)) {}
  FlightRef& operator=(const FlightRef&) = delete;
  FlightRef& operator=(FlightRef&&) = delete;
  ~FlightRef() {
    if (flight_ == nullptr || --flight_->refs > 0) return;
    if (kRecycleFlights && !flight_pool_gone && flight_pool().free.size() < FlightPool::kKeep) {
      flight_->recycle();
      flight_pool().free.push_back(flight_);
    } else {
      delete flight_;
    }
  }
  Flight* operator->() const { return flight_; }

 private:
  explicit FlightRef(Flight* flight) : flight_(flight) { flight_->refs = 1; }
  Flight* flight_;
};

}  // namespace

SimConnection::SimConnection(Simulation& simulation, ModelServer& server, Endpoint endpoint,
                             ConnectionOptions options, SimLinkLatency latency,
                             std::shared_ptr<SimLinkState> link,
                             std::shared_ptr<SimServerHost> host)
    : simulation_(simulation),
      server_(server),
      endpoint_(std::move(endpoint)),
      options_(options),
      link_(std::move(link)),
      host_(std::move(host)),
      route_(std::make_shared<Route>()) {
  route_->simulation = &simulation_;
  route_->server = &server_;
  route_->link = link_;
  route_->host = host_;
  route_->latency = latency;
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

// Blocking: a command Redis would keep until something happens or its timeout passes, which the
// model answered at once: a WAIT answered with fewer replicas than asked for, a BLPOP answered nil
// (every list empty). The connection asks again every 100 µs until the answer changes or the
// deadline (docs/model.md).
struct Blocking {
  enum class Kind { kWait, kBlpop } kind = Kind::kWait;
  std::int64_t replicas = 0;  // kWait
  Nanos deadline = 0;
};
constexpr Nanos kWaitRecheckNs = 100'000;
// A timeout of 0 blocks for ever; bounded here at an hour of virtual time.
constexpr std::int64_t kForeverMs = 3'600'000;

bool named(std::string_view word, std::string_view lower_name) {
  if (word.size() != lower_name.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if ((word[i] | 0x20) != lower_name[i]) return false;
  }
  return true;
}

std::optional<Blocking> blocking(std::span<const std::string_view> argv, const Reply& reply,
                                 Nanos now) {
  if (argv.empty()) return std::nullopt;
  if (argv.size() >= 3 && reply.type == Reply::Type::kNil && named(argv[0], "blpop")) {
    std::int64_t timeout_ms = 0;
    if (model_detail::parse_timeout_seconds(argv.back(), timeout_ms) !=
        model_detail::TimeoutParse::kOk) {
      return std::nullopt;  // the model answered the error already
    }
    return Blocking{Blocking::Kind::kBlpop, 0,
                    now + ms_to_ns(timeout_ms == 0 ? kForeverMs : timeout_ms)};
  }
  if (argv.size() != 3 || reply.type != Reply::Type::kInteger || !named(argv[0], "wait")) {
    return std::nullopt;
  }
  Blocking wait;
  std::int64_t timeout_ms = 0;
  try {
    wait.replicas = std::stoll(std::string(argv[1]));
    timeout_ms = std::stoll(std::string(argv[2]));
  } catch (const std::exception&) {
    return std::nullopt;  // the model answered the error already
  }
  if (reply.integer >= wait.replicas) return std::nullopt;
  wait.deadline = now + ms_to_ns(timeout_ms == 0 ? kForeverMs : timeout_ms);
  return wait;
}

// done_blocking: the answer to give now, rather than to ask again.
bool done_blocking(const Blocking& call, const Reply& reply, Nanos now) {
  if (now >= call.deadline) return true;
  if (call.kind == Blocking::Kind::kBlpop) return reply.type != Reply::Type::kNil;
  return reply.type != Reply::Type::kInteger || reply.integer >= call.replicas;
}

// hiredis (0.14, what a real run's connections read with) reads arrays nested at most 8 deep: a
// ninth level is its protocol error "No support for nested multi bulk replies with depth > 7",
// and the connection is of no use after it.
constexpr int kHiredisArrayDepth = 8;
constexpr std::string_view kHiredisTooDeep =
    "No support for nested multi bulk replies with depth > 7";

// too_deep: whether `reply` nests arrays deeper than `levels` (looked at no deeper than that).
bool too_deep(const Reply& reply, int levels) {
  if (reply.type != Reply::Type::kArray) return false;
  if (levels == 0) return true;
  for (const Reply& element : reply.elements) {
    if (too_deep(element, levels - 1)) return true;
  }
  return false;
}

Nanos draw_hop(Simulation& simulation, const SimLinkLatency& latency) {
  return latency.min_ns >= latency.max_ns ? latency.min_ns
                                          : simulation.rng().scaled(latency.min_ns, latency.max_ns);
}

}  // namespace

namespace {

// answer: the server's reply (or the news that it closed the connection) starts back, through
// the link, which may hold it; it reaches the waiting fiber a hop later, in order. (`reply` is
// moved into the flight once: a reply passed by value was moved twice.)
void answer(const FlightRef& flight, Reply&& reply, bool closed) {
  // The reply waits in the flight (the waiting fiber reads it only once reply_at is set, below),
  // so the step that carries it back captures the flight alone and stays small.
  flight->reply = std::move(reply);
  flight->closed = closed;
  auto back = [flight] {
    Route& route = *flight->route;
    Simulation& simulation = *route.simulation;
    const Nanos at =
        std::max(simulation.now() + draw_hop(simulation, route.latency), route.replies + 1);
    route.replies = at;
    if (flight->abandoned) return;
    flight->reply_at = at;
    if (at > flight->deadline) flight->unsure();  // the timeout comes first
    simulation.wake(flight->waiter, at - simulation.now());
  };
  if (flight->route->link) {
    if (flight->route->link->faults.holding()) flight->unsure();
    flight->route->link->pass(std::move(back));
  } else {
    back();
  }
}

// again: a blocking command asked again until its answer changes or its timeout passes.
void again(const FlightRef& flight, Blocking call) {
  Simulation& simulation = *flight->route->simulation;
  if (flight->server_gone()) {
    answer(flight, Reply{}, true);
    return;
  }
  Reply reply = flight->route->server->execute(flight->client, flight->words, simulation.now());
  if (done_blocking(call, reply, simulation.now())) {
    flight->ran = true;
    if (!flight->drop_reply) answer(flight, std::move(reply), false);
    return;
  }
  simulation.at(std::min(simulation.now() + kWaitRecheckNs, call.deadline),
                [flight, call] { again(flight, call); });
}

// arrive: the command at the server; a paused server keeps it until it resumes.
void arrive(const FlightRef& flight) {
  if (flight->reset()) {
    flight->unsure();
    return;
  }
  SimServerHost* host = flight->route->host.get();
  const bool killed = host && (host->down || host->epoch != flight->host_epoch);
  if (host && host->paused && !killed) {
    flight->unsure();
    host->held.push_back([flight] { arrive(flight); });
    return;
  }
  if (flight->server_gone()) {
    // The server dropped the connection (a restart, a kill) before the command came: it runs
    // nothing, and the client sees the connection closed.
    answer(flight, Reply{}, true);
    return;
  }
  Simulation& simulation = *flight->route->simulation;
  Reply reply = flight->route->server->execute(flight->client, flight->words, simulation.now());
  if (const std::optional<Blocking> call = blocking(flight->words, reply, simulation.now())) {
    // WAIT and BLPOP block in Redis; the model answers at once (docs/model.md), so the command is
    // asked again every 100 µs.
    flight->unsure();
    simulation.at(std::min(simulation.now() + kWaitRecheckNs, call->deadline),
                  [flight, call = *call] { again(flight, call); });
    return;
  }
  flight->ran = true;
  if (flight->drop_reply) {  // it ran; the reply is lost on the way back
    flight->unsure();
    return;
  }
  answer(flight, std::move(reply), false);
}

// travel: the command leaves (the link let it go): it arrives a hop later, in order.
void travel(const FlightRef& flight) {
  if (flight->reset()) {  // the connection was reset meanwhile
    flight->unsure();
    return;
  }
  Route& route = *flight->route;
  Simulation& simulation = *route.simulation;
  const Nanos arrival = std::max({simulation.now() + draw_hop(simulation, route.latency),
                                  flight->due, route.last_arrival + 1});
  route.last_arrival = arrival;
  simulation.at(arrival, [flight] { arrive(flight); });
}

}  // namespace

RedisResult SimConnection::command(std::span<const std::string_view> args) {
  if (!check_open()) return last_error_;
  ++round_trips_;
  const FlightRef flight = FlightRef::make();
  flight->waiter = simulation_.current();
  LOCKSIM_ASSERT(flight->waiter != 0);  // a command waits: only a fiber can send one
  // What the link's faults decide for it (none without a link).
  CommandFate fate;
  fate.due = simulation_.now();
  if (link_) fate = link_->faults.next_command(simulation_.now());
  flight->route = route_;
  flight->resets = resets_;
  const Nanos deadline =
      simulation_.now() + std::chrono::nanoseconds(options_.command_timeout).count();
  flight->deadline = deadline;
  if (fate.drop_command) flight->unsure();
  if (!fate.drop_command) {
    flight->words = args;  // the caller's, until it stops waiting (own_words)
    flight->generation = generation_;
    flight->client = client_;
    flight->due = fate.due;
    flight->drop_reply = fate.drop_reply;
    flight->host_epoch = host_epoch_;
    if (link_ && fate.held) {
      flight->unsure();
      link_->held_commands.push_back([flight] { travel(flight); });
    } else if (link_) {
      if (link_->faults.holding()) flight->unsure();
      link_->pass([flight] { travel(flight); });
    } else {
      travel(flight);
    }
  }
  if (link_) link_->wait_for_reply(flight->waiter);
  bool answered = false;
  while (true) {
    const Nanos now = simulation_.now();
    // A reply on its way counts once it has come, unless a partition reset the link meanwhile.
    if (flight->reply_at >= 0 && now >= flight->reply_at && !flight->closed && !flight->reset()) {
      answered = true;
      break;
    }
    if (now >= deadline || !check_open()) break;
    // Woken early (another wake-up took this one's place): wait on for the reply's instant. A
    // reply sure to come before the deadline wakes the fiber itself (no timer: see Flight).
    const bool coming = flight->reply_at > now;
    const Nanos timeout = flight->timed ? deadline : Simulation::kForever;
    simulation_.park(coming ? std::min(timeout, flight->reply_at) : timeout);
    // Unwound in a destructor (the park returned at once): no reply will come any more.
    if (simulation_.unwinding()) break;
  }
  if (link_) link_->no_longer_waiting(flight->waiter);
  flight->own_words();  // `args` go with this call: a command still on its way keeps a copy
  if (!answered) {
    flight->abandoned = true;
    if (!broken_) fail(RedisErrorKind::kTimeout, "Resource temporarily unavailable");
    return last_error_;
  }
  if (too_deep(flight->reply, kHiredisArrayDepth)) {
    // The command ran; the reply cannot be read, as a real client's cannot.
    fail(RedisErrorKind::kProtocol, std::string(kHiredisTooDeep));
    return last_error_;
  }
  // Made in the caller's place (a named result, beside the other returns, was moved out again:
  // its two strings, at every command).
  if (flight->reply.type == Reply::Type::kError) {
    return RedisResult{RedisErrorKind::kReplyError, flight->reply.str, std::move(flight->reply)};
  }
  return RedisResult{RedisErrorKind::kNone, {}, std::move(flight->reply)};
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
    if (simulation_.unwinding()) return std::nullopt;  // unwound in a destructor: time stands still
  }
}

}  // namespace locksim
