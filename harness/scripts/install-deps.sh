#!/usr/bin/env bash
# Installs every Debian 12 package the harness needs: build, tests, local VMs,
# figures, the VM package (dpkg-dev: dpkg-shlibdeps; systemd: systemd-analyze verify), the
# libvirt engine and its guest test (libvirt-dev; libvirtd, virtlogd; sshd and ssh for qemu+ssh),
# iptables (the partition guest test blocks an agent's forwarded port), rt-tests (cyclictest: the
# workload bench and the in-guest latency reference, tests/bench/workloads/guest_latency_reference.sh,
# which puts it into its guest image), universal-ctags (the function-length convention test,
# tests/unit/conventions/check_function_length.py), python3-jsonschema and python3-rfc3987 (the
# KCIDB file of `harness check --kcidb` validated against its schema, with URI formats checked:
# tests/unit/check/kcidb_validate.py), chromium (report.html rendered in a headless browser,
# tests/unit/report/html_render_check.py).
# Idempotent: packages already present are left alone. Needs root.
set -euo pipefail
PACKAGES=(
  build-essential cmake pkg-config git
  libsqlite3-dev sqlite3 libcurl4-openssl-dev libyaml-cpp-dev libeigen3-dev libboost-dev
  pybind11-dev python3-dev python3-numpy python3-matplotlib python3-jsonschema python3-rfc3987
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libexpected-dev nlohmann-json3-dev libcpp-httplib-dev libfmt-dev libspdlog-dev libssl-dev zlib1g-dev
  qemu-system-x86 busybox-static e2fsprogs cpio curl ca-certificates
  libvirt-dev libvirt-daemon-system libvirt-daemon-driver-qemu openssh-server openssh-client
  rt-tests zstd lz4 chromium
  dpkg-dev openssl systemd iptables universal-ctags
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# `harness vm image` resolves and downloads the guest kernel with apt: the package
# lists must know linux-image-cloud-amd64.
lists_ok=1
apt-cache show linux-image-cloud-amd64 >/dev/null 2>&1 || lists_ok=0
if ((${#missing[@]} == 0 && lists_ok == 1)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages: ${missing[*]}; run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
if ((${#missing[@]} > 0)); then
  echo "install-deps: installing ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
