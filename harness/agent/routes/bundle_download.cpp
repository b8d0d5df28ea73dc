// GET /v1/cases/{id}/bundle (see bundle_download.hpp).
#include "harness/agent/routes/bundle_download.hpp"

#include "harness/agent/http/answer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace harness::agent {
namespace {

/// A bundle is streamed in pieces of this many bytes (a download holds one piece).
constexpr std::size_t kBundlePiece = 64 << 10;

/// One download being served: its open file and its slot among kMaxBundleDownloads, both
/// released when the answer (which holds it through its content provider) is gone.
struct Download {
  Registry& reg;
  int fd = -1;
  explicit Download(Registry& r) : reg(r) {}
  ~Download() {
    if (fd >= 0) ::close(fd);
    std::lock_guard<std::mutex> lk(reg.mu);
    --reg.downloads;
  }
};

}  // namespace

void serve_bundle(Registry& reg, const std::string& id, const std::string& state, const std::filesystem::path& b,
                  httplib::Response& res) {
  {
    std::lock_guard<std::mutex> lk(reg.mu);
    if (reg.downloads >= kMaxBundleDownloads) {
      res.set_header("Retry-After", "1");
      return send_error(res, 503, "too many bundle downloads at once (limit " + std::to_string(kMaxBundleDownloads) +
                                      "); retry later", "");
    }
    ++reg.downloads;
  }
  auto dl = std::make_shared<Download>(reg);
  dl->fd = ::open(b.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (dl->fd < 0 && errno == ENOENT) return send_error(res, 404, "case " + id + " has no bundle (state " + state + ")", "");
  if (dl->fd < 0) return send_error(res, 500, "cannot open the bundle " + b.string() + ": " + std::strerror(errno), "");
  struct stat st{};
  if (::fstat(dl->fd, &st) != 0 || !S_ISREG(st.st_mode))
    return send_error(res, 500, "the bundle " + b.string() + " is not a regular file", "");
  if (st.st_size == 0) return res.set_content("", "application/vnd.sqlite3");
  res.set_content_provider(static_cast<std::size_t>(st.st_size), "application/vnd.sqlite3",
                           [dl](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                             std::vector<char> piece(std::min(length, kBundlePiece));
                             ssize_t n;
                             do {
                               n = ::pread(dl->fd, piece.data(), piece.size(), static_cast<off_t>(offset));
                             } while (n < 0 && errno == EINTR);
                             // A read error or a bundle that shrank: the answer ends short of
                             // its Content-Length and the connection is closed.
                             return n > 0 && sink.write(piece.data(), static_cast<std::size_t>(n));
                           });
}

}  // namespace harness::agent
