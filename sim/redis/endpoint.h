// endpoint.h: Endpoint, where a Redis server is, and parse_redis_url.
//
//   Endpoint e = parse_redis_url("redis://:secret@127.0.0.1:6380/2");  // throws InputError
//   std::cout << e.redacted();  // "redis://:***@127.0.0.1:6380/2": passwords never printed
#pragma once

#include <string>
#include <string_view>

namespace locksim {

struct Endpoint {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string password;  // empty: no AUTH
  int db = 0;

  // redacted: the URL with the password replaced by "***"; safe for logs and reports.
  std::string redacted() const;
};

// parse_redis_url: redis://[:password@]host:port[/db]. Throws InputError on anything else, with a
// message that shows the expected form (and never the password).
Endpoint parse_redis_url(std::string_view url);

}  // namespace locksim
