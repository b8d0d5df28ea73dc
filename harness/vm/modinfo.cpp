// .modinfo ELF section reader and dependency ordering (see modinfo.hpp).
#include "harness/vm/modinfo.hpp"

#include <elf.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace harness::vm {

std::vector<std::pair<std::string, std::string>> read_modinfo(const std::string& ko_path) {
  std::ifstream in(ko_path, std::ios::binary);
  if (!in) throw std::runtime_error("modinfo: cannot read " + ko_path);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto fail = [&](const std::string& why) {
    return std::runtime_error("modinfo: " + ko_path + ": " + why);
  };
  if (data.size() < sizeof(Elf64_Ehdr) || std::memcmp(data.data(), ELFMAG, SELFMAG) != 0)
    throw fail("not an ELF file (compressed modules are not supported)");
  Elf64_Ehdr eh;
  std::memcpy(&eh, data.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) throw fail("not ELF64");
  if (eh.e_shoff == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shoff + static_cast<std::uint64_t>(eh.e_shnum) * sizeof(Elf64_Shdr) > data.size() ||
      eh.e_shstrndx >= eh.e_shnum)
    throw fail("bad section header table");
  auto shdr = [&](unsigned i) {
    Elf64_Shdr s;
    std::memcpy(&s, data.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof s);
    return s;
  };
  Elf64_Shdr strtab = shdr(eh.e_shstrndx);
  if (strtab.sh_offset + strtab.sh_size > data.size()) throw fail("bad section name table");
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr s = shdr(i);
    if (s.sh_name >= strtab.sh_size) continue;
    const char* name = data.data() + strtab.sh_offset + s.sh_name;
    if (std::strncmp(name, ".modinfo", strtab.sh_size - s.sh_name) != 0) continue;
    if (s.sh_offset + s.sh_size > data.size()) throw fail(".modinfo out of bounds");
    std::vector<std::pair<std::string, std::string>> kv;
    std::string sec(data.data() + s.sh_offset, s.sh_size);
    std::size_t pos = 0;
    while (pos < sec.size()) {
      std::size_t end = sec.find('\0', pos);
      if (end == std::string::npos) end = sec.size();
      std::string entry = sec.substr(pos, end - pos);
      pos = end + 1;
      if (entry.empty()) continue;
      auto eq = entry.find('=');
      if (eq == std::string::npos) continue;
      kv.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
    }
    return kv;
  }
  throw fail("no .modinfo section");
}

std::vector<std::string> module_depends(const std::string& ko_path) {
  std::vector<std::string> deps;
  for (const auto& [k, v] : read_modinfo(ko_path)) {
    if (k != "depends") continue;
    std::stringstream ss(v);
    std::string d;
    while (std::getline(ss, d, ',')) {
      if (d.empty()) continue;
      for (char& c : d) c = (c == '-') ? '_' : c;
      deps.push_back(d);
    }
  }
  return deps;
}

std::string module_name_of(const std::string& ko_path) {
  std::string n = fs::path(ko_path).filename().string();
  auto dot = n.find(".ko");
  if (dot != std::string::npos) n = n.substr(0, dot);
  for (char& c : n) c = (c == '-') ? '_' : c;
  return n;
}

std::map<std::string, std::string> index_modules(const std::string& modules_dir) {
  std::map<std::string, std::string> idx;
  if (!fs::is_directory(modules_dir))
    throw std::runtime_error("modules: not a directory: " + modules_dir);
  for (const auto& e : fs::recursive_directory_iterator(modules_dir)) {
    if (!e.is_regular_file()) continue;
    const std::string p = e.path().string();
    if (p.size() > 3 && p.compare(p.size() - 3, 3, ".ko") == 0) idx[module_name_of(p)] = p;
  }
  return idx;
}

std::vector<std::string> read_builtin(const std::string& modules_dir) {
  std::vector<std::string> r;
  std::ifstream in(fs::path(modules_dir) / "modules.builtin");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) r.push_back(module_name_of(line));
  return r;
}

std::vector<std::string> module_load_order(const std::map<std::string, std::string>& index,
                                           const std::vector<std::string>& wanted,
                                           const std::vector<std::string>& builtin) {
  std::set<std::string> builtin_set(builtin.begin(), builtin.end());
  std::vector<std::string> order;
  std::set<std::string> done, visiting;
  std::function<void(const std::string&, const std::string&)> visit =
      [&](const std::string& raw, const std::string& needed_by) {
        std::string name = raw;
        for (char& c : name) c = (c == '-') ? '_' : c;
        if (done.count(name) || builtin_set.count(name)) return;
        if (visiting.count(name))
          throw std::runtime_error("modules: dependency cycle through " + name);
        auto it = index.find(name);
        if (it == index.end())
          throw std::runtime_error("modules: module '" + name + "' not found" +
                                   (needed_by.empty() ? "" : " (needed by " + needed_by + ")"));
        visiting.insert(name);
        for (const auto& d : module_depends(it->second)) visit(d, name);
        visiting.erase(name);
        done.insert(name);
        order.push_back(it->second);
      };
  for (const auto& w : wanted) visit(w, "");
  return order;
}

}  // namespace harness::vm
