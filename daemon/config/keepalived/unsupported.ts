// Why a keepalived directive is not carried over — the text an operator reads on stderr. Specific
// reasons for the directives that real configs use; a generic one for the rest.

const SCHED = 'process scheduling is set by the systemd unit (Nice=, CPUSchedulingPolicy=, CPUAffinity=), not by the config';
const SNMP = 'lvsd has no SNMP/DBus agent; use the REST API and /metrics';
const FIREWALL = 'lvsd installs no iptables rules or ipsets: it does not filter VIPs (keepalived\'s no_accept / vrrp_strict), and its VMAC IGMP/MLD table is nftables (vrrp.nftables)';

/** Why strict mode stays in the not-carried list: the one part of it lvsd leaves to the firewall. */
export const STRICT_NOT_CARRIED =
  'lvsd installs no VIP filter (keepalived\'s iptables/nftables rules that drop traffic to the VIPs of a non-owner master in strict mode): filter in the firewall if you rely on it; the rest of strict mode is carried (accept mode off, no answer or GARPs on a lower-priority advert, authentication, preempt_delay and down_timer_adverts dropped as keepalived drops them)';

const SKIP_CHECK_ADV_ADDR =
  'nothing to skip: lvsd accepts an advert whose address list differs from its own, in every state (logged, rate-limited), where keepalived drops it unless this option lets a backup take it from the master it already follows; the unicast source check stays, as the same master passed it before';
const STATIC =
  'not carried yet: keepalived 2.2.7 (measured) adds these at start whatever the VRRP state (routes and rules proto keepalived, a rule without a preference at 16384) and removes them at stop; lvsd manages only what follows the state (virtual_ipaddress, virtual_routes, virtual_rules): put them in the system\'s network configuration (systemd-networkd, ifupdown, netplan), where they also stay when lvsd stops';

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
  vrrp_strict: STRICT_NOT_CARRIED,
  strict_mode: STRICT_NOT_CARRIED,
  vrrp_skip_check_adv_addr: SKIP_CHECK_ADV_ADDR,
  skip_check_adv_addr: SKIP_CHECK_ADV_ADDR,
  lvs_flush: 'lvsd reconciles the IPVS table instead of flushing it',
  lvs_flush_on_stop: 'lvsd leaves IPVS entries in place on stop so traffic keeps flowing',
  static_ipaddress: STATIC,
  static_routes: STATIC,
  static_rules: STATIC,
  track_bfd: 'lvsd has no BFD daemon (keepalived runs one as a process of its own); follow a BFD session from a track_script (e.g. BIRD\'s `birdc show bfd sessions`) instead',
  bfd_instance: 'lvsd has no BFD daemon (keepalived runs one as a process of its own); run BFD in BIRD or FRR and track it with a track_script',
  notify_priority_changes: 'priority changes are not written to the notify FIFO (vrrp.notifyFifo carries the state changes); they are in the REST API\'s event stream and the instance snapshot',
  lvs_notify_fifo: 'checker events are not written to a FIFO (VRRP events are: vrrp.notifyFifo); use the event stream of the REST API',
  linkbeat_use_polling: 'lvsd follows link state through rtnetlink link events only (keepalived polls the MII/ethtool state instead with this, for drivers that do not report carrier changes): such a NIC\'s failure is seen by a track_script (e.g. `ethtool IF | grep -q "Link detected: yes"`)',
  linkbeat_interfaces: 'lvsd follows link state through rtnetlink link events only (keepalived polls the MII/ethtool state of these interfaces, for drivers that do not report carrier changes): such a NIC\'s failure is seen by a track_script (e.g. `ethtool IF | grep -q "Link detected: yes"`)',
  net_namespace: 'lvsd does not enter a namespace itself: the systemd unit puts it there (NetworkNamespacePath=/run/netns/NAME), so it runs in it from the start as keepalived does after net_namespace',
  nat_mask: 'obsolete: keepalived ignores it too',
  BFD_CHECK: 'lvsd has no BFD daemon, so no BFD checker; check the real server with TCP_CHECK or MISC_CHECK instead',
  log_all_failures: 'lvsd logs every state change; per-failure logging is not configurable',
  checker_log_all_failures: 'lvsd logs every state change; per-failure logging is not configurable',
  http_protocol: 'lvsd sends HTTP/1.1 with Connection: close',
  fast_recovery: 'lvsd checks one URL, so there is nothing to speed up; rise/fall decide recovery',
  regex_options: 'regex options are not supported; use JavaScript regular expression syntax in bodyRegex',
  regex_stack: 'not needed: the regex runs in JavaScript',
  regex_min_offset: 'not supported',
  regex_max_offset: 'not supported',
  regex_no_match: 'inverted body matching is not supported',
  debug: 'use lvsd\'s log level instead',
  kernel_rx_buf_size: 'lvsd gives every VRRP socket a 1 MiB receive buffer (SO_RCVBUFFORCE, room for ~1000 adverts), above what keepalived sets by default and what configs set here (it sizes the netlink sockets\' buffers too, which lvsd reads as events arrive); not configurable',
  check_unicast_src: 'lvsd always checks that unicast adverts come from a listed peer',
  vrrp_check_unicast_src: 'lvsd always checks that unicast adverts come from a listed peer',
  global_tracking: 'valid only in a vrrp_sync_group (there it is read as sync_group_tracking_weight, as keepalived 2.2.7 reads it)',
  sync_group_tracking_weight: 'valid only in a vrrp_sync_group, where the importer carries it (members\' weighted tracking kept as written; without it dropped as keepalived drops it)',
  startup_script: 'run it from the unit with ExecStartPre= instead',
  shutdown_script: 'run it from the unit with ExecStopPost= instead',
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
