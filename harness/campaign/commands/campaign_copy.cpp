// `harness init KIND DIR`: a repository campaign copied out of the tree (campaign_copy.hpp).
#include "harness/campaign/commands/campaign_copy.hpp"

#include "harness/campaign/model/campaign.hpp"
#include "harness/pool/engine.hpp"
#include "harness/text/join.hpp"
#include "harness/yaml/strict_yaml.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace harness::campaign {

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot open");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// `node[key]` when `node` is a mapping that has it, else an undefined node (never throws:
/// yaml-cpp's operator[] of a missing key on a const node gives a node every query throws on).
YAML::Node child(const YAML::Node& node, const char* key) {
  if (!node || !node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (const auto& kv : node)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  return YAML::Node(YAML::NodeType::Undefined);
}

bool is_scalar(const YAML::Node& n) { return n && n.IsScalar(); }

/// The path-valued keys of a campaign file (dotted field, node); only those present as scalars.
std::vector<std::pair<std::string, YAML::Node>> path_keys(const YAML::Node& root) {
  std::vector<std::pair<std::string, YAML::Node>> out;
  if (const auto p = child(child(child(root, "design"), "dose_mib"), "from_pilot"); is_scalar(p))
    out.emplace_back("design.dose_mib.from_pilot", p);
  for (const char* v : {"baseline", "candidate"})
    if (const auto p = child(child(child(child(root, "variants"), v), "kernel"), "image_dir"); is_scalar(p))
      out.emplace_back(std::string("variants.") + v + ".kernel.image_dir", p);
  return out;
}

/// The byte length of the scalar written at `pos` of `text` (quoted or plain), or npos.
std::size_t scalar_length(const std::string& text, std::size_t pos) {
  if (pos >= text.size()) return std::string::npos;
  const char q = text[pos];
  if (q == '"' || q == '\'') {
    for (std::size_t i = pos + 1; i < text.size(); ++i) {
      if (q == '"' && text[i] == '\\') { ++i; continue; }
      if (text[i] == q) {
        if (q == '\'' && i + 1 < text.size() && text[i + 1] == '\'') { ++i; continue; }
        return i + 1 - pos;
      }
      if (text[i] == '\n') return std::string::npos;
    }
    return std::string::npos;
  }
  std::size_t i = pos;
  while (i < text.size() && text[i] != '\n' && text[i] != ',' && text[i] != '}' && text[i] != ']' &&
         !(text[i] == '#' && i > pos && (text[i - 1] == ' ' || text[i - 1] == '\t')))
    ++i;
  while (i > pos && (text[i - 1] == ' ' || text[i - 1] == '\t')) --i;
  return i - pos;
}

/// `p` as a YAML scalar: plain when it needs no quoting, else double-quoted.
std::string yaml_scalar(const std::string& p) {
  const bool plain = !p.empty() && std::all_of(p.begin(), p.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '/' || ch == '.' || ch == '_' || ch == '-' || ch == '+';
  });
  if (plain) return p;
  std::string q = "\"";
  for (char ch : p) q += ch == '"' || ch == '\\' ? std::string("\\") + ch : std::string(1, ch);
  return q + "\"";
}

/// Lines of "what to edit next" for the copy at `path` (a campaign text already relocated).
std::string next_steps(const YAML::Node& root, const std::string& path, const std::string& dir) {
  auto scalar = [](const YAML::Node& n) { return is_scalar(n) ? n.Scalar() : std::string(); };
  const YAML::Node d = child(root, "design");
  const std::string design = scalar(child(d, "kind"));
  const std::string provider = scalar(child(child(root, "provider"), "kind"));
  std::string s = "Edit " + path + " (yours: the repository's campaigns/ stay untouched and the build clean).\n";
  if (design == "ab-pairs") {
    s += "  variants: put what the candidate changes under variants.candidate (sysctls, sysfs, cmdline, kernel); a\n"
         "    kernel change needs both kernels in images of their own (`harness vm image --kernel ... --out DIR`),\n"
         "    named by variants.baseline.kernel.image_dir and variants.candidate.kernel.image_dir (relative to " +
         dir + "; docs/CI.md)\n";
    if (child(d, "aa")) s += "  design.aa: true declares an A/A run; delete it when the candidate differs\n";
  }
  if ((design == "matched-triplets" || design == "matched-blocks") && is_scalar(child(d, "dose_mib")))
    s += "  design.dose_mib: " + scalar(child(d, "dose_mib")) +
         " MiB is pinned; to take your pilot's dose write `dose_mib: {from_pilot: PILOT.db}` (the pilot's campaign "
         "DB, relative to " + dir + " or absolute)\n";
  if (scalar(child(root, "pinned_commit")) == "build")
    s += "  pinned_commit: build pins the commit of the clean harness build that plans it (`harness plan FILE DB`)\n";
  if (const auto* e = pool::find_engine(provider); e && e->capabilities.guests_on_this_machine)
    s += "  provider: " + provider +
         " boots guests on this machine; for real VMs give `--hosts hosts.yaml` to plan and run\n";
  if (design == "ab-pairs") {
    s += "Then: harness plan " + path + " --variance-from AA.db   # what the planned pairs can detect (an A/A DB)\n";
    s += "      harness check " + path + " --junit junit.xml --markdown summary.md   # runs and judges (docs/CI.md)\n";
    return s;
  }
  s += "Then: harness plan " + path + "        # preview: the schedule, capacity and wall time; stores nothing\n";
  s += "      harness plan " + path + " DB     # preregister the plan in DB; `harness run " + path +
       " DB` runs it\n";
  return s;
}

/// The first sentence of a file's leading comment block, its lines joined by one space: up to
/// the first ". " (or a "." ending a line), a blank comment line or the block's end. "" when the
/// file does not start with "# ".
std::string leading_sentence(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line) && line.rfind("# ", 0) == 0) {
    const std::string part = line.substr(2);
    if (!out.empty()) out += ' ';
    const auto stop = part.find(". ");
    if (stop != std::string::npos) return out + part.substr(0, stop + 1);
    out += part;
    if (!part.empty() && part.back() == '.') return out;
  }
  return out;
}

}  // namespace

std::vector<RepositoryCampaign> repository_campaigns(const std::string& campaigns_dir) {
  std::vector<RepositoryCampaign> out;
  std::error_code ec;
  fs::directory_iterator it(campaigns_dir, ec);
  if (ec) throw std::runtime_error(campaigns_dir + ": cannot list the repository's campaigns (" + ec.message() + ")");
  for (const auto& e : it) {
    if (!e.is_regular_file() || e.path().extension() != ".yaml") continue;
    RepositoryCampaign r;
    r.kind = e.path().stem().string();
    r.summary = leading_sentence(read_text(e.path()));
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.kind < b.kind; });
  return out;
}

std::string relocate_campaign_text(const std::string& text, const std::string& from_dir, const std::string& file,
                                   std::vector<RelocatedPath>* out) {
  const YAML::Node root = yaml::parse(text, file);
  struct Edit {
    std::size_t pos, len;
    std::string with;
  };
  std::vector<Edit> edits;
  for (const auto& [field, node] : path_keys(root)) {
    const std::string value = node.Scalar();
    if (value.empty() || fs::path(value).is_absolute()) continue;
    const YAML::Mark m = node.Mark();
    const std::size_t pos = static_cast<std::size_t>(m.pos);
    const std::size_t len = scalar_length(text, pos);
    const std::string at = file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": field " + field;
    // What is replaced must read back as the value: a plain or quoted one-line scalar.
    const bool exact = len != std::string::npos &&
                       yaml::parse("v: " + text.substr(pos, len), file)["v"].Scalar() == value;
    if (!exact)
      throw CampaignError(at + ": '" + value + "' is relative to " + from_dir +
                          " but written in a form `harness init` cannot rewrite; make it absolute by hand");
    const std::string to = (fs::absolute(fs::path(from_dir)) / value).lexically_normal().string();
    edits.push_back({pos, len, yaml_scalar(to)});
    if (out) out->push_back({field, m.line + 1, value, to});
  }
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.pos > b.pos; });
  std::string r = text;
  for (const auto& e : edits) r.replace(e.pos, e.len, e.with);
  return r;
}

CampaignCopy init_campaign(const std::string& kind, const std::string& campaigns_dir, const std::string& dir) {
  const auto known = repository_campaigns(campaigns_dir);
  if (std::none_of(known.begin(), known.end(), [&](const auto& r) { return r.kind == kind; })) {
    const std::string list = text::join(known, ", ", [](const auto& r) { return r.kind; });
    throw std::runtime_error("'" + kind + "' is not a campaign of " + campaigns_dir + " (" + list +
                             "; `harness init --list`)");
  }
  const fs::path from = fs::path(campaigns_dir) / (kind + ".yaml");
  const fs::path to = fs::absolute(fs::path(dir) / (kind + ".yaml")).lexically_normal();
  if (fs::exists(to) || fs::is_symlink(to))
    throw std::runtime_error(to.string() + " exists; `harness init` overwrites nothing (remove it, or give another DIR)");
  CampaignCopy c;
  c.path = to.string();
  const std::string text = relocate_campaign_text(read_text(from), campaigns_dir, from.string(), &c.relocated);
  fs::create_directories(to.parent_path());
  {
    std::ofstream o(to, std::ios::binary | std::ios::trunc);
    o << text;
    if (!o) throw std::runtime_error(to.string() + ": cannot write");
  }
  c.next = next_steps(yaml::parse(text, c.path), c.path, to.parent_path().string());
  return c;
}

}  // namespace harness::campaign
