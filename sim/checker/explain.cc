#include "sim/checker/explain.h"

#include <cstdio>
#include <vector>

namespace locksim::checker_internal {

std::string format_ms(Nanos ns) {
  // printf's "%.1f" of ns / 1e6, in integers where that is sure to agree: below 10^15 ns the
  // double is within a nanosecond, so only an exact half (x.x5 ms) can round either way, and
  // printf rounds the double's binary value there. Every finding's words are made of these.
  constexpr Nanos kTenth = 100'000;
  if (ns >= 0 && ns < 1'000'000'000'000'000 && ns % kTenth != kTenth / 2) {
    const Nanos tenths = (ns + kTenth / 2) / kTenth;
    std::string text = std::to_string(tenths / 10);
    text += '.';
    text += static_cast<char>('0' + tenths % 10);
    text += " ms";
    return text;
  }
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.1f ms", ns_to_ms(ns));
  return buffer;
}

std::string client_name(const History& history, int client) {
  if (client >= 0 && static_cast<std::size_t>(client) < history.clients.size()) {
    return history.clients[static_cast<std::size_t>(client)];
  }
  return "client#" + std::to_string(client);
}

std::string grant_phrase(const History& history, const ServerGrant& grant) {
  if (grant.of == 0) return "";
  std::string words = "granted by";
  const std::vector<std::string> names = history.granted_servers(grant);
  for (std::size_t i = 0; i < names.size(); ++i) words += (i == 0 ? " " : ", ") + names[i];
  return words + " of " + std::to_string(grant.of);
}

std::string window_end_phrase(HoldWindow::End end, Nanos end_ns) {
  switch (end) {
    case HoldWindow::End::kExit:
      return "until " + format_ms(end_ns);
    case HoldWindow::End::kCrash:
      return "until it crashed at " + format_ms(end_ns);
    case HoldWindow::End::kEndOfHistory:
      return "until the end of the history at " + format_ms(end_ns);
  }
  return "until " + format_ms(end_ns);
}

}  // namespace locksim::checker_internal
