#!/bin/bash
# Manual demo (not a test): the three workloads in a 1-vCPU / 1-GiB qemu guest (TCG when
# there is no /dev/kvm) with cgroup v2 bg/fg siblings, bg memory.max 300M and zram swap
# (lzo-rle, 512M). Phase A: canaries alone for 10 s. Phase B: canaries for 20 s while
# pressure-gen (450 MiB at 32 MiB/s, 128 MiB active set, structured) runs in bg and is
# stopped with SIGTERM after 20 s. Prints the JSON summaries/report and bg PSI, pgsteal,
# swap and zram counters from the guest console.
#   tests/bench/workloads/guest_pressure_demo.sh BUILD_DIR KERNEL_ROOT
# KERNEL_ROOT: an unpacked linux-image-*-cloud-amd64 package (dpkg -x), e.g. /tmp/k/x.
set -euo pipefail
build=$1
kroot=$2
vmlinuz=$(ls "$kroot"/boot/vmlinuz-* | head -1)
release=${vmlinuz##*/vmlinuz-}
kmod=$kroot/lib/modules/$release/kernel
work=$(mktemp -d /tmp/hk-wl-guest.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,mod,lib64,usr/bin}
cp /bin/busybox "$root/bin/busybox"
for b in "$build/pressure/pressure-gen" "$build/canaries/canary-compute" "$build/canaries/canary-sqlite"; do
  cp "$b" "$root/bin/"
  for l in $(ldd "$b" | grep -o '/[^ ]*'); do mkdir -p "$root$(dirname "$l")"; cp -L "$l" "$root$l"; done
done
cp "$kmod/mm/zsmalloc.ko" "$kmod/crypto/lzo.ko" "$kmod/crypto/lzo-rle.ko" "$kmod/drivers/block/zram/zram.ko" "$root/mod/"
cat > "$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev; mount -t tmpfs tmp /tmp
mkdir -p /sys/fs/cgroup; mount -t cgroup2 none /sys/fs/cgroup
for m in zsmalloc lzo lzo-rle zram; do insmod /mod/$m.ko; done
echo lzo-rle > /sys/block/zram0/comp_algorithm; echo 512M > /sys/block/zram0/disksize
mkswap /dev/zram0 >/dev/null; swapon /dev/zram0
echo "+memory +cpu" > /sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/bg /sys/fs/cgroup/fg
echo 300M > /sys/fs/cgroup/bg/memory.max
canary-sqlite prepare --db /tmp/c.db --rows 10000 >/dev/null
# Run "$@" in a cgroup; called with & the background subshell execs, so $! is the workload's pid.
in_fg() { exec sh -c 'echo $$ > /sys/fs/cgroup/fg/cgroup.procs; exec "$@"' sh "$@"; }
in_bg() { exec sh -c 'echo $$ > /sys/fs/cgroup/bg/cgroup.procs; exec "$@"' sh "$@"; }
echo "=== phase A: canaries alone (10 s)"
in_fg canary-compute --duration-s 10 --hot-mib 16 --trace /tmp/a-c.trace > /tmp/a-c.json &
in_fg canary-sqlite run --db /tmp/c.db --duration-s 10 --queries-per-request 8 --trace /tmp/a-s.trace > /tmp/a-s.json &
wait
cat /tmp/a-c.json /tmp/a-s.json
echo "=== phase B: canaries + pressure-gen in bg (20 s, pressure-gen stopped by SIGTERM)"
grep some /sys/fs/cgroup/bg/memory.pressure
in_fg canary-compute --duration-s 20 --hot-mib 16 --trace /tmp/b-c.trace > /tmp/b-c.json &
in_fg canary-sqlite run --db /tmp/c.db --duration-s 20 --queries-per-request 8 --trace /tmp/b-s.trace > /tmp/b-s.json &
in_bg pressure-gen --allocation-mib 450 --rate-mib-s 32 --active-set-mib 128 --contents structured --seed 1 --duration-s 600 > /tmp/p.json &
pg=$!
sleep 20
echo "bg procs: $(cat /sys/fs/cgroup/bg/cgroup.procs | tr '\n' ' ') (pressure-gen pid $pg); fg procs: $(cat /sys/fs/cgroup/fg/cgroup.procs | tr '\n' ' ')"
echo "bg memory.pressure:"; cat /sys/fs/cgroup/bg/memory.pressure
echo "fg memory.pressure:"; cat /sys/fs/cgroup/fg/memory.pressure
grep -E "^(pgsteal|pgscan|workingset_refault_anon|pgmajfault) " /sys/fs/cgroup/bg/memory.stat
grep -E "^(pswpin|pswpout) " /proc/vmstat
echo "zram mm_stat: $(cat /sys/block/zram0/mm_stat)"
kill -TERM $pg
wait
cat /tmp/b-c.json /tmp/b-s.json /tmp/p.json
echo "=== done"
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) > "$work/initrd.gz"
accel=tcg; [ -w /dev/kvm ] && accel=kvm
echo "# accelerator: $accel, kernel $release"
timeout 900 qemu-system-x86_64 -machine q35,accel=$accel -cpu max -smp 1 -m 1024 -nographic -no-reboot \
  -kernel "$vmlinuz" -initrd "$work/initrd.gz" -append "console=ttyS0 rdinit=/init psi=1 quiet" \
  | tr -d '\r' | sed -n '/=== phase A/,/=== done/p'
