// endpoint.h: Endpoint, where a Redis server is and who to log in as, and parse_redis_url.
//
//   Endpoint e = parse_redis_url("redis://:secret@127.0.0.1:6380/2");  // throws InputError
//   std::cout << e.redacted();  // "redis://:***@127.0.0.1:6380/2": passwords never printed
//   Endpoint u = parse_redis_url("redis://app:secret@127.0.0.1:6380");  // ACL user "app"
//   std::cout << u.redacted();  // "redis://app:***@127.0.0.1:6380"
#pragma once

#include <string>
#include <string_view>

namespace locksim {

struct Endpoint {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string username;  // empty: the default user (AUTH <password>, or no AUTH)
  std::string password;  // empty: no AUTH; with a username: AUTH <username> <password> (Redis 6+)
  int db = 0;

  // redacted: the URL with the password replaced by "***"; safe for logs and reports. The user
  // name is shown.
  std::string redacted() const;
};

// parse_redis_url: redis://[[user]:password@]host:port[/db]. A user name needs a password (an ACL
// user); without one the server's default user is used. Throws InputError on anything else, with
// a message that shows the expected form (and never the password).
Endpoint parse_redis_url(std::string_view url);

}  // namespace locksim
