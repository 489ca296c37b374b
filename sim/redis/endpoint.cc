#include "sim/redis/endpoint.h"

#include <charconv>
#include <string>
#include <system_error>

#include "sim/core/error.h"

namespace locksim {
namespace {

constexpr std::string_view kScheme = "redis://";
constexpr std::string_view kExpectedForm = "redis://[[user]:password@]host:port[/db]";

// The user's input with everything up to the last '@' masked, so a password can never be echoed,
// even when the URL is too malformed to tell where the password ends.
std::string masked_input(std::string_view url) {
  const std::size_t at = url.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  const std::size_t scheme_end = url.find("://");
  const std::size_t keep =
      (scheme_end != std::string_view::npos && scheme_end < at) ? scheme_end + 3 : 0;
  return std::string(url.substr(0, keep)) + ":***" + std::string(url.substr(at));
}

[[noreturn]] void fail(std::string_view url, std::string_view reason) {
  throw InputError("invalid Redis URL \"" + masked_input(url) + "\": " + std::string(reason) +
                   "; expected " + std::string(kExpectedForm) +
                   " (port 1..65535, db 0..15), e.g. redis://127.0.0.1:6379/0");
}

// parse_decimal: digits only (no sign, no spaces), within [low, high].
bool parse_decimal(std::string_view text, int low, int high, int& value) {
  if (text.empty() || text.size() > 6) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  int parsed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (error != std::errc() || end != text.data() + text.size()) return false;
  if (parsed < low || parsed > high) return false;
  value = parsed;
  return true;
}

}  // namespace

std::string Endpoint::redacted() const {
  std::string url(kScheme);
  if (!username.empty() || !password.empty()) url += username + ":***@";
  url += host;
  url += ':';
  url += std::to_string(port);
  if (db != 0) {
    url += '/';
    url += std::to_string(db);
  }
  return url;
}

Endpoint parse_redis_url(std::string_view url) {
  if (!url.starts_with(kScheme)) fail(url, "the scheme must be redis://");
  std::string_view rest = url.substr(kScheme.size());

  Endpoint endpoint;
  endpoint.username.clear();
  endpoint.password.clear();
  // The password may itself contain '@' or ':', so the user info ends at the last '@' and the
  // user name at the first ':'.
  if (const std::size_t at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view user_info = rest.substr(0, at);
    const std::size_t colon = user_info.find(':');
    if (colon == std::string_view::npos) {
      fail(url, "credentials must be written as user:password@ or :password@");
    }
    const std::string_view username = user_info.substr(0, colon);
    if (username.find_first_of(" \t\r\n/") != std::string_view::npos) {
      fail(url, "the user name contains characters that are not allowed");
    }
    if (colon + 1 == user_info.size()) fail(url, "the password is empty");
    endpoint.username = std::string(username);
    endpoint.password = std::string(user_info.substr(colon + 1));
    rest = rest.substr(at + 1);
  }

  std::string_view host_port = rest;
  std::string_view db_text;
  bool has_db = false;
  if (const std::size_t slash = rest.find('/'); slash != std::string_view::npos) {
    host_port = rest.substr(0, slash);
    db_text = rest.substr(slash + 1);
    has_db = true;
  }

  const std::size_t colon = host_port.rfind(':');
  if (colon == std::string_view::npos) fail(url, "the port is missing");
  const std::string_view host = host_port.substr(0, colon);
  if (host.empty()) fail(url, "the host is empty");
  if (host.find_first_of(":[]?#") != std::string_view::npos) {
    fail(url, "the host contains characters that are not allowed");
  }
  if (!parse_decimal(host_port.substr(colon + 1), 1, 65535, endpoint.port)) {
    fail(url, "the port must be an integer in 1..65535");
  }
  endpoint.host = std::string(host);

  endpoint.db = 0;
  if (has_db && !parse_decimal(db_text, 0, 15, endpoint.db)) {
    fail(url, "the db must be an integer in 0..15");
  }
  return endpoint;
}

}  // namespace locksim
