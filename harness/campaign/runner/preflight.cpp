// Fleet qualification before scheduling (see preflight.hpp).
#include "harness/campaign/runner/preflight.hpp"

#include "harness/agent/client/client.hpp"
#include "harness/text/join.hpp"
#include "qualify/qualify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace harness::campaign {

const std::vector<std::string>& fleet_uniform_keys() {
  static const std::vector<std::string> k{"kernel_release", "swappiness", "mglru_enabled", "thp_enabled",
                                          "clocksource"};
  return k;
}

const std::vector<std::string>& fleet_kernel_config_keys() {
  static const std::vector<std::string> k{"kernel_config.CONFIG_PSI", "kernel_config.CONFIG_ZRAM",
                                          "kernel_config.CONFIG_MEMCG", "kernel_config.CONFIG_LRU_GEN"};
  return k;
}

namespace {

/// The value at a dotted path of the recorded object ("kernel_config.CONFIG_PSI") as text;
/// "(missing)" when a key is absent.
std::string text_of(const nlohmann::json& rec, const std::string& key) {
  const nlohmann::json* v = &rec;
  for (std::size_t b = 0; b <= key.size();) {
    const std::size_t e = std::min(key.find('.', b), key.size());
    const std::string part = key.substr(b, e - b);
    if (!v->is_object() || !v->contains(part)) return "(missing)";
    v = &(*v)[part];
    b = e + 1;
  }
  return v->is_string() ? v->get<std::string>() : v->dump();
}

/// Is the campaign's compressor available on this VM: "yes" / "no", from recorded.compressors
/// (name -> where, null = nowhere), else from recorded.zram_algorithms (an agent built before
/// compressors were recorded); "(missing)" when neither is reported.
std::string compressor_available(const nlohmann::json& rec, const std::string& alg) {
  if (rec.contains("compressors") && rec["compressors"].is_object()) {
    const auto& c = rec["compressors"];
    return c.contains(alg) && c[alg].is_string() ? "yes" : "no";
  }
  if (rec.contains("zram_algorithms") && rec["zram_algorithms"].is_array() && !rec["zram_algorithms"].empty()) {
    for (const auto& a : rec["zram_algorithms"])
      if (a.is_string() && a.get<std::string>() == alg) return "yes";
    return "no";
  }
  return "(missing)";
}

/// Column header of a key in the per-VM table ("kernel_config.CONFIG_PSI" -> "CONFIG_PSI").
std::string header_of(const std::string& key) {
  const std::string p = "kernel_config.";
  return key.rfind(p, 0) == 0 ? key.substr(p.size()) : key;
}

/// One VM's row and reasons from its qualification report `rep` (a string: why there is
/// none): the values of `cols`, the compressor's availability in `alg_col` ("" when the
/// campaign names none; `alg_item` its kernel config item), the pinned commit.
VmQualification judge_vm(const Campaign& c, const std::string& vm, const nlohmann::json& rep,
                         const std::vector<std::string>& cols, const std::string& alg_col, const std::string& alg_item) {
  VmQualification q;
  q.vm = vm;
  if (!rep.is_object()) {
    q.reasons.push_back(rep.is_string() ? rep.get<std::string>() : "no qualification report");
    for (const auto& k : cols) q.values[k] = "?";
  } else {
    const auto rec = rep.value("recorded", nlohmann::json::object());
    if (rec.contains("source_commit") && rec["source_commit"].is_string())
      q.source_commit = rec["source_commit"].get<std::string>();
    if (rec.contains("source_dirty") && rec["source_dirty"].is_boolean()) q.source_dirty = rec["source_dirty"].get<bool>();
    for (const auto& k : cols) q.values[k] = k == alg_col ? compressor_available(rec, c.zram_algorithm) : text_of(rec, k);
    if (!alg_col.empty() && q.values[alg_col] != "yes")
      q.reasons.push_back("compressor: the campaign's zram compressor " + c.zram_algorithm +
                          (q.values[alg_col] == "no" ? std::string(" is not available on this VM")
                                                     : std::string(" availability is not reported by the agent")) +
                          " (load its module, or use a kernel with " +
                          (alg_item.empty() ? std::string("it") : alg_item + "=y or m") + ")");
    if (rec.value("source_dirty", false) && q.values["source_commit"] != "(missing)")
      q.values["source_commit"] += " (dirty)";
    if (!rep.value("passed", false)) {
      if (rep.contains("reasons") && rep["reasons"].is_array() && !rep["reasons"].empty())
        for (const auto& r : rep["reasons"]) q.reasons.push_back(r.is_string() ? r.get<std::string>() : r.dump());
      else
        q.reasons.push_back("qualification report says passed=false");
    }
    if (c.pinned_commit != "any") {
      const std::string have = rec.value("source_commit", std::string());
      if (have != c.pinned_commit)
        q.reasons.push_back("source_commit: the agent's harness is built from '" + have + "', the campaign pins " +
                            c.pinned_commit + " (rebuild the guest image from the pinned commit)");
      else if (rec.value("source_dirty", true))
        q.reasons.push_back("source_commit: the agent's harness build of " + have +
                            " has uncommitted changes (rebuild from a clean checkout)");
    }
  }
  q.passed = q.reasons.empty();
  return q;
}

}  // namespace

Preflight judge_fleet(const Campaign& c, const std::vector<std::pair<std::string, nlohmann::json>>& reports) {
  Preflight out;
  std::vector<std::string> cols = fleet_uniform_keys();
  cols.push_back("source_commit");
  // The kernel configuration the experiment depends on and the campaign's compressor: equal
  // on every VM, and the compressor available (PROTOCOL.md "Qualification before scheduling").
  std::vector<std::string> compared = fleet_uniform_keys();
  for (const auto& k : fleet_kernel_config_keys()) compared.push_back(k);
  const std::string alg_item = qualify::compressor_config_item(c.zram_algorithm);
  if (!alg_item.empty()) compared.push_back("kernel_config." + alg_item);
  const std::string alg_col = c.zram_algorithm.empty() ? "" : c.zram_algorithm + " available";
  for (std::size_t i = fleet_uniform_keys().size(); i < compared.size(); ++i) cols.push_back(compared[i]);
  if (!alg_col.empty()) {
    cols.push_back(alg_col);
    compared.push_back(alg_col);
  }
  for (const auto& [vm, rep] : reports) {
    VmQualification q = judge_vm(c, vm, rep, cols, alg_col, alg_item);
    for (const auto& r : q.reasons) out.problems.push_back(vm + " not qualified: " + r);
    out.vms.push_back(std::move(q));
  }
  for (const auto& k : compared) {
    std::set<std::string> distinct;
    for (const auto& q : out.vms)
      if (q.values.at(k) != "?") distinct.insert(q.values.at(k));
    if (distinct.size() > 1) {
      const std::string who = text::join(out.vms, ", ", [&](const auto& q) { return q.vm + " " + q.values.at(k); });
      out.problems.push_back("VMs differ in " + k + ": " + who);
    }
  }
  out.ok = out.problems.empty();
  // Table: one row per VM, one column per value.
  std::vector<std::size_t> w;
  std::size_t w0 = 2;
  for (const auto& q : out.vms) w0 = std::max(w0, q.vm.size());
  for (const auto& k : cols) {
    std::size_t m = header_of(k).size();
    for (const auto& q : out.vms) m = std::max(m, q.values.at(k).size());
    w.push_back(m);
  }
  out.table = fmt::format("{:<{}}  {:<9}", "vm", w0, "qualified");
  for (std::size_t i = 0; i < cols.size(); ++i) out.table += fmt::format("  {:<{}}", header_of(cols[i]), w[i]);
  out.table += "\n";
  for (const auto& q : out.vms) {
    out.table += fmt::format("{:<{}}  {:<9}", q.vm, w0, q.passed ? "yes" : "NO");
    for (std::size_t i = 0; i < cols.size(); ++i) out.table += fmt::format("  {:<{}}", q.values.at(cols[i]), w[i]);
    out.table += "\n";
  }
  for (const auto& p : out.problems) out.table += p + "\n";
  return out;
}

Preflight fleet_preflight(const Campaign& c, const std::vector<pool::Guest>& guests) {
  std::vector<std::pair<std::string, nlohmann::json>> reports;
  for (const auto& vm : c.vms) {
    const auto it = std::find_if(guests.begin(), guests.end(), [&](const pool::Guest& g) { return g.name == vm; });
    if (it == guests.end()) {
      reports.emplace_back(vm, nlohmann::json("no host for this VM"));
      continue;
    }
    std::string failed;
    try {
      auto client = agent::AgentClient::from_token_file(it->url, it->token_file, pool::client_options(*it));
      auto answer = client.qualification();
      if (answer.ok()) {
        reports.emplace_back(vm, std::move(answer).value());
        continue;
      }
      failed = answer.message();
    } catch (const std::exception& e) {  // the guest's token file or URL (from_token_file): this VM's reason
      failed = e.what();
    }
    reports.emplace_back(vm, nlohmann::json("GET /v1/qualification failed: " + failed));
  }
  return judge_fleet(c, reports);
}

}  // namespace harness::campaign
