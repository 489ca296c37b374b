// file_size_limit.h: message_under_file_size_limit, to test what a writer does on a full disk.
//
// Runs `write` in a forked child whose RLIMIT_FSIZE is `limit_bytes` and which ignores SIGXFSZ, so
// a write past the limit fails with EFBIG ("File too large") instead of killing the process, the
// way a full disk fails with ENOSPC. Returns the message of the exception `write` threw, or
// "no exception".
//
//   const std::string message = message_under_file_size_limit(4096, [&] { write_big(path); });
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <exception>
#include <functional>
#include <string>

namespace locksim::test_support {

inline std::string message_under_file_size_limit(rlim_t limit_bytes,
                                                 const std::function<void()>& write) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) return "pipe failed";
  const pid_t child = fork();
  if (child < 0) return "fork failed";
  if (child == 0) {
    close(pipe_ends[0]);
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{limit_bytes, limit_bytes};
    setrlimit(RLIMIT_FSIZE, &limit);
    std::string message = "no exception";
    try {
      write();
    } catch (const std::exception& error) {
      message = error.what();
    }
    const ssize_t ignored = ::write(pipe_ends[1], message.data(), message.size());
    (void)ignored;
    _exit(0);
  }
  close(pipe_ends[1]);
  std::string message;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_ends[0], buffer, sizeof buffer)) > 0;) {
    message.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_ends[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status)) return "the child died (status " + std::to_string(status) + ")";
  return message;
}

}  // namespace locksim::test_support
