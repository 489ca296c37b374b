#include "sim/stats/contention.h"

#include <algorithm>
#include <map>

namespace locksim {

double jain_index(const std::vector<std::int64_t>& counts) {
  double sum = 0;
  double squares = 0;
  for (const std::int64_t c : counts) {
    sum += static_cast<double>(c);
    squares += static_cast<double>(c) * static_cast<double>(c);
  }
  if (counts.empty() || squares == 0) return 0;
  return sum * sum / (static_cast<double>(counts.size()) * squares);
}

namespace {

struct PendingAcquire {
  bool active = false;
  Nanos start_ns = 0;  // intended start, else the invoke
  KeyId key = 0;
};

struct KeyState {
  int waiting = 0;           // clients with an acquire pending on this key
  int inside = 0;            // clients inside (more than one only in a violation)
  Nanos busy_since_ns = -1;  // when `inside` last went from 0 to 1
  Nanos last_exit_ns = -1;   // the last exit, -1: none yet
  int last_exit_client = -1;
  bool contended_exit = false;  // someone else was waiting at the last exit
  Nanos held_ns = 0;            // inside the measured window
  bool used = false;
  Nanos holders_since_ns = 0;  // when `inside` last changed
  double holder_ns = 0;        // the integral of `inside` over the measured window
};

Nanos overlap(Nanos a, Nanos b, Nanos begin, Nanos end) {
  return std::max<Nanos>(0, std::min(b, end) - std::max(a, begin));
}

}  // namespace

ContentionMetrics contention_metrics(const History& history, Nanos begin_ns, Nanos end_ns) {
  ContentionMetrics m;
  end_ns = std::max(end_ns, begin_ns);
  m.seconds = static_cast<double>(end_ns - begin_ns) / 1e9;
  const std::size_t clients = history.clients.size();
  std::vector<PendingAcquire> pending(clients);
  std::vector<bool> participant(clients, false);
  std::vector<std::int64_t> per_client(clients, 0);
  std::map<KeyId, KeyState> keys;
  std::int64_t wasted = 0;
  std::vector<std::int64_t> inside_key(clients, -1);  // the key each client is inside, -1: none
  const auto inside = [&](Nanos t) { return t >= begin_ns && t < end_ns; };
  // count_holders: `k`'s holders up to `t`, before `inside` changes at `t`.
  const auto count_holders = [&](KeyState& k, Nanos t) {
    k.holder_ns += static_cast<double>(k.inside) *
                   static_cast<double>(overlap(k.holders_since_ns, t, begin_ns, end_ns));
    k.holders_since_ns = t;
  };
  bool window_open = false;  // the holders at the window's start are counted
  const auto leave = [&](KeyState& k, Nanos t) {
    if (k.inside == 0) return;
    count_holders(k, t);
    if (--k.inside > 0) return;
    const Nanos held = overlap(k.busy_since_ns, t, begin_ns, end_ns);
    k.held_ns += held;
    if (held > 0) k.used = true;
  };

  for (const Event& e : history.events) {
    if (!window_open && e.time_ns >= begin_ns) {
      window_open = true;
      for (const auto& [id, k] : keys) m.most_holders = std::max(m.most_holders, k.inside);
    }
    if (e.client < 0 || static_cast<std::size_t>(e.client) >= clients) continue;
    const auto c = static_cast<std::size_t>(e.client);
    switch (e.f) {
      case Op::kAcquire: {
        PendingAcquire& p = pending[c];
        if (e.type == EventType::kInvoke) {
          participant[c] = true;
          if (p.active) --keys[p.key].waiting;  // an acquire never completed (should not happen)
          const Nanos intended = e.schedule().intended_ns;
          p = {true, intended >= 0 ? std::min(intended, e.time_ns) : e.time_ns, e.key};
          ++keys[e.key].waiting;
          break;
        }
        if (!p.active) break;
        p.active = false;
        --keys[p.key].waiting;
        if (!inside(e.time_ns)) break;
        const Nanos waited = e.time_ns - p.start_ns;
        m.longest_wait_ns = std::max(m.longest_wait_ns, waited);
        const std::int32_t attempts = e.acquire().attempts;
        if (e.type == EventType::kOk) {
          ++m.acquisitions;
          ++per_client[c];
          m.latency_ns.record(waited);
          if (history.read_write && e.mode != LockMode::kRead) {
            ++m.write_acquisitions;
            m.write_latency_ns.record(waited);
          }
          if (attempts > 1) wasted += attempts - 1;
        } else {
          ++m.acquires_failed;
          if (attempts > 0) wasted += attempts;
        }
        break;
      }
      case Op::kEnter: {
        KeyState& k = keys[e.key];
        inside_key[c] = static_cast<std::int64_t>(e.key);
        if (k.last_exit_ns >= 0 && k.contended_exit && inside(e.time_ns)) {
          ++m.contended_handoffs;
          m.handoff_gap_ns.record(e.time_ns - k.last_exit_ns);
          if (k.last_exit_client == e.client) ++m.barges;
        }
        k.contended_exit = false;  // one handoff per exit
        count_holders(k, e.time_ns);
        if (k.inside++ == 0) k.busy_since_ns = e.time_ns;
        if (inside(e.time_ns)) m.most_holders = std::max(m.most_holders, k.inside);
        break;
      }
      case Op::kExit: {
        KeyState& k = keys[e.key];
        inside_key[c] = -1;
        leave(k, e.time_ns);
        k.last_exit_ns = e.time_ns;
        k.last_exit_client = e.client;
        k.contended_exit = k.waiting > 0;
        break;
      }
      case Op::kCrash: {
        // A dead holder is no longer inside (its lease may keep others out: that is the
        // checker's business, not a busy lock).
        if (inside_key[c] >= 0) leave(keys[static_cast<KeyId>(inside_key[c])], e.time_ns);
        inside_key[c] = -1;
        PendingAcquire& p = pending[c];
        if (p.active) {
          p.active = false;
          --keys[p.key].waiting;
        }
        break;
      }
      default:
        break;
    }
  }
  // Acquires still pending at the window's end count for the longest wait.
  for (const PendingAcquire& p : pending) {
    if (p.active && p.start_ns < end_ns) {
      m.longest_wait_ns = std::max(m.longest_wait_ns, end_ns - p.start_ns);
    }
  }
  // Windows still open at the end of the history are held until the window's end.
  int used_keys = 0;
  double held = 0;
  if (!window_open) {
    for (const auto& [id, k] : keys) m.most_holders = std::max(m.most_holders, k.inside);
  }
  double holder_ns = 0;
  for (auto& [id, k] : keys) {
    (void)id;
    count_holders(k, end_ns);
    if (k.inside > 0) {
      const Nanos o = overlap(k.busy_since_ns, end_ns, begin_ns, end_ns);
      k.held_ns += o;
      if (o > 0) k.used = true;
    }
    if (!k.used) continue;
    ++used_keys;
    held += static_cast<double>(k.held_ns);
    holder_ns += k.holder_ns;
  }
  const double window = static_cast<double>(end_ns - begin_ns);
  m.utilisation = used_keys == 0 || window == 0 ? 0 : held / (window * used_keys);
  m.mean_holders = used_keys == 0 || window == 0 ? 0 : holder_ns / (window * used_keys);
  m.throughput_per_s = m.seconds > 0 ? static_cast<double>(m.acquisitions) / m.seconds : 0;
  m.barging_rate = m.contended_handoffs > 0
                       ? static_cast<double>(m.barges) / static_cast<double>(m.contended_handoffs)
                       : 0;
  m.wasted_attempts_per_acquisition =
      m.acquisitions > 0 ? static_cast<double>(wasted) / static_cast<double>(m.acquisitions) : 0;
  for (std::size_t c = 0; c < clients; ++c) {
    if (participant[c]) m.acquisitions_per_client.push_back(per_client[c]);
  }
  m.jain = jain_index(m.acquisitions_per_client);
  if (!m.acquisitions_per_client.empty() && m.acquisitions > 0) {
    const auto [lo, hi] = std::minmax_element(m.acquisitions_per_client.begin(),
                                              m.acquisitions_per_client.end());
    m.starved_clients = static_cast<int>(std::count(m.acquisitions_per_client.begin(),
                                                    m.acquisitions_per_client.end(), 0));
    m.max_min_share = *lo == 0 ? 0 : static_cast<double>(*hi) / static_cast<double>(*lo);
  }
  return m;
}

}  // namespace locksim
