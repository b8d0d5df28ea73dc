#pragma once
// Deadlines on what the libvirt engine asks a hypervisor host before the first case (ours,
// issue 59). libvirt's ssh transport runs ssh without ConnectTimeout, and its URI takes no
// ssh option: a host given by IP whose port accepts TCP and never sends an SSH banner held
// `harness plan` silent for as long as anyone waited. Two guards, both at the provider's
// `connect_timeout_s` (config.hpp; README.md in this folder, "Deadlines"):
// - ssh itself (ssh transport): the URI libvirt opens names, as `command=`, a small wrapper
//   that runs the URI's own command= (else `ssh`) with `-o ConnectTimeout=S`, which bounds
//   the TCP connect and the SSH handshake (ssh_config(5)), so ssh gives up and exits by
//   itself and no ssh process is left waiting on a silent host;
// - the whole question (connection, node info, domains, hostname; any transport, any stage,
//   a daemon that accepts and never answers too): run on a thread of its own and waited for
//   at most S s (BoundedCall). What is still running then finishes alone and frees what it made.
#include "harness/pool/libvirt/config.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace harness::pool::libvirt {

/// How a call given a deadline ended.
enum class BoundedOutcome {
  done,       ///< it returned: the value
  failed,     ///< it threw: the message
  no_answer,  ///< still running at the deadline (left to finish alone)
};

template <class T>
struct BoundedResult {
  BoundedOutcome outcome = BoundedOutcome::no_answer;
  std::optional<T> value;  ///< done: what it returned
  std::string error;       ///< failed: what() of what it threw
};

/// One call on a thread of its own, started at construction, waited for with a deadline. `f`
/// must own everything it touches (capture by value): after a no_answer nobody waits for it,
/// and its result (e.g. a libvirt connection) is destroyed when it ends.
template <class T>
class BoundedCall {
 public:
  explicit BoundedCall(std::function<T()> f) : s_(std::make_shared<State>()) {
    std::thread([s = s_, f = std::move(f)] {
      std::optional<T> v;
      std::string err = "unknown error";
      try {
        v.emplace(f());
      } catch (const std::exception& e) {
        err = e.what();
      } catch (...) {
        err = "an exception that is no std::exception";  // kept as the failure's message
      }
      std::lock_guard<std::mutex> l(s->mu);
      s->value = std::move(v);
      s->error = err;
      s->done = true;
      s->cv.notify_all();
    }).detach();
  }

  /// Waits until `deadline` at most. done or failed once it ended; no_answer before (the call
  /// goes on; a later wait may still see it end).
  BoundedResult<T> wait_until(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> l(s_->mu);
    BoundedResult<T> r;
    if (!s_->cv.wait_until(l, deadline, [this] { return s_->done; })) return r;
    if (s_->value) {
      r.outcome = BoundedOutcome::done;
      r.value = std::move(s_->value);
    } else {
      r.outcome = BoundedOutcome::failed;
      r.error = s_->error;
    }
    return r;
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::optional<T> value;
    std::string error;
  };
  std::shared_ptr<State> s_;
};

/// The URI text libvirt is given for `uri`: for the ssh transport (with a host) the URI with
/// its command= replaced by the connect-timeout wrapper for `timeout_s` (written into
/// `wrapper_dir`, mode 0700, when missing; percent-encoded in the query); any other URI as
/// written. Throws std::runtime_error naming the file when the wrapper cannot be written,
/// std::invalid_argument when timeout_s < 1.
std::string deadline_uri(const LibvirtUri& uri, int timeout_s, const std::string& wrapper_dir);

/// deadline_uri with `cfg`'s connect_timeout_s and the wrapper under <cache>/libvirt (cfg.cache_dir,
/// "" = the harness cache: harness/vm/paths.hpp cache_root). Throws as deadline_uri and cache_root.
std::string deadline_uri(const LibvirtConfig& cfg, const LibvirtUri& uri);

/// The wrapper's text: `exec PROGRAM -o ConnectTimeout=S "$@"` (PROGRAM shell-quoted). Pure.
std::string ssh_wrapper_text(const std::string& program, int timeout_s);

/// "no answer in S s" and what was asked, for a host that stayed silent: names the URI, the
/// deadline's key (provider.connect_timeout_s) and how to try the host by hand.
std::string no_answer_text(const LibvirtUri& uri, int timeout_s);

}  // namespace harness::pool::libvirt
