#!/usr/bin/env bash
# A one-machine libvirt "lab" for guest tests (these machines and CI have no systemd):
#
#   libvirt_lab.sh start DIR   starts what is missing of virtlogd and libvirtd, and an sshd
#                              on a free 127.0.0.1 port that accepts a key made here for root;
#                              writes DIR/lab.env (KEY=VALUE lines, see below)
#   libvirt_lab.sh stop DIR    stops, by the pids in DIR, only what `start DIR` started
#
# DIR/lab.env:
#   LAB_SSH_PORT=PORT
#   LAB_SSH_URI=qemu+ssh://root@127.0.0.1:PORT/system?keyfile=DIR/client_key&command=DIR/ssh&no_tty=1
#   LAB_SYSTEM_URI=qemu:///system
# DIR/ssh is `ssh` with this lab's known_hosts (the sshd's host key, made here): nothing is
# written to ~/.ssh, and host keys are still checked. Needs root (libvirtd, sshd).
# The daemons start with no file descriptor of the caller beyond stdin/out/err: a caller's
# lock (the file a `flock` around the test holds) is never held by a daemon that outlives
# it. Every lab is listed in /run/reclaim-harness-labs with the pid of the process that
# started it (the test, the first ancestor that is not a shell): `start` first stops the
# daemons of every listed lab whose starter is gone (a test killed before its `stop`).
# /dev/kvm: a Debian host with udev has it root:kvm 0660 (libvirt-qemu, the user libvirtd
# runs qemu as, is in group kvm). These machines have no udev and leave it root:root 0600:
# libvirtd (root) can open it and qemu cannot, and libvirt then finds its cached qemu
# capabilities (KVM usable) at odds with the qemu user's access and probes qemu again before
# every domain start (about 55 s each on a 2-core TCG machine: 6 of the 7 minutes of
# libvirt_boot_vm_test). `start` sets root:kvm 0660 as udev would and says so; `stop` puts
# back the owner and mode it found. LIBVIRT_LAB_KVM=as-found leaves /dev/kvm as it is (to see
# the engine name that cause: harness/pool/libvirt/slow_start.hpp).
# A test uses it as tests/vm/pool_libvirt/libvirt_boot_vm_test.cpp does: `start` in its
# set-up, the two URIs as provider hosts, `stop` in its tear-down (also after a failure).
set -euo pipefail

cmd=${1:-}
dir=${2:-}
[[ -n "$cmd" && -n "$dir" ]] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local t=$1 what=$2
  shift 2
  for ((i = 0; i < t * 10; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "libvirt_lab: $what not ready within $t s" >&2
  return 1
}

alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Runs "$@" with every inherited descriptor above 2 closed.
without_inherited_fds() {
  (
    for fd in /proc/self/fd/*; do
      n=${fd##*/}
      if ((n > 2)); then eval "exec $n>&-"; fi
    done 2>/dev/null
    exec "$@"
  )
}

registry=/run/reclaim-harness-labs

# The pid of the first ancestor that is not a shell running this script (the test).
starter_pid() {
  local pid=$PPID comm
  while ((pid > 1)); do
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || break
    case "$comm" in sh | bash | dash | libvirt_lab.sh) pid=$(awk '{print $4}' "/proc/$pid/stat") ;; *) break ;; esac
  done
  echo "$pid"
}

# Stops the daemons of every listed lab whose starter is gone.
stop_stale_labs() {
  mkdir -p "$registry"
  local f d owner
  for f in "$registry"/*; do
    [[ -f "$f" ]] || continue
    read -r d owner < "$f" || continue
    if ! kill -0 "$owner" 2>/dev/null; then
      echo "libvirt_lab: lab $d left by a process that is gone ($owner): stopping its daemons"
      dir=$d stop
      rm -f "$f"
    fi
  done
}

# /dev/kvm as udev leaves it (see the header); the mode found is kept in DIR/kvm.mode.
kvm_as_udev_leaves_it() {
  [[ -c /dev/kvm ]] && getent group kvm >/dev/null || return 0
  if [[ "${LIBVIRT_LAB_KVM:-}" == as-found ]]; then
    echo "libvirt_lab: /dev/kvm left as found ($(stat -c '%U:%G mode %a' /dev/kvm)): LIBVIRT_LAB_KVM=as-found"
    return 0
  fi
  [[ "$(stat -c '%G %a' /dev/kvm)" == "kvm 660" ]] && return 0
  local was
  was=$(stat -c '%U:%G mode %a' /dev/kvm)
  stat -c '%u:%g %a' /dev/kvm > "$dir/kvm.mode"
  chgrp kvm /dev/kvm && chmod 0660 /dev/kvm
  echo "libvirt_lab: /dev/kvm was $was; set root:kvm 0660 as udev does (stop restores it)"
}

kvm_restore() {
  [[ -f "$dir/kvm.mode" ]] || return 0
  local owner mode
  read -r owner mode < "$dir/kvm.mode"
  chown "$owner" /dev/kvm && chmod "$mode" /dev/kvm
  rm -f "$dir/kvm.mode"
  echo "libvirt_lab: /dev/kvm back to $owner mode $mode"
}

start() {
  mkdir -p "$dir" /var/log/libvirt /run/sshd
  dir=$(cd "$dir" && pwd)
  local here=$dir
  stop_stale_labs
  dir=$here
  echo "$dir $(starter_pid)" > "$registry/$(echo "$dir" | sha256sum | cut -c1-16)"
  kvm_as_udev_leaves_it
  # libvirt: only when no daemon answers (another test's or the machine's stays untouched)
  if ! virsh -c qemu:///system version >/dev/null 2>&1; then
    if [[ ! -S /run/libvirt/virtlogd-sock ]] || ! alive /run/virtlogd.pid; then
      without_inherited_fds virtlogd --daemon --pid-file "$dir/virtlogd.pid"
      wait_for 10 virtlogd test -S /run/libvirt/virtlogd-sock
    fi
    without_inherited_fds libvirtd --daemon --pid-file "$dir/libvirtd.pid"
    wait_for 30 libvirtd virsh -c qemu:///system version
  fi
  # sshd on loopback with keys made here
  rm -f "$dir"/host_key* "$dir"/client_key*
  ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
  ssh-keygen -q -t ed25519 -N '' -f "$dir/client_key"
  cp "$dir/client_key.pub" "$dir/authorized_keys"
  local port
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  cat > "$dir/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowTcpForwarding yes
EOF
  without_inherited_fds /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log"
  wait_for 10 sshd test -s "$dir/sshd.pid"
  echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$dir/host_key.pub")" > "$dir/known_hosts"
  cat > "$dir/ssh" <<EOF
#!/bin/sh
exec ssh -o UserKnownHostsFile=$dir/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes "\$@"
EOF
  chmod 755 "$dir/ssh"
  local uri="qemu+ssh://root@127.0.0.1:$port/system?keyfile=$dir/client_key&command=$dir/ssh&no_tty=1"
  wait_for 20 "libvirt over ssh" virsh -c "$uri" version
  cat > "$dir/lab.env" <<EOF
LAB_SSH_PORT=$port
LAB_SSH_URI=$uri
LAB_SYSTEM_URI=qemu:///system
EOF
  echo "libvirt_lab: ready ($uri)"
}

stop_pid() {  # stop_pid PIDFILE NAME
  local f=$1 pid
  [[ -f "$f" ]] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  rm -f "$f"
  echo "libvirt_lab: stopped $2 ($pid)"
}

stop() {
  [[ -d "$dir" ]] || return 0
  stop_pid "$dir/sshd.pid" sshd
  stop_pid "$dir/libvirtd.pid" libvirtd
  stop_pid "$dir/virtlogd.pid" virtlogd
  kvm_restore
  rm -f "$registry/$(echo "$(cd "$dir" && pwd)" | sha256sum | cut -c1-16)"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
