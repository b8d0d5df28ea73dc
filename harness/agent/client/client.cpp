// libcurl implementation of AgentClient (see client.hpp).
#include "harness/agent/client/client.hpp"

#include "harness/json/limited_parse.hpp"

#include <sys/stat.h>
#include <curl/curl.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

namespace harness::agent {
namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t to_string(char* p, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(p, size * n);
  return size * n;
}

size_t to_file(char* p, size_t size, size_t n, void* user) {
  return std::fwrite(p, size, n, static_cast<std::FILE*>(user)) * size;
}

/// Error "field"/"error"/"reasons" of a JSON error body, tolerant of non-JSON bodies.
nlohmann::json error_body(const std::string& body) {
  auto j = harness::json::parse_or_discarded(body);
  return j.is_object() ? j : nlohmann::json::object();
}

std::string error_text(const std::string& body) {
  auto j = error_body(body);
  if (j.contains("error") && j["error"].is_string()) return j["error"].get<std::string>();
  std::string b = body.substr(0, 200);
  return b.empty() ? "(empty body)" : b;
}

bool valid_case_id(const std::string& id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  for (char ch : id)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-')) return false;
  return true;
}

}  // namespace

struct AgentClient::Connection {
  std::mutex mu;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> handle{curl_easy_init(), curl_easy_cleanup};
};

AgentClient::AgentClient(std::string url, std::string token, std::string token_file, ClientOptions opt)
    : url_(std::move(url)),
      token_(std::move(token)),
      token_file_(std::move(token_file)),
      opt_(std::move(opt)),
      conn_(std::make_shared<Connection>()) {
  while (!url_.empty() && url_.back() == '/') url_.pop_back();
  const bool https = url_.rfind("https://", 0) == 0;
  if (!https) {
    if (!opt_.tls_ca_file.empty() || !opt_.tls_pin_sha256.empty())
      throw std::invalid_argument("agent " + url_ + ": a TLS CA file or pin needs an https:// URL");
    if (!url_is_loopback(url_) && !opt_.allow_plain_http)
      throw std::invalid_argument("agent " + url_ +
                                  ": plain http:// to a non-loopback host would send the bearer token in "
                                  "clear text; use https:// (agent --tls-cert/--tls-key) or allow it "
                                  "explicitly (hosts file: insecure_plain_http: true)");
  }
  if (!opt_.tls_pin_sha256.empty() && opt_.tls_pin_sha256.rfind("sha256//", 0) != 0)
    opt_.tls_pin_sha256 = "sha256//" + opt_.tls_pin_sha256;
  global_init();
}

AgentClient AgentClient::from_token_file(const std::string& url, const std::string& token_file, ClientOptions opt) {
  // The same rule as the agent's own token file (token.hpp load_token): a token others can
  // read is a token others can use.
  struct stat st{};
  if (::stat(token_file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077)) {
    char m[8];
    std::snprintf(m, sizeof m, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw std::runtime_error("token file " + token_file + ": mode " + m + " lets group/others read it; must be 0600 "
                             "(chmod 600 " + token_file + ") (agent " + url + ")");
  }
  std::ifstream in(token_file);
  if (!in) throw std::runtime_error("token file " + token_file + ": cannot read (agent " + url + ")");
  std::ostringstream os;
  os << in.rdbuf();
  std::string t = os.str();
  const auto b = t.find_first_not_of(" \t\r\n");
  const auto e = t.find_last_not_of(" \t\r\n");
  t = b == std::string::npos ? "" : t.substr(b, e - b + 1);
  if (t.empty()) throw std::runtime_error("token file " + token_file + ": empty (agent " + url + ")");
  return AgentClient(url, t, token_file, opt);
}

namespace {

/// The curl options of one request that do not depend on its body or sink.
struct Transfer {
  std::string full_url;
  long timeout_ms = 0;
  curl_slist* headers = nullptr;  ///< owned by the caller
};

/// Where the answer's bytes go: the file only on 200 (the bundle), error bodies as text.
struct Sink {
  std::FILE* f;
  std::string* s;
  CURL* h;
};

size_t sink_write(char* p, size_t size, size_t n, void* user) {
  auto* k = static_cast<Sink*>(user);
  long code = 0;
  curl_easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, &code);
  if (k->f && code == 200) return to_file(p, size, n, k->f);
  return to_string(p, size, n, k->s);
}

/// A curl error without an HTTP answer, in words (the TLS refusals are said apart, curl_failure).
std::string no_answer_reason(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_CONNECT: return "connection refused";
    case CURLE_COULDNT_RESOLVE_HOST: return "host name not resolved";
    case CURLE_OPERATION_TIMEDOUT: return "timed out";
    case CURLE_GOT_NOTHING: return "connection closed without a response";
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR: return "connection reset";
    default: return curl_easy_strerror(rc);
  }
}

/// Sets `handle`'s options for one request (TLS per `opt`, timeouts, headers, POST body).
void configure(CURL* handle, const ClientOptions& opt, const std::string& method, const std::string* body,
               const Transfer& t) {
  curl_easy_setopt(handle, CURLOPT_URL, t.full_url.c_str());
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  if (!opt.tls_ca_file.empty()) curl_easy_setopt(handle, CURLOPT_CAINFO, opt.tls_ca_file.c_str());
  if (!opt.tls_pin_sha256.empty()) {
    curl_easy_setopt(handle, CURLOPT_PINNEDPUBLICKEY, opt.tls_pin_sha256.c_str());
    if (opt.tls_ca_file.empty()) {  // self-signed agent certificate: the pin authenticates it
      curl_easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(handle, CURLOPT_SSL_VERIFYHOST, 0L);
    }
  }
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opt.connect_timeout.count()));
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, t.timeout_ms);
  if (t.headers) curl_easy_setopt(handle, CURLOPT_HTTPHEADER, t.headers);
  if (method == "POST") {
    curl_easy_setopt(handle, CURLOPT_POST, 1L);
    curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body ? body->c_str() : "");
    curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE, static_cast<long>(body ? body->size() : 0));
  } else if (method == "DELETE") {
    curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, "DELETE");
  }
}

/// The Failure of a request to the agent at `url` that got no HTTP answer (`rc`, curl's `errbuf`).
Failure curl_failure(CURLcode rc, const char* errbuf, const std::string& url, const ClientOptions& opt,
                     const std::string& method, const std::string& path) {
  const std::string curl_says = errbuf[0] ? std::string(errbuf) : std::string();
  if (rc == CURLE_SSL_PINNEDPUBKEYNOTMATCH)
    return {FailureKind::Untrusted, 0,
            "agent at " + url + ": TLS public key does not match the pinned " + opt.tls_pin_sha256 +
                " (hosts file tls_pin_sha256); nothing was sent. If the agent's certificate was replaced on "
                "purpose, update the pin (harness fleet pin CERT)",
            {}, {}};
  if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE)
    return {FailureKind::Untrusted, 0,
            "agent at " + url + ": TLS certificate not trusted (" + curl_easy_strerror(rc) +
                (curl_says.empty() ? std::string() : ": " + curl_says) +
                "); check the hosts file's tls_ca_file or tls_pin_sha256; nothing was sent",
            {}, {}};
  return {FailureKind::Unreachable, 0,
          "agent at " + url + " unreachable (" + no_answer_reason(rc) + ") on " + method + " " + path +
              (curl_says.empty() ? std::string() : " [curl: " + curl_says + "]"),
          {}, {}};
}

}  // namespace

Reply<AgentClient::Response> AgentClient::once(const std::string& method, const std::string& path,
                                               const std::string* body, const std::string* file, bool auth,
                                               std::chrono::milliseconds held) {
  // The kept handle, or, while another thread uses it, a handle of this request's own.
  std::unique_lock<std::mutex> kept(conn_->mu, std::try_to_lock);
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> own(nullptr, curl_easy_cleanup);
  CURL* handle = nullptr;
  if (kept.owns_lock() && conn_->handle) {
    handle = conn_->handle.get();
  } else {
    if (kept.owns_lock()) kept.unlock();
    own.reset(curl_easy_init());
    handle = own.get();
  }
  if (!handle) throw std::runtime_error("agent at " + url_ + ": curl_easy_init failed");
  // The kept handle's options point into this call (headers, buffers): reset them when it
  // returns, however it returns. curl_easy_reset keeps the live connection and TLS sessions.
  struct ResetOptions {
    CURL* kept;
    ~ResetOptions() {
      if (kept) curl_easy_reset(kept);
    }
  } reset_options{own ? nullptr : handle};
  const std::string bearer = "Authorization: Bearer " + token_;
  Transfer t{url_ + path, static_cast<long>((file ? opt_.download_timeout : opt_.request_timeout + held).count()),
             nullptr};
  if (auth) t.headers = curl_slist_append(t.headers, bearer.c_str());
  if (body) t.headers = curl_slist_append(t.headers, "Content-Type: application/json");
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> hl(t.headers, curl_slist_free_all);
  configure(handle, opt_, method, body, t);
  Response r;
  std::unique_ptr<std::FILE, decltype(&std::fclose)> out(nullptr, std::fclose);
  const std::string part = file ? *file + ".part" : std::string();
  if (file) {
    out.reset(std::fopen(part.c_str(), "wb"));
    if (!out) throw std::runtime_error("cannot write " + part + " (bundle of " + path + " from agent " + url_ + ")");
  }
  Sink sink{out.get(), &r.body, handle};
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &sink_write);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &sink);
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, errbuf);
  const CURLcode rc = curl_easy_perform(handle);
  out.reset();
  if (rc == CURLE_OK) curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &r.status);
  if (file && rc == CURLE_OK && r.status == 200) {
    std::filesystem::rename(part, *file);
  } else if (file) {
    std::filesystem::remove(part);
  }
  if (rc != CURLE_OK) return curl_failure(rc, errbuf, url_, opt_, method, path);
  return r;
}

Reply<AgentClient::Response> AgentClient::request(const std::string& method, const std::string& path,
                                                  const std::string* body, const std::string* file, bool auth,
                                                  std::chrono::milliseconds held) {
  const int tries = method == "GET" ? std::max(1, opt_.get_attempts) : 1;
  auto delay = opt_.backoff;
  for (int i = 1;; ++i) {
    auto r = once(method, path, body, file, auth, held);
    // No answer, or 5xx on an idempotent GET: transient agent trouble, retry. A refused TLS
    // peer is not retried (nothing changes by asking again).
    const bool again = r.ok() ? r.value().status >= 500 : r.is(FailureKind::Unreachable);
    if (!again || i >= tries) return r;
    std::this_thread::sleep_for(delay);
    delay *= 2;
  }
}

Failure AgentClient::http_failure(const std::string& what, const Response& r) const {
  const std::string prefix = "agent at " + url_ + ": " + what + ": ";
  const std::string detail = error_text(r.body);
  const int code = static_cast<int>(r.status);
  switch (r.status) {
    case 401:
      return {FailureKind::Unauthorised, code,
              prefix + "unauthorised (401): check token file " +
                  (token_file_.empty() ? std::string("(token given directly)") : token_file_),
              {}, {}};
    case 400: {
      auto j = error_body(r.body);
      std::string field = j.contains("field") && j["field"].is_string() ? j["field"].get<std::string>() : "";
      return {FailureKind::Rejected, code,
              prefix + "bad request (400): " + detail + (field.empty() ? "" : " [field " + field + "]"), field, {}};
    }
    case 404: return {FailureKind::NotFound, code, prefix + "not found (404): " + detail, {}, {}};
    case 409: return {FailureKind::Conflict, code, prefix + "conflict (409): " + detail, {}, {}};
    case 412: {
      std::vector<std::string> reasons;
      auto j = error_body(r.body);
      if (j.contains("reasons") && j["reasons"].is_array())
        for (const auto& x : j["reasons"]) reasons.push_back(x.is_string() ? x.get<std::string>() : x.dump());
      std::string all;
      for (const auto& x : reasons) all += (all.empty() ? "" : "; ") + x;
      return {FailureKind::NotQualified, code, prefix + "host not qualified (412): " + (all.empty() ? detail : all),
              {}, std::move(reasons)};
    }
    case 413: return {FailureKind::OtherStatus, code, prefix + "request too large (413)", {}, {}};
    default: return {FailureKind::OtherStatus, code, prefix + "HTTP " + std::to_string(code) + ": " + detail, {}, {}};
  }
}

Failure AgentClient::bad_answer(const std::string& what, const Response& r) const {
  return {FailureKind::BadAnswer, static_cast<int>(r.status),
          "agent at " + url_ + ": " + what + ": unreadable answer: " + r.body.substr(0, 200), {}, {}};
}

Reply<nlohmann::json> AgentClient::health() {
  auto r = request("GET", "/v1/health", nullptr, nullptr, false);
  if (!r.ok()) return r.failure();
  if (r.value().status != 200) return http_failure("health", r.value());
  auto j = harness::json::parse_or_discarded(r.value().body);
  if (!j.is_object()) return bad_answer("health (not a JSON object)", r.value());
  return j;
}

Reply<nlohmann::json> AgentClient::qualification() {
  auto r = request("GET", "/v1/qualification", nullptr, nullptr, true);
  if (!r.ok()) return r.failure();
  if (r.value().status != 200) return http_failure("qualification", r.value());
  auto j = harness::json::parse_or_discarded(r.value().body);
  if (j.is_discarded()) return bad_answer("qualification (not JSON)", r.value());
  return j;
}

Reply<std::string> AgentClient::submit(const nlohmann::json& spec) {
  const std::string body = spec.dump();
  auto r = request("POST", "/v1/cases", &body, nullptr, true);
  if (!r.ok()) return r.failure();
  if (r.value().status != 202 && r.value().status != 200) return http_failure("submit case", r.value());
  auto j = harness::json::parse_or_discarded(r.value().body);
  if (!j.is_object() || !j.contains("case_id") || !j["case_id"].is_string())
    return bad_answer("submit (no case_id)", r.value());
  return j["case_id"].get<std::string>();
}

Reply<CaseStatus> AgentClient::status(const std::string& case_id) { return status_query(case_id, "", {}); }

Reply<CaseStatus> AgentClient::wait_status(const std::string& case_id, const CaseStatus& seen,
                                           std::chrono::milliseconds wait) {
  if (wait.count() <= 0) return status(case_id);
  const auto word = [](const std::string& v) {  // states and phases are lower-case words
    return !v.empty() && v.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos;
  };
  if (!word(seen.state) || !word(seen.phase)) return status(case_id);
  return status_query(case_id,
                      "?wait_ms=" + std::to_string(wait.count()) + "&state=" + seen.state + "&phase=" + seen.phase,
                      wait);
}

Reply<CaseStatus> AgentClient::status_query(const std::string& case_id, const std::string& query,
                                            std::chrono::milliseconds held) {
  if (!valid_case_id(case_id)) throw std::invalid_argument("invalid case id '" + case_id + "'");
  auto r = request("GET", "/v1/cases/" + case_id + query, nullptr, nullptr, true, held);
  if (!r.ok()) return r.failure();
  if (r.value().status != 200) return http_failure("status of " + case_id, r.value());
  auto j = harness::json::parse_or_discarded(r.value().body);
  if (!j.is_object() || !j.contains("state") || !j["state"].is_string())
    return bad_answer("status of " + case_id, r.value());
  CaseStatus s;
  s.case_id = j.value("case_id", case_id);
  s.state = j["state"].get<std::string>();
  s.phase = j.contains("phase") && j["phase"].is_string() ? j["phase"].get<std::string>() : "";
  s.error = j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>() : "";
  return s;
}

Reply<Done> AgentClient::download_bundle(const std::string& case_id, const std::string& path) {
  if (!valid_case_id(case_id)) throw std::invalid_argument("invalid case id '" + case_id + "'");
  auto r = request("GET", "/v1/cases/" + case_id + "/bundle", nullptr, &path, true);
  if (!r.ok()) return r.failure();
  if (r.value().status != 200) return http_failure("bundle of " + case_id, r.value());
  return Done{};
}

Reply<Done> AgentClient::cancel(const std::string& case_id) {
  if (!valid_case_id(case_id)) throw std::invalid_argument("invalid case id '" + case_id + "'");
  auto r = request("POST", "/v1/cases/" + case_id + "/cancel", nullptr, nullptr, true);
  if (!r.ok()) return r.failure();
  if (r.value().status != 202 && r.value().status != 200) return http_failure("cancel " + case_id, r.value());
  return Done{};
}

Reply<nlohmann::json> AgentClient::clear_unclean() {
  auto r = request("DELETE", "/v1/unclean", nullptr, nullptr, true);
  if (!r.ok()) return r.failure();
  if (r.value().status != 200) return http_failure("clear the unclean mark", r.value());
  const auto j = harness::json::parse_or_discarded(r.value().body);
  if (!j.is_object() || !j.contains("cleared")) return bad_answer("clear the unclean mark", r.value());
  return j["cleared"];
}

Reply<std::string> AgentClient::reboot() {
  auto r = request("POST", "/v1/reboot", nullptr, nullptr, true);
  if (!r.ok()) return r.failure();
  if (r.value().status != 202) return http_failure("reboot", r.value());
  const auto j = harness::json::parse_or_discarded(r.value().body);
  if (j.is_discarded()) return bad_answer("reboot", r.value());
  return j.is_object() && j.contains("boot_id") && j["boot_id"].is_string() ? j["boot_id"].get<std::string>()
                                                                            : std::string();
}

Reply<std::pair<std::string, std::string>> AgentClient::reboot_and_wait(std::chrono::seconds timeout,
                                                                        std::chrono::milliseconds poll) {
  const auto rebooted = reboot();
  if (!rebooted.ok()) return rebooted.failure();
  const std::string before = rebooted.value();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error = "no answer yet";
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(poll);
    const auto h = health();
    if (!h.ok()) {
      last_error = h.message();  // down while rebooting: expected
      continue;
    }
    const std::string now_id = h.value().value("boot_id", std::string());
    if (!now_id.empty() && now_id != before) return std::make_pair(before, now_id);
    last_error = "still boot " + (now_id.empty() ? std::string("(no boot_id)") : now_id);
  }
  return Failure{FailureKind::Unreachable, 0,
                 url_ + ": the VM did not come back with a new boot id within " + std::to_string(timeout.count()) +
                     " s after POST /v1/reboot (boot id before " + before + "; last: " + last_error + ")",
                 {}, {}};
}

}  // namespace harness::agent
