#!/usr/bin/env bash
# Installs the Debian packages the test suite and the lab need, only those that are missing,
# so a fresh machine and a warm one both end up with the same tools.
set -euo pipefail

packages=(
  iproute2 procps psmisc kmod curl     # namespaces, process control, HTTP probes
  keepalived tcpdump iputils-arping    # VRRP interop peers and wire captures
  nginx-light                          # real servers
  bird2                                # the BGP speaker lvsd drives, and the router peering with it (bgp tests)
  nftables conntrack                   # nftables dataplane (conntrack: forgets the closed connections of removed real servers)
  dnsmasq                              # a real DNS server for the DNS checker
  opensmtpd                            # a real SMTP server for the SMTP checker (the tests run their own smtpd -d in a namespace)
  openssl                              # self-signed certificates for the HTTPS checker tests
  haproxy wrk                          # benchmark anchors and load
  qemu-system-x86 busybox-static ipvsadm xz-utils   # the real-IPVS test guest (xz: unpack the kernel)
  chromium                             # the panel's browser tests
  systemd                              # systemd-analyze verify / systemd-sysusers for the unit's tests
  python3                              # a $NOTIFY_SOCKET listener (unix datagrams) for the sd_notify test
  libfaketime faketime                 # wall-clock jumps under a running lvsd (lab chaos test); monotonic time left alone
  prometheus                           # the graphs drawn from a real Prometheus (api.prometheus)
  build-essential                      # node-gyp builds the net addon (daemon/net/native) in npm ci
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#packages[@]} Debian packages present"
fi
