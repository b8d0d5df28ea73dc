#pragma once
// Kernel module metadata and load order without kmod: reads the `.modinfo` ELF section
// of each .ko (NUL-separated key=value strings) and orders modules by `depends=`.
// Needed because the Debian cloud kernel package ships no modules.dep (docs/DESIGN.md "Local VMs").
#include <map>
#include <string>
#include <vector>

namespace harness::vm {

/// The `.modinfo` key=value pairs of one module file, in file order (keys repeat, e.g. alias).
/// Throws std::runtime_error naming the file when it is not a readable ELF64 object or
/// has no .modinfo section. Compressed modules (.ko.xz/.zst) are not supported.
std::vector<std::pair<std::string, std::string>> read_modinfo(const std::string& ko_path);

/// Module names listed in `depends=` (comma separated; empty list when none).
std::vector<std::string> module_depends(const std::string& ko_path);

/// Canonical module name: file stem with '-' replaced by '_' ("lzo-rle.ko" -> "lzo_rle").
std::string module_name_of(const std::string& ko_path);

/// Index of a modules tree (e.g. lib/modules/6.1.0-57-cloud-amd64): module name -> .ko path.
std::map<std::string, std::string> index_modules(const std::string& modules_dir);

/// The modules `wanted` plus all their dependencies, in an order where each module follows
/// its dependencies (insmod order). `index` from index_modules(). Names already built in
/// (listed in `builtin`, canonical names) are skipped. Throws std::runtime_error naming the
/// module when a wanted module or a dependency is missing, or on a dependency cycle.
std::vector<std::string> module_load_order(const std::map<std::string, std::string>& index,
                                           const std::vector<std::string>& wanted,
                                           const std::vector<std::string>& builtin = {});

/// Names of built-in modules from `modules.builtin` (lines like kernel/fs/ext4/ext4.ko);
/// empty when the file is missing.
std::vector<std::string> read_builtin(const std::string& modules_dir);

}  // namespace harness::vm
