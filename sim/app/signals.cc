#include "sim/app/signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "sim/redis/server.h"

namespace locksim {
namespace {

std::atomic<pid_t> server_pid{-1};

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
    for (int count = 0;; ++count) {
      if (sigwait(&set, &received) != 0) continue;
      if (count == 0) {
        static constexpr char kFirst[] =
            "\nlocksim: stopping: finishing the current run and writing its reports "
            "(press Ctrl-C again to quit at once)\n";
        write_stderr(kFirst, sizeof kFirst - 1);
        stop.request();
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
