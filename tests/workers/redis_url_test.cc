// ParseRedisUrl (measure/redis_client.h) over the table of URL forms, IPv6 hosts in
// brackets included (issue 24 item 9: redis://[::1]:6379 had its port appended twice).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "measure/redis_client.h"

namespace qtune::measure {
namespace {
using ::testing::HasSubstr;

struct UrlCase {
  std::string url;
  std::string host;
  int port;
  int db;
  std::string user, password;
  std::string redacted;
};

TEST(RedisUrlFormsTest, EveryFormParses) {
  const std::vector<UrlCase> cases = {
      {"redis://example.org", "example.org", 6379, 0, "", "", "redis://example.org:6379/0"},
      {"redis://10.0.0.2:6390/3", "10.0.0.2", 6390, 3, "", "", "redis://10.0.0.2:6390/3"},
      {"redis://:pw@host:1/", "host", 1, 0, "", "pw", "redis://:***@host:1/0"},
      {"redis://u:pw@host/2", "host", 6379, 2, "u", "pw", "redis://u:***@host:6379/2"},
      {"redis://", "127.0.0.1", 6379, 0, "", "", "redis://127.0.0.1:6379/0"},
      {"redis://[::1]", "::1", 6379, 0, "", "", "redis://[::1]:6379/0"},
      {"redis://[::1]:6379", "::1", 6379, 0, "", "", "redis://[::1]:6379/0"},
      {"redis://[::1]:6380/4", "::1", 6380, 4, "", "", "redis://[::1]:6380/4"},
      {"redis://[::1]/5", "::1", 6379, 5, "", "", "redis://[::1]:6379/5"},
      {"redis://:p@ss@[fd00::5]:7000/1", "fd00::5", 7000, 1, "", "p@ss",
       "redis://:***@[fd00::5]:7000/1"},
      {"redis://admin:s3cr3t@[2001:db8::1]", "2001:db8::1", 6379, 0, "admin", "s3cr3t",
       "redis://admin:***@[2001:db8::1]:6379/0"},
      {"redis://[fe80::1%eth0]:6379", "fe80::1%eth0", 6379, 0, "", "",
       "redis://[fe80::1%eth0]:6379/0"},
      {"redis://[::ffff:127.0.0.1]:6379", "::ffff:127.0.0.1", 6379, 0, "", "",
       "redis://[::ffff:127.0.0.1]:6379/0"},
  };
  for (const UrlCase& c : cases) {
    auto url = ParseRedisUrl(c.url);
    ASSERT_TRUE(url.ok()) << c.url << ": " << url.status().ToString();
    EXPECT_EQ(url->host, c.host) << c.url;
    EXPECT_EQ(url->port, c.port) << c.url;
    EXPECT_EQ(url->db, c.db) << c.url;
    EXPECT_EQ(url->user, c.user) << c.url;
    EXPECT_EQ(url->password, c.password) << c.url;
    EXPECT_EQ(url->Redacted(), c.redacted) << c.url;
    // What Redacted() prints without a password parses back to the same server.
    if (c.password.empty()) {
      auto again = ParseRedisUrl(url->Redacted());
      ASSERT_TRUE(again.ok()) << url->Redacted();
      EXPECT_EQ(again->host, c.host);
      EXPECT_EQ(again->port, c.port);
    }
  }
}

TEST(RedisUrlFormsTest, MalformedIpv6AndPortsAreRejectedWithTheReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"redis://[::1", "lacks its ']'"},
      {"redis://[]:6379", "is not an IPv6 address in brackets"},
      {"redis://[::1]x", "follows the IPv6 address"},
      {"redis://[::1]:", "the port after ':' is empty"},
      {"redis://[::1]:0", "the port '0'"},
      {"redis://[::1]:70000", "the port '70000'"},
      {"redis://[::1]:63a9", "the port '63a9'"},
      {"redis://::1:6379", "put an IPv6 address in brackets"},
      {"redis://fd00::5", "put an IPv6 address in brackets"},
      {"redis://host:", "the port after ':' is empty"},
      {"redis://ho]st:6379", "bracket"},
      {"redis://:pw@[::1]:6379/x", "the database 'x'"},
  };
  for (const auto& [url, expected] : cases) {
    auto parsed = ParseRedisUrl(url);
    ASSERT_FALSE(parsed.ok()) << url << " parsed as host '" << parsed->host << "' port "
                              << parsed->port;
    EXPECT_THAT(parsed.status().message(), HasSubstr(expected)) << url;
    EXPECT_THAT(parsed.status().message(), HasSubstr("redis://[::1]:6379")) << "says the form";
    EXPECT_EQ(parsed.status().message().find("pw"), std::string::npos) << "no password";
  }
}

}  // namespace
}  // namespace qtune::measure
