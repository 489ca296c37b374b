// redis_url_test: parse_redis_url accepts exactly redis://[[user]:password@]host:port[/db] and
// never lets a password reach a message or a redacted URL.
#include <gtest/gtest.h>

#include <string>

#include "sim/core/error.h"
#include "sim/redis/endpoint.h"

namespace locksim {
namespace {

constexpr const char* kSecret = "s3cr3t-Pa55";

// Returns the InputError message for `url`, or "" (and a test failure) if it did not throw.
std::string error_for(const std::string& url) {
  try {
    parse_redis_url(url);
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError for " << url;
  return "";
}

// A plain host:port URL parses with no password and db 0.
TEST(RedisUrlTest, ParsesHostAndPort) {
  const Endpoint e = parse_redis_url("redis://127.0.0.1:6380");
  EXPECT_EQ(e.host, "127.0.0.1");
  EXPECT_EQ(e.port, 6380);
  EXPECT_EQ(e.password, "");
  EXPECT_EQ(e.db, 0);
}

// Password, host name and db are all taken from a full URL.
TEST(RedisUrlTest, ParsesPasswordAndDb) {
  const Endpoint e = parse_redis_url(std::string("redis://:") + kSecret + "@redis.local:1/15");
  EXPECT_EQ(e.host, "redis.local");
  EXPECT_EQ(e.port, 1);
  EXPECT_EQ(e.password, kSecret);
  EXPECT_EQ(e.db, 15);
}

// A password may contain '@' and ':'; the user info ends at the last '@'.
TEST(RedisUrlTest, PasswordMayContainSeparators) {
  const Endpoint e = parse_redis_url("redis://:p@ss:w0rd@localhost:65535/0");
  EXPECT_EQ(e.password, "p@ss:w0rd");
  EXPECT_EQ(e.host, "localhost");
  EXPECT_EQ(e.port, 65535);
  EXPECT_EQ(e.db, 0);
}

// An ACL user name comes before the first ':'; the password is everything after it.
TEST(RedisUrlTest, ParsesUserName) {
  const Endpoint e = parse_redis_url(std::string("redis://app:") + kSecret + ":x@redis.local:7/1");
  EXPECT_EQ(e.username, "app");
  EXPECT_EQ(e.password, std::string(kSecret) + ":x");
  EXPECT_EQ(e.host, "redis.local");
  EXPECT_EQ(e.port, 7);
  EXPECT_EQ(e.db, 1);
  EXPECT_EQ(parse_redis_url("redis://:pw@h:1").username, "");
}

// redacted() shows the user name but never its password.
TEST(RedisUrlTest, RedactedShowsUserHidesPassword) {
  const Endpoint e = parse_redis_url(std::string("redis://app:") + kSecret + "@10.0.0.2:7000");
  EXPECT_EQ(e.redacted(), "redis://app:***@10.0.0.2:7000");
}

// redacted() masks the password and omits what is default.
TEST(RedisUrlTest, RedactedHidesPassword) {
  Endpoint e = parse_redis_url(std::string("redis://:") + kSecret + "@10.0.0.2:7000/3");
  EXPECT_EQ(e.redacted(), "redis://:***@10.0.0.2:7000/3");
  EXPECT_EQ(e.redacted().find(kSecret), std::string::npos);
  e.db = 0;
  EXPECT_EQ(e.redacted(), "redis://:***@10.0.0.2:7000");
  e.password.clear();
  EXPECT_EQ(e.redacted(), "redis://10.0.0.2:7000");
}

// Round trip: a redacted URL without a password parses back to the same endpoint.
TEST(RedisUrlTest, RedactedWithoutPasswordRoundTrips) {
  const Endpoint e = parse_redis_url("redis://127.0.0.1:6379/7");
  const Endpoint again = parse_redis_url(e.redacted());
  EXPECT_EQ(again.host, e.host);
  EXPECT_EQ(again.port, e.port);
  EXPECT_EQ(again.db, e.db);
}

// Every malformed URL is an InputError that shows the expected form.
TEST(RedisUrlTest, RejectsMalformedUrls) {
  const char* const bad[] = {
      "",                              // empty
      "127.0.0.1:6379",                // no scheme
      "http://127.0.0.1:6379",         // other scheme
      "rediss://127.0.0.1:6379",       // TLS is not supported
      "redis://127.0.0.1",             // missing port
      "redis://127.0.0.1:",            // empty port
      "redis://:6379",                 // empty host
      "redis://127.0.0.1:0",           // port out of range
      "redis://127.0.0.1:65536",       // port out of range
      "redis://127.0.0.1:-1",          // signed port
      "redis://127.0.0.1:63x9",        // junk in port
      "redis://127.0.0.1:6379/16",     // db out of range
      "redis://127.0.0.1:6379/-1",     // signed db
      "redis://127.0.0.1:6379/",       // empty db
      "redis://127.0.0.1:6379/1/2",    // junk after db
      "redis://127.0.0.1:6379/db",     // non-numeric db
      "redis://127.0.0.1:6379?x=1",    // query string
      "redis://user@127.0.0.1:1",      // a user name without a password
      "redis://user:@127.0.0.1:1",     // a user name with an empty password
      "redis://us er:pw@127.0.0.1:1",  // a space in the user name
      "redis://:@127.0.0.1:6379",      // empty password
      "redis://::1:6379",              // bare IPv6 host
  };
  for (const char* url : bad) {
    const std::string message = error_for(url);
    EXPECT_NE(message.find("redis://[[user]:password@]host:port[/db]"), std::string::npos)
        << url << " -> " << message;
  }
}

// No error message ever contains the password, however malformed the rest of the URL is.
TEST(RedisUrlTest, ErrorsNeverContainPassword) {
  const std::string secret = kSecret;
  const std::string bad[] = {
      "redis://:" + secret + "@127.0.0.1",          // missing port
      "redis://:" + secret + "@127.0.0.1:99999",    // bad port
      "redis://:" + secret + "@127.0.0.1:6379/99",  // bad db
      "redis://:" + secret + "@:6379",              // empty host
      "http://:" + secret + "@127.0.0.1:6379",      // other scheme
      "redis//:" + secret + "@127.0.0.1:6379",      // broken scheme
      "redis://admin:" + secret + "@127.0.0.1",     // user name, missing port
      "redis://ad min:" + secret + "@127.0.0.1:1",  // bad user name
      "redis://:" + secret + "@h@:6379",            // '@' in the wrong place
  };
  for (const std::string& url : bad) {
    const std::string message = error_for(url);
    EXPECT_FALSE(message.empty()) << url;
    EXPECT_EQ(message.find(secret), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace locksim
