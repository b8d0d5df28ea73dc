#pragma once
// Umbrella header of hk_kernel, the kernel-interface layer (docs/DESIGN.md "The kernel-interface layer"): include this
// or the single headers below.
#include "harness/kernel/cgroup.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/fs.hpp"
#include "harness/kernel/kconfig.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/memory_stat.hpp"
#include "harness/kernel/open_file.hpp"
#include "harness/kernel/procfs.hpp"
#include "harness/kernel/psi.hpp"
#include "harness/kernel/size.hpp"
#include "harness/kernel/swap.hpp"
#include "harness/kernel/topology.hpp"
#include "harness/kernel/zram.hpp"
#include "harness/kernel/zram_owner.hpp"
