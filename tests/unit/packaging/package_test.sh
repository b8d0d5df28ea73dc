#!/usr/bin/env bash
# The VM package for real VMs: builds reclaim-harness_<version>_amd64.deb with
# CPack from this build, then checks its contents, its Debian dependencies, its units
# (systemd-analyze verify) and an installation into a fresh dpkg root, from which
# `harness --version` and `harness qualify --help` run.
# Usage: package_test.sh BUILD_DIR VERSION
set -euo pipefail
build=$1 version=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cpack --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; fail "cpack"; }
deb="$tmp/out/reclaim-harness_${version}_amd64.deb"
[ -f "$deb" ] || fail "no $deb (got: $(ls "$tmp/out"))"

# Contents.
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' > "$tmp/files"
for f in /usr/lib/reclaim-harness/harness /usr/lib/reclaim-harness/harness-agent /usr/lib/reclaim-harness/harness-case \
         /usr/lib/reclaim-harness/pressure-gen /usr/lib/reclaim-harness/canary-compute \
         /usr/lib/reclaim-harness/canary-sqlite /usr/lib/reclaim-harness/prepare-vm /usr/bin/harness \
         /lib/systemd/system/reclaim-harness-agent.service /lib/systemd/system/reclaim-harness-prepare.service \
         /etc/reclaim-harness/agent.env /lib/modules-load.d/reclaim-harness.conf /usr/share/doc/reclaim-harness/README.md; do
  grep -qx "$f" "$tmp/files" || fail "package lacks $f"
done
grep -q '^/usr/lib/reclaim-harness/harness_analysis' "$tmp/files" && fail "workstation-only module packaged"
dpkg-deb -I "$deb" conffiles | grep -qx /etc/reclaim-harness/agent.env || fail "agent.env is not a conffile"
for s in postinst prerm; do dpkg-deb -I "$deb" "$s" >/dev/null || fail "no $s"; done

# Dependencies: every package named exists in the Debian archive apt knows.
deps=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $deps"
echo "$deps" | grep -q 'libsqlite3' || fail "shlibdeps did not add libsqlite3"
for p in $(echo "$deps" | tr ',|' '\n\n' | sed 's/(.*//; s/ //g' | sort -u); do
  apt-cache show "$p" >/dev/null 2>&1 || fail "dependency $p is not a Debian package apt knows"
done
apt-get install --simulate -y "$deb" >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; fail "apt cannot resolve the dependencies"; }

# Units: systemd-analyze verify against the unpacked package (ExecStart binaries exist
# there), with this system's own units beside them for the targets they order against.
mkdir -p "$tmp/x"
dpkg-deb -x "$deb" "$tmp/x"
cp -rn /lib/systemd/system/. "$tmp/x/lib/systemd/system/"
grep -q '^NoNewPrivileges=yes' "$tmp/x/lib/systemd/system/reclaim-harness-agent.service" || fail "agent unit not hardened"
grep -q -- '--token-file /etc/reclaim-harness/agent.token' "$tmp/x/lib/systemd/system/reclaim-harness-agent.service" \
  || fail "agent unit does not read the token file"
( cd "$tmp/x" && systemd-analyze verify --root="$tmp/x" --man=no \
    lib/systemd/system/reclaim-harness-agent.service lib/systemd/system/reclaim-harness-prepare.service ) \
  >"$tmp/verify.log" 2>&1 || { cat "$tmp/verify.log"; fail "systemd-analyze verify"; }
if grep -E 'reclaim-harness-(agent|prepare)\.service:' "$tmp/verify.log"; then fail "systemd-analyze verify complained"; fi

# Install into a fresh dpkg root; run the binaries from there.
r="$tmp/root"
mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/var/lib/dpkg/triggers"
touch "$r/var/lib/dpkg/status" "$r/var/lib/dpkg/available"
dpkg --root="$r" --force-depends --force-script-chrootless --log=/dev/null -i "$deb" >"$tmp/dpkg.log" 2>&1 \
  || { cat "$tmp/dpkg.log"; fail "dpkg --root install"; }
dpkg --root="$r" -s reclaim-harness | grep -qx 'Status: install ok installed' || fail "not installed in $r"
out=$("$r/usr/bin/harness" --version)
echo "$out"
echo "$out" | grep -q "$version" || fail "harness --version: $out"
"$r/usr/bin/harness" qualify --help | grep -q -- '--swapfile' || fail "harness qualify --help"
[ "$(stat -c %a "$r/usr/lib/reclaim-harness/prepare-vm")" = 755 ] || fail "prepare-vm not executable"

# First-boot preparation, run from the installed package into a scratch directory.
v="$tmp/vm"
mkdir -p "$v/etc"
prep() {
  HARNESS_ETC_DIR="$v/etc" HARNESS_SWAPFILE="$v/lib/swapfile" HARNESS_SWAPFILE_MIB=8 \
    HARNESS_CANARY_DB="$v/lib/canary.db" "$r/usr/lib/reclaim-harness/prepare-vm"
}
prep >"$tmp/prep1.log" 2>&1 || { cat "$tmp/prep1.log"; fail "prepare-vm"; }
[ "$(stat -c %s "$v/lib/swapfile")" = $((8 << 20)) ] || fail "swapfile size"
# no holes: every byte allocated (swapon refuses sparse files)
[ $(( $(stat -c %b "$v/lib/swapfile") * $(stat -c %B "$v/lib/swapfile") )) -ge $((8 << 20)) ] || fail "swapfile has holes"
[ "$(dd if="$v/lib/swapfile" bs=1 skip=4086 count=10 status=none)" = SWAPSPACE2 ] || fail "swapfile not mkswap'ed"
[ "$(stat -c %a "$v/lib/swapfile")" = 600 ] || fail "swapfile mode"
[ "$(stat -c %a "$v/etc/agent.token")" = 600 ] || fail "token mode"
[ "$(stat -c %a "$v/etc/agent.key")" = 600 ] || fail "key mode"
[ "$(cat "$v/etc/agent.pin")" = "$("$r/usr/bin/harness" fleet pin "$v/etc/agent.pem")" ] || fail "agent.pin"
rows=$(sqlite3 "$v/lib/canary.db" 'SELECT count(*) FROM sqlite_master')
[ "$rows" -gt 0 ] || fail "canary database empty"
sum1=$(cd "$v" && find . -type f -exec sha256sum {} + | sort)
prep >"$tmp/prep2.log" 2>&1 || { cat "$tmp/prep2.log"; fail "prepare-vm (second run)"; }
[ "$sum1" = "$(cd "$v" && find . -type f -exec sha256sum {} + | sort)" ] || fail "prepare-vm is not idempotent"
grep -q 'created' "$tmp/prep2.log" && fail "second run created something: $(cat "$tmp/prep2.log")"
echo "PASS: $deb"
