// Why a keepalived directive is not carried over — the text an operator reads on stderr. Specific
// reasons for the directives that real configs use; a generic one for the rest.

const SCHED = 'process scheduling is set by the systemd unit (Nice=, CPUSchedulingPolicy=, CPUAffinity=), not by the config';
const SNMP = 'lvsd has no SNMP/DBus agent; use the REST API and /metrics';
const FIREWALL = 'lvsd installs no iptables rules or ipsets: it does not filter VIPs (keepalived\'s no_accept / vrrp_strict), and its VMAC IGMP/MLD table is nftables (vrrp.nftables)';

const REASONS: Record<string, string> = {
  lvs_id: 'obsolete (keepalived 1.x); use router_id',
  vrrp_priority: SCHED,
  checker_priority: SCHED,
  bfd_priority: SCHED,
  checker_rt_priority: SCHED,
  vrrp_no_swap: SCHED,
  checker_no_swap: SCHED,
  vrrp_cpu_affinity: SCHED,
  checker_cpu_affinity: SCHED,
  max_auto_priority: SCHED,
  min_auto_priority_delay: SCHED,
  vrrp_rlimit_rttime: SCHED,
  checker_rlimit_rttime: SCHED,
  enable_snmp_vrrp: SNMP,
  enable_snmp_checker: SNMP,
  enable_snmp_rfc: SNMP,
  enable_snmp_rfcv2: SNMP,
  enable_snmp_rfcv3: SNMP,
  enable_snmp_keepalived: SNMP,
  enable_traps: SNMP,
  snmp_socket: SNMP,
  enable_dbus: SNMP,
  snmp_name: SNMP,
  vrrp_iptables: FIREWALL,
  vrrp_ipsets: FIREWALL,
  nftables_ifindex: 'lvsd\'s VMAC table always matches interfaces by index (keepalived\'s setting is for its VIP filter rules, which lvsd does not install)',
  vrrp_strict: 'lvsd follows the RFC state machine always; the importer carries what strict mode changes in it (accept mode off, no answer to a lower-priority advert, no lower-priority GARPs); its VIP filter (no_accept) is left to the firewall',
  strict_mode: 'strict RFC mode is not a switch in lvsd; its extra restrictions are not enforced',
  vrrp_skip_check_adv_addr: 'lvsd always checks the advertised addresses',
  skip_check_adv_addr: 'lvsd always checks the advertised addresses',
  mcast_dst_ip: 'lvsd uses the IANA VRRP multicast group',
  lvs_flush: 'lvsd reconciles the IPVS table instead of flushing it',
  lvs_flush_on_stop: 'lvsd leaves IPVS entries in place on stop so traffic keeps flowing',
  static_ipaddress: 'lvsd does not configure static addresses; use the system\'s network configuration',
  static_routes: 'lvsd does not configure static routes; use the system\'s network configuration',
  static_rules: 'lvsd does not configure static rules; use the system\'s network configuration',
  track_bfd: 'lvsd has no BFD daemon (keepalived runs one as a process of its own); follow a BFD session from a track_script (e.g. BIRD\'s `birdc show bfd sessions`) instead',
  bfd_instance: 'lvsd has no BFD daemon (keepalived runs one as a process of its own); run BFD in BIRD or FRR and track it with a track_script',
  notify_priority_changes: 'priority changes are not written to the notify FIFO (vrrp.notifyFifo carries the state changes); they are in the REST API\'s event stream and the instance snapshot',
  lvs_notify_fifo: 'checker events are not written to a FIFO (VRRP events are: vrrp.notifyFifo); use the event stream of the REST API',
  garp_group: 'not carried yet: keepalived 2.2.7 spaces the GARPs / NAs of every instance on a listed interface by garp_interval / gna_interval, one queue per interface (vrrp_arp.c; vrrp_garp_interval sets that queue for the others); lvsd spaces each instance\'s own burst (vrrp.instances[].garp.interval / naInterval, or vrrp.garp for all), so many instances on one link send their bursts side by side',
  linkbeat_use_polling: 'lvsd follows link state through netlink events',
  linkbeat_interfaces: 'lvsd follows link state through netlink events',
  net_namespace: 'run lvsd inside the namespace instead (e.g. NetworkNamespacePath= in the unit)',
  nat_mask: 'obsolete: keepalived ignores it too',
  BFD_CHECK: 'lvsd has no BFD daemon, so no BFD checker; check the real server with TCP_CHECK or MISC_CHECK instead',
  debug: 'use lvsd\'s log level instead',
  kernel_rx_buf_size: 'lvsd gives every VRRP socket a 1 MiB receive buffer (SO_RCVBUFFORCE, room for ~1000 adverts), above keepalived\'s defaults; not configurable',
  unicast_fault_no_peer: 'lvsd never falls back to multicast when unicastPeers is set',
  check_unicast_src: 'lvsd always checks that unicast adverts come from a listed peer',
  vrrp_check_unicast_src: 'lvsd always checks that unicast adverts come from a listed peer',
  garp_extra_if: 'periodic GARPs on other interfaces are not supported; set garp.masterRefresh',
  vrrp_garp_extra_if: 'periodic GARPs on other interfaces are not supported; set vrrp.garp.masterRefresh',
  promote_secondaries: 'set net.ipv4.conf.IF.promote_secondaries with sysctl instead',
  global_tracking: 'obsolete; put tracking on the sync group (the importer copies it to every member)',
  sync_group_tracking_weight: 'lvsd applies member tracking weights as written',
  process_names: 'not applicable: lvsd is one process',
  process_name: 'not applicable: lvsd is one process',
  vrrp_process_name: 'not applicable: lvsd is one process',
  checker_process_name: 'not applicable: lvsd is one process',
  instance: 'run one lvsd per config; name the unit instead',
  use_pid_dir: 'systemd tracks the process; no pid file',
};

export function unsupportedReason(scope: string, keyword: string): string {
  const specific = REASONS[keyword];
  if (specific !== undefined) return specific;
  if (/^[A-Z_]+_CHECK$/.test(keyword)) return `checker ${keyword} is not supported by lvsd`;
  return `not supported in ${scope} by the importer`;
}
