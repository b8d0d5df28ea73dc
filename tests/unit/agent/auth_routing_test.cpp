// Authentication and routing (harness/agent/http/auth_routing.hpp), judged on requests built here.
#include "harness/agent/http/auth_routing.hpp"
#include "tests/unit/agent/test_token.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

namespace {
using namespace harness::agent;

const char* const kTok = agent_test::kToken;

httplib::Request request(const std::string& method, const std::string& path) {
  httplib::Request r;
  r.method = method;
  r.path = path;
  return r;
}

TEST(AuthRouting, KnownRoutesByMethod) {
  EXPECT_TRUE(known_route("GET", "/v1/health"));
  EXPECT_TRUE(known_route("GET", "/v1/qualification"));
  EXPECT_TRUE(known_route("GET", "/v1/cases/x"));
  EXPECT_TRUE(known_route("POST", "/v1/cases"));
  EXPECT_TRUE(known_route("POST", "/v1/reboot"));
  EXPECT_TRUE(known_route("POST", "/v1/cases/x/cancel"));
  EXPECT_TRUE(known_route("DELETE", "/v1/unclean"));
  EXPECT_FALSE(known_route("GET", "/v1/cases"));
  EXPECT_FALSE(known_route("GET", "/v1/reboot"));
  EXPECT_FALSE(known_route("POST", "/v1/health"));
  EXPECT_FALSE(known_route("DELETE", "/v1/cases/x"));
  EXPECT_FALSE(known_route("PUT", "/v1/cases"));
  EXPECT_FALSE(known_route("GET", "/v2/health"));
}

TEST(AuthRouting, CasePathsSplitIntoIdAndAction) {
  auto p = split_case_path("/v1/cases/abc");
  EXPECT_EQ(p.id, "abc");
  EXPECT_EQ(p.action, CaseAction::Status);
  p = split_case_path("/v1/cases/abc/bundle");
  EXPECT_EQ(p.id, "abc");
  EXPECT_EQ(p.action, CaseAction::Bundle);
  p = split_case_path("/v1/cases/abc/cancel");
  EXPECT_EQ(p.id, "abc");
  EXPECT_EQ(p.action, CaseAction::Cancel);
  p = split_case_path("/v1/cases/a/b/cancel");
  EXPECT_EQ(p.id, "a/b") << "the id keeps its slash and then fails the id check";
  p = split_case_path("/v1/cases//cancel");
  EXPECT_EQ(p.id, "/cancel");
  EXPECT_EQ(p.action, CaseAction::Status);
  EXPECT_TRUE(method_fits(CaseAction::Cancel, "POST"));
  EXPECT_FALSE(method_fits(CaseAction::Cancel, "GET"));
  EXPECT_TRUE(method_fits(CaseAction::Status, "GET"));
  EXPECT_FALSE(method_fits(CaseAction::Bundle, "POST"));
}

TEST(AuthRouting, OnlyOneExactBearerHeaderIsAuthorised) {
  auto r = request("GET", "/v1/qualification");
  EXPECT_FALSE(authorised(r, kTok));
  r.headers.emplace("Authorization", std::string("Bearer ") + kTok);
  EXPECT_TRUE(authorised(r, kTok));
  r.headers.emplace("Authorization", std::string("Bearer ") + kTok);
  EXPECT_FALSE(authorised(r, kTok)) << "two Authorization headers";
  auto nul = request("GET", "/v1/qualification");
  nul.headers.emplace("Authorization", std::string("Bearer ") + kTok + std::string(1, '\0') + "x");
  EXPECT_FALSE(authorised(nul, kTok));
  auto wrong = request("GET", "/v1/qualification");
  wrong.headers.emplace("Authorization", "Bearer nope");
  EXPECT_FALSE(authorised(wrong, kTok));
}

TEST(AuthRouting, HealthPassesWithoutTokenOthersGet401ThenUnknownPathsGet404) {
  httplib::Response res;
  EXPECT_FALSE(refuse_unauthorised_or_unknown(request("GET", "/v1/health"), res, kTok));
  EXPECT_TRUE(refuse_unauthorised_or_unknown(request("GET", "/v1/qualification"), res, kTok));
  EXPECT_EQ(res.status, 401);
  EXPECT_EQ(res.get_header_value("WWW-Authenticate"), "Bearer");
  httplib::Response res2;
  auto unknown = request("GET", "/nope");
  EXPECT_TRUE(refuse_unauthorised_or_unknown(unknown, res2, kTok));
  EXPECT_EQ(res2.status, 401) << "the token is judged before the path";
  unknown.headers.emplace("Authorization", std::string("Bearer ") + kTok);
  httplib::Response res3;
  EXPECT_TRUE(refuse_unauthorised_or_unknown(unknown, res3, kTok));
  EXPECT_EQ(res3.status, 404);
  auto ok = request("POST", "/v1/cases");
  ok.headers.emplace("Authorization", std::string("Bearer ") + kTok);
  httplib::Response res4;
  EXPECT_FALSE(refuse_unauthorised_or_unknown(ok, res4, kTok));
}

}  // namespace
