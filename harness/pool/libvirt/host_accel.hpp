#pragma once
// The domain type of a hypervisor's guests, by trial as for local guests
// (harness/vm/accel.hpp): `kvm` only when the host's domain capabilities offer a kvm
// domain for x86_64/q35 AND a trial domain of that type prints the kernel banner ("Linux
// version") on its serial console within the timeout; otherwise `qemu` (TCG), with the
// reason. An explicit `kvm` request that fails either test is an error, never a fallback.
// For a hypervisor on this machine (TrialBoot::host_root set), harness::vm::check_kvm_host
// is asked between the two: a nested-PVM /dev/kvm or a CPU without vmx/svm gives TCG (or the
// error) at once, without the trial domain.
#include "harness/pool/libvirt/storage.hpp"
#include "harness/pool/libvirt/virt.hpp"

#include <string>

namespace harness::pool::libvirt {

/// One host's decision. accelerator is kvm | tcg (the domain type is kvm | qemu).
struct HostAccel {
  std::string accelerator;
  std::string reason;  ///< e.g. "auto: qemu+ssh://hv2/system offers no kvm domain (...)"
};

/// What the trial boot needs: the kernel already on the hypervisor (a volume path), where
/// its console goes, and the transfers to read the console back.
struct TrialBoot {
  virConnectPtr conn = nullptr;
  virStoragePoolPtr pool = nullptr;
  VolumeIo* io = nullptr;
  std::string kernel;        ///< hypervisor path of the guest kernel
  std::string domain_name;   ///< e.g. "harness-kvm-trial"
  int timeout_s = 30;        ///< kernel banner within this, seconds
  /// This machine's root ("/") when the hypervisor is this machine: checked with
  /// harness::vm::check_kvm_host before the trial. "" = a remote host, not checked here.
  std::string host_root;
};

/// Decides for the host behind `t.conn`. `request` is auto | kvm | tcg (already resolved by
/// harness::vm::effective_accel_request). Throws harness::pool::PoolError when kvm was requested
/// and is not offered or the trial fails.
HostAccel choose_host_accelerator(const TrialBoot& t, const std::string& request);

}  // namespace harness::pool::libvirt
