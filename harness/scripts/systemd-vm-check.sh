#!/usr/bin/env bash
# The operator's path on a real systemd VM, end to end: builds a Debian 12
# root file system with debootstrap (systemd, the Debian cloud kernel), installs the
# reclaim-harness .deb into it with apt-get (its Debian dependencies resolved from the
# mirror), enables the agent with systemctl, boots it as a 1-vCPU/1-GiB qemu guest and
# checks, from the host, over HTTPS with the certificate's public-key pin:
#   1. GET /v1/health answers (the prepare unit ran, the agent started on its own);
#   2. GET /v1/qualification passes (every required check);
#   3. POST /v1/reboot (the package enables --allow-reboot) brings the VM back with a new
#      boot id (systemd's orderly reboot path), and it qualifies again.
# Long (about 10-20 min under TCG, network needed for debootstrap): a script, not a CI test.
# Usage: harness/scripts/systemd-vm-check.sh [WORKDIR]   (root; needs debootstrap, qemu,
# e2fsprogs, openssl, curl). Prints each step and PASS/FAIL; exit 0 only when all pass.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-/tmp/systemd-vm-check}
mirror=${MIRROR:-http://deb.debian.org/debian}
accel=${HARNESS_ACCEL:-tcg}
mkdir -p "$work"
log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*"; }
fail() { log "FAIL: $*"; exit 1; }
command -v debootstrap >/dev/null || fail "debootstrap missing (apt-get install debootstrap)"

deb=$("$root/harness/scripts/package.sh")
log "package: $deb"
rfs=$work/rootfs
if [ ! -e "$rfs/.done" ]; then
  rm -rf "$rfs"
  log "debootstrap bookworm into $rfs (minbase + systemd + cloud kernel)"
  debootstrap --variant=minbase \
    --include=systemd,systemd-sysv,udev,dbus,linux-image-cloud-amd64,initramfs-tools,kmod,iproute2,ca-certificates \
    bookworm "$rfs" "$mirror" >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log"; fail debootstrap; }
  touch "$rfs/.done"
fi

log "install the package with apt-get in the root file system, enable the agent"
cp "$deb" "$rfs/tmp/reclaim-harness.deb"
mount --bind /proc "$rfs/proc"; mount --bind /sys "$rfs/sys"; mount --bind /dev "$rfs/dev"
cp /etc/resolv.conf "$rfs/etc/resolv.conf"
trap 'umount "$rfs/proc" "$rfs/sys" "$rfs/dev" 2>/dev/null || true' EXIT
chroot "$rfs" apt-get install -y /tmp/reclaim-harness.deb >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log"; fail "apt-get install"; }
chroot "$rfs" systemctl enable reclaim-harness-agent >>"$work/apt.log" 2>&1 || fail "systemctl enable"
umount "$rfs/proc" "$rfs/sys" "$rfs/dev"; trap - EXIT

# What a researcher's cloud-init would provide: a token, a certificate (its pin known to the
# workstation), DHCP on the NIC, a root password-less console.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=vm0 \
  -keyout "$work/agent.key" -out "$work/agent.pem" 2>/dev/null
install -m 0600 "$work/agent.key" "$rfs/etc/reclaim-harness/agent.key"
install -m 0644 "$work/agent.pem" "$rfs/etc/reclaim-harness/agent.pem"
head -c 32 /dev/urandom | base64 > "$work/agent.token"; chmod 600 "$work/agent.token"
install -m 0600 "$work/agent.token" "$rfs/etc/reclaim-harness/agent.token"
echo vm0 > "$rfs/etc/hostname"
printf '/dev/vda / ext4 rw,relatime 0 1\n' > "$rfs/etc/fstab"
mkdir -p "$rfs/etc/systemd/network"
printf '[Match]\nName=en* eth*\n[Network]\nDHCP=yes\n' > "$rfs/etc/systemd/network/50-dhcp.network"
chroot "$rfs" systemctl enable systemd-networkd >/dev/null 2>&1 || true
pin=$("$root/build/harness/cli/harness" fleet pin "$work/agent.pem")
kernel=$(ls "$rfs"/boot/vmlinuz-* | head -1); initrd=$(ls "$rfs"/boot/initrd.img-* | head -1)
cp "$kernel" "$work/vmlinuz"; cp "$initrd" "$work/initrd.img"

log "ext4 image from the root file system (6 GiB sparse: qualification wants 2 GiB free)"
rm -f "$work/disk.img"
truncate -s 6G "$work/disk.img"
mkfs.ext4 -q -F -d "$rfs" "$work/disk.img"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
log "boot: qemu $accel, 1 vCPU, 1 GiB, agent on https://127.0.0.1:$port"
qemu-system-x86_64 -machine q35 -accel "$accel" -cpu max -smp 1 -m 1024 \
  -kernel "$work/vmlinuz" -initrd "$work/initrd.img" -append "root=/dev/vda rw console=ttyS0 panic=-1" \
  -drive "file=$work/disk.img,format=raw,if=virtio" -display none -monitor none \
  -serial "file:$work/console.log" -netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$port-:8080" \
  -device virtio-net-pci,netdev=n0 -pidfile "$work/qemu.pid" -daemonize
trap 'kill "$(cat "$work/qemu.pid")" 2>/dev/null || true' EXIT
api() {  # METHOD PATH: curl with the pin and the token; prints the body
  curl -sS --max-time 60 -k --pinnedpubkey "$pin" -H "Authorization: Bearer $(cat "$work/agent.token")" \
    -X "$1" "https://127.0.0.1:$port$2"
}
wait_health() {  # BOOT_ID_TO_LEAVE: waits for health with another boot id; prints the new one
  local t0=$SECONDS
  while [ $((SECONDS - t0)) -lt 900 ]; do
    if b=$(api GET /v1/health 2>/dev/null) && id=$(printf '%s' "$b" | python3 -c 'import json,sys; print(json.load(sys.stdin)["boot_id"])' 2>/dev/null); then
      if [ -n "$id" ] && [ "$id" != "$1" ]; then echo "$id"; return 0; fi
    fi
    sleep 3
  done
  return 1
}
qualifies() {
  api GET /v1/qualification > "$work/qualification-$1.json"
  python3 - "$work/qualification-$1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for c in r.get("checks", []):
    print(f"  {'ok ' if c.get('passed') else 'BAD'} {c.get('name')}: {c.get('found', '')}")
sys.exit(0 if r.get("passed") else 1)
PY
}
t0=$SECONDS
boot1=$(wait_health none) || { tail -30 "$work/console.log"; fail "agent did not answer within 900 s"; }
log "PASS health: agent up $((SECONDS - t0)) s after qemu start (boot id $boot1)"
qualifies first && log "PASS qualification (installed by apt-get, started by systemd)" || fail "qualification (see $work/qualification-first.json)"
log "POST /v1/reboot: $(api POST /v1/reboot)"
t1=$SECONDS
boot2=$(wait_health "$boot1") || { tail -30 "$work/console.log"; fail "no new boot id within 900 s after POST /v1/reboot"; }
log "PASS reboot: back $((SECONDS - t1)) s later with boot id $boot2"
qualifies second && log "PASS qualification after the reboot" || fail "qualification after the reboot"
log "all checks passed (work dir $work)"
