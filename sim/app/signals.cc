#include "sim/app/signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ctime>
#include <optional>
#include <thread>

#include "sim/core/clock.h"
#include "sim/redis/server.h"

namespace locksim {
namespace {

std::atomic<pid_t> server_pid{-1};

// A second signal only quits at once when it comes this long after the first.
constexpr Nanos kSecondSignalGraceNs = ms_to_ns(2000);
// A stop request not honoured this long after the first signal quits at once, as a second signal
// would: something cannot stop (a thread blocked for ever), and waiting longer would leave only
// SIGKILL. Explore, run --backend sim and audit end well within 2 s (tests/cli/explore_test.sh).
constexpr Nanos kStopDeadlineNs = ms_to_ns(10'000);

void write_stderr(const char* text, std::size_t length) {
  const ssize_t ignored = ::write(STDERR_FILENO, text, length);
  (void)ignored;
}

// quit_now: kills the private server and exits 130 at once.
[[noreturn]] void quit_now(const char* text, std::size_t length) {
  write_stderr(text, length);
  const pid_t pid = server_pid.load();
  if (pid > 0) kill_server_now(pid);
  _exit(130);
}

}  // namespace

void set_server_pid_for_signals(pid_t pid) { server_pid.store(pid); }

void install_signal_handling(StopSignal& stop) {
  // A shell starts background jobs with SIGINT ignored, and an ignored signal is discarded
  // before sigwait can see it: take SIGINT and SIGTERM back. SIGHUP stays ignored under nohup.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  // A write to a connection the other end closed (a killed server, a worker gone) is an EPIPE
  // error that the connection code reports, never a signal that ends locksim.
  signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  struct sigaction hangup {};
  if (sigaction(SIGHUP, nullptr, &hangup) == 0 && hangup.sa_handler != SIG_IGN) {
    sigaddset(&set, SIGHUP);
  }
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, &stop] {
    int received = 0;
    std::optional<RunClock> since_first;  // started by the first signal
    while (true) {
      if (!since_first) {
        if (sigwait(&set, &received) != 0) continue;
      } else {
        // After the first signal, wait for a second one at most until the stop's deadline.
        const Nanos left = std::max<Nanos>(kStopDeadlineNs - since_first->now_ns(), 0);
        const timespec timeout{static_cast<time_t>(left / 1'000'000'000),
                               static_cast<long>(left % 1'000'000'000)};
        received = sigtimedwait(&set, nullptr, &timeout);
        if (received < 0 && errno == EAGAIN) {
          static constexpr char kDeadline[] =
              "\nlocksim: still not stopped 10 s after the signal: quitting now (the current "
              "run's reports may be incomplete)\n";
          quit_now(kDeadline, sizeof kDeadline - 1);
        }
        if (received < 0) continue;  // EINTR
      }
      if (!since_first) {
        since_first.emplace();
        static constexpr char kFirst[] =
            "\nlocksim: stopping: finishing the current run and writing its reports "
            "(press Ctrl-C again after 2 s to quit at once)\n";
        write_stderr(kFirst, sizeof kFirst - 1);
        stop.request();
      } else if (since_first->now_ns() < kSecondSignalGraceNs) {
        // GNU timeout signals locksim and then its process group: two signals at once are one
        // request, and quitting on the second would lose the reports the first one asked for.
        static constexpr char kWithinGrace[] =
            "\nlocksim: already stopping (a signal within 2 s of the first is not a second "
            "request)\n";
        write_stderr(kWithinGrace, sizeof kWithinGrace - 1);
      } else {
        static constexpr char kSecond[] = "\nlocksim: quitting now\n";
        quit_now(kSecond, sizeof kSecond - 1);
      }
    }
  }).detach();
}

}  // namespace locksim
