#include "sim/app/signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <thread>

#include "sim/core/clock.h"
#include "sim/redis/server.h"

namespace locksim {
namespace {

std::atomic<pid_t> server_pid{-1};

// A second signal only quits at once when it comes this long after the first.
constexpr Nanos kSecondSignalGraceNs = ms_to_ns(2000);

void write_stderr(const char* text, std::size_t length) {
  const ssize_t ignored = ::write(STDERR_FILENO, text, length);
  (void)ignored;
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
      if (sigwait(&set, &received) != 0) continue;
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
        write_stderr(kSecond, sizeof kSecond - 1);
        const pid_t pid = server_pid.load();
        if (pid > 0) kill_server_now(pid);
        _exit(130);
      }
    }
  }).detach();
}

}  // namespace locksim
