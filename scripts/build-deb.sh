#!/usr/bin/env bash
# Builds a Debian package of lvsd with dpkg-deb alone (no debhelper): the program under /usr/lib/lvsd
# with its production node_modules, /usr/bin/lvsd, the systemd unit and sysusers file, and
# /etc/lvsd/lvsd.yaml as a conffile holding the commented example. The postinst creates the lvsd user
# (systemd-sysusers) and leaves the service disabled and stopped: an unconfigured lvsd is not started.
#
#   bash scripts/build-deb.sh [--no-build] [--out DIR]      → DIR/lvsd_VERSION_ARCH.deb (default DIR: dist/deb)
#
# --no-build packages the dist/ and webui/dist already built (and fails naming what is missing);
# without it the script runs `npm run build` first. node_modules is copied from the checkout and
# pruned to the production dependencies offline (`npm prune --omit=dev`): run `npm ci` first.
# Tested by test/netns/deb-package.test.ts (dpkg --root install, check-config, systemd-analyze verify).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

build=1
out=$ROOT/dist/deb
while (($#)); do
  case $1 in
    --no-build) build=0 ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    *) echo "build-deb.sh: unknown argument $1 (want --no-build, --out DIR)" >&2; exit 2 ;;
  esac
  shift
done

for cmd in dpkg-deb dpkg npm node; do
  command -v "$cmd" >/dev/null || { echo "build-deb.sh: $cmd is missing (apt-get install dpkg-dev nodejs)" >&2; exit 1; }
done

((build)) && npm run --silent build
for f in dist/daemon/cli/main.js webui/dist/index.html build/Release/lvsd_net.node build/Release/lvsd_probe.node build/Release/lvsd_relay.node build/Release/lvsd_ipvs.node node_modules/.package-lock.json; do
  [[ -e $f ]] || { echo "build-deb.sh: $f is missing: run npm ci and npm run build (or drop --no-build)" >&2; exit 1; }
done

version=$(node -p 'require("./package.json").version')
arch=$(dpkg --print-architecture)
stage=$(mktemp -d "${TMPDIR:-/tmp}/lvsd-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
lib=$stage/usr/lib/lvsd
doc=$stage/usr/share/doc/lvsd
mkdir -p "$lib" "$stage/usr/bin" "$stage/usr/lib/systemd/system" "$stage/usr/lib/sysusers.d" "$stage/etc/lvsd" "$doc" "$stage/DEBIAN"

# The program, laid out as the npm package is (the addons and the panel are found relative to dist/).
cp -a package.json package-lock.json "$lib/"
mkdir -p "$lib/dist" "$lib/build/Release" "$lib/webui"
cp -a dist/daemon "$lib/dist/"
cp -a build/Release/lvsd_net.node build/Release/lvsd_probe.node build/Release/lvsd_relay.node build/Release/lvsd_ipvs.node "$lib/build/Release/"
cp -a webui/dist "$lib/webui/"
mkdir -p "$lib/config"
cp -a config/lvsd.schema.json config/lvsd.yaml config/examples "$lib/config/"
chmod 0755 "$lib/dist/daemon/cli/main.js"
# Relative, so an unpacked tree (dpkg -x, dpkg --root) runs its own copy.
ln -s ../lib/lvsd/dist/daemon/cli/main.js "$stage/usr/bin/lvsd"

# Production dependencies only, from the checkout's tree (already built native modules included). Hard
# links when the staging folder is on the same file system: prune only unlinks, the checkout keeps its files.
# npm rewrites its hidden lock file in place, so that one is a real copy (through a link it would prune the
# checkout's); the check below fails the build if anything else of the checkout changed.
cp -al node_modules "$lib/" 2>/dev/null || { rm -rf "$lib/node_modules"; cp -a node_modules "$lib/"; }
rm "$lib/node_modules/.package-lock.json"
cp -p node_modules/.package-lock.json "$lib/node_modules/.package-lock.json"
marker=$stage/prune.marker
touch "$marker"
sleep 0.01
(cd "$lib" && npm prune --omit=dev --offline --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
changed=$(find node_modules -newer "$marker" \( -type f -o -type l \) -print -quit)
if [[ -n $changed ]]; then
  echo "build-deb.sh: npm prune changed the checkout's $changed through a hard link: run npm ci" >&2
  exit 1
fi
rm "$marker"
# The lvsd bin link npm made for the checkout, and build leftovers, have no place in the package.
rm -rf "$lib/node_modules/.bin" "$lib/node_modules/.cache" "$lib/node_modules/.vite-temp"
# Nothing Node loads at run time: type declarations, source maps, readmes and changelogs, CI files (half the
# files, so dpkg installs in half the time). Licences stay.
find "$lib/node_modules" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \
  -o -iname 'readme*' -o -iname 'changelog*' -o -iname 'history.md' -o -name '.travis.yml' -o -name '.npmignore' \
  -o -name '.eslintrc*' -o -name '.editorconfig' \) -delete
find "$lib/node_modules" -depth -type d \( -name .github -o -name .vscode \) -exec rm -rf {} +
find "$lib/node_modules" -depth -type d -empty -delete   # scope folders prune emptied (@eslint/, @types/, …)

# systemd: the unit with the package's paths; sysusers.d for the user.
sed -e 's#/usr/local/bin/lvsd#/usr/bin/lvsd#g' \
    -e 's#file:/usr/local/lib/node_modules/lvsd/docs/#file:/usr/share/doc/lvsd/#g' \
    -e 's#^\(\# Install: \).*#\1by the Debian package (scripts/build-deb.sh); see /usr/share/doc/lvsd/install.md.#' \
    -e '/^# with systemd\/lvsd.sysusers as/d' \
    systemd/lvsd.service > "$stage/usr/lib/systemd/system/lvsd.service"
if grep -q '/usr/local' "$stage/usr/lib/systemd/system/lvsd.service"; then
  echo "build-deb.sh: the unit still names /usr/local after rewriting:" >&2
  grep -n '/usr/local' "$stage/usr/lib/systemd/system/lvsd.service" >&2
  exit 1
fi
cp systemd/lvsd.sysusers "$stage/usr/lib/sysusers.d/lvsd.conf"

# The conffile: the shipped example, every line a comment, so lvsd has nothing to run until it is written.
{
  cat <<'EOF'
# yaml-language-server: $schema=/usr/lib/lvsd/config/lvsd.schema.json
#
# /etc/lvsd/lvsd.yaml: this director's lvsd configuration. As installed every line is a comment, so
# there is nothing to run: lvsd check-config (and so lvsd.service) refuses the file until it is written,
# and the package leaves lvsd.service disabled and stopped. To configure:
#   write the config (the example below; every key: /usr/share/doc/lvsd/config.md;
#   from keepalived: lvsd import-keepalived /etc/keepalived/keepalived.conf > /etc/lvsd/lvsd.yaml)
#   lvsd check-config /etc/lvsd/lvsd.yaml
#   systemctl enable --now lvsd
# This file is a conffile: upgrades keep your edits.
#
EOF
  sed -e 's/^/# /' -e 's/^# $/#/' config/lvsd.yaml
} > "$stage/etc/lvsd/lvsd.yaml"
chmod 0640 "$stage/etc/lvsd/lvsd.yaml"

# Docs.
cp README.md "$doc/"
cp docs/*.md "$doc/"
cp LICENSE "$doc/copyright"
gzip -9n -c CHANGELOG.md > "$doc/changelog.gz"

# Control files.
installed_kb=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat > "$stage/DEBIAN/control" <<EOF
Package: lvsd
Version: $version
Architecture: $arch
Maintainer: lvsd developers <lvsd@localhost>
Installed-Size: $installed_kb
Depends: nodejs (>= 20.19), systemd
Recommends: ipvsadm
Suggests: nftables, conntrack
Section: net
Priority: optional
Description: keepalived/LVS-style load balancer director
 lvsd runs a Linux director of a high-availability pair: VRRP failover of the
 virtual IPs, the kernel's IP Virtual Server table (NAT, DR, TUN) or nftables,
 health checks of the real servers, a CLI, a REST API and a web panel.
EOF
echo /etc/lvsd/lvsd.yaml > "$stage/DEBIAN/conffiles"

# Maintainer scripts. DPKG_ROOT is set when dpkg installs into another root (dpkg --root with
# --force-script-chrootless): then the running system's systemd is none of our business.
cat > "$stage/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
  # The user and group lvsd runs as (sysusers.d, idempotent).
  systemd-sysusers ${DPKG_ROOT:+--root="$DPKG_ROOT"} lvsd.conf
  if [ -z "$2" ]; then
    # First install: the config may hold VRRP passwords; root writes it, the lvsd group reads it.
    gid=$(awk -F: '$1 == "lvsd" { print $3 }' "$DPKG_ROOT/etc/group")
    chgrp "$gid" "$DPKG_ROOT/etc/lvsd/lvsd.yaml"
    chmod 0640 "$DPKG_ROOT/etc/lvsd/lvsd.yaml"
  fi
  if [ -z "$DPKG_ROOT" ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    # Not enabled, not started: an unconfigured lvsd has nothing to do. An upgrade restarts a running
    # lvsd so it runs the new files (on a pair, upgrade the backup first: docs/operations.md).
    if [ -n "$2" ]; then
      systemctl try-restart lvsd.service || echo "lvsd: the restart after the upgrade failed: systemctl status lvsd" >&2
    fi
  fi
  if [ -z "$2" ]; then
    echo "lvsd: installed, not enabled. Write /etc/lvsd/lvsd.yaml, run lvsd check-config /etc/lvsd/lvsd.yaml, then systemctl enable --now lvsd."
  fi
fi
exit 0
EOF
cat > "$stage/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
# Stop lvsd before its files go (SIGTERM: priority-0 advert, VIPs released, IPVS entries kept).
if [ "$1" = remove ] && [ -z "$DPKG_ROOT" ] && [ -d /run/systemd/system ]; then
  systemctl stop lvsd.service || true
fi
exit 0
EOF
cat > "$stage/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
case "$1" in
  remove)
    if [ -z "$DPKG_ROOT" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
    ;;
  purge)
    # dpkg removes the conffile itself; the operator state (users, overrides, audit log) goes with a purge.
    rm -rf "$DPKG_ROOT/var/lib/lvsd"
    rm -f "$DPKG_ROOT/etc/systemd/system/multi-user.target.wants/lvsd.service"
    rmdir "$DPKG_ROOT/etc/lvsd" 2>/dev/null || true
    if [ -z "$DPKG_ROOT" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
    ;;
esac
exit 0
EOF
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm" "$stage/DEBIAN/postrm"

mkdir -p "$out"
deb=$out/lvsd_${version}_${arch}.deb
# xz at level 1: a quarter of the time of the default level for a few percent more size.
dpkg-deb --root-owner-group -Zxz -z1 --build "$stage" "$deb" >/dev/null
echo "$deb"
