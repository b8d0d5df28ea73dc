// Transport and limits (harness/agent/http/transport_limits.hpp): the server choice and the body
// refusals a handler makes before it reads a byte, judged without a network.
#include "harness/agent/http/transport_limits.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

namespace {
using namespace harness::agent;

httplib::Request request(const std::string& method, std::initializer_list<std::pair<std::string, std::string>> h) {
  httplib::Request r;
  r.method = method;
  r.path = "/v1/cases";
  for (const auto& [k, v] : h) r.headers.emplace(k, v);
  return r;
}

std::string error_of(const httplib::Response& res) { return nlohmann::json::parse(res.body)["error"]; }

/// Why make_http_server refuses `o` (its std::runtime_error), or "accepted" when it builds a
/// server.
std::string refusal_of(const AgentOptions& o) {
  std::function<void()> deepen;
  try {
    make_http_server(o, deepen);
    return "accepted";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

TEST(TransportLimits, PlainHttpOnlyOnLoopbackUnlessAllowed) {
  AgentOptions o;
  o.bind = "10.0.0.5";
  EXPECT_NE(refusal_of(o).find("--bind 10.0.0.5: refusing plain HTTP"), std::string::npos) << refusal_of(o);
  o.insecure_plain_http = true;
  std::function<void()> deepen;
  EXPECT_NE(make_http_server(o, deepen), nullptr);
  EXPECT_TRUE(static_cast<bool>(deepen));
  o.bind = "127.0.0.1";
  o.insecure_plain_http = false;
  EXPECT_NE(make_http_server(o, deepen), nullptr);
}

TEST(TransportLimits, TlsNeedsBothReadableFiles) {
  AgentOptions o;
  o.tls_cert_file = "/nonexistent/agent.pem";
  EXPECT_NE(refusal_of(o).find("go together (got only --tls-cert)"), std::string::npos) << refusal_of(o);
  o.tls_key_file = "/nonexistent/agent.key";
  EXPECT_NE(refusal_of(o).find("--tls-cert /nonexistent/agent.pem: cannot read"), std::string::npos) << refusal_of(o);
}

TEST(TransportLimits, BodiesAreRefusedBeforeReadingByMethodAndDeclaredLength) {
  httplib::Response res;
  EXPECT_TRUE(refuse_body_before_reading(request("GET", {{"Content-Length", "5"}}), res, 100));
  EXPECT_EQ(res.status, 413);
  EXPECT_EQ(error_of(res), "request body not accepted on GET");
  EXPECT_EQ(res.get_header_value("Connection"), "close");
  httplib::Response chunked;
  EXPECT_TRUE(refuse_body_before_reading(request("DELETE", {{"Transfer-Encoding", "chunked"}}), chunked, 100));
  EXPECT_EQ(chunked.status, 413);
  httplib::Response big;
  EXPECT_TRUE(refuse_body_before_reading(request("POST", {{"Content-Length", "101"}}), big, 100));
  EXPECT_EQ(big.status, 413);
  EXPECT_NE(error_of(big).find("limit of 100 bytes"), std::string::npos) << big.body;
  httplib::Response fits;
  EXPECT_FALSE(refuse_body_before_reading(request("POST", {{"Content-Length", "100"}}), fits, 100));
  EXPECT_FALSE(refuse_body_before_reading(request("GET", {{"Content-Length", "0"}}), fits, 100));
  EXPECT_FALSE(refuse_body_before_reading(request("GET", {}), fits, 100));
}

TEST(TransportLimits, BodyFramingIsALengthOrATransferEncoding) {
  EXPECT_FALSE(has_body_framing(request("POST", {})));
  EXPECT_TRUE(has_body_framing(request("POST", {{"Content-Length", "0"}})));
  EXPECT_TRUE(has_body_framing(request("POST", {{"Transfer-Encoding", "chunked"}})));
}

}  // namespace
