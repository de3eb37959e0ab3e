// Why a keepalived directive is not carried over — the text an operator reads on stderr. Specific
// reasons for the directives that real configs use; a generic one for the rest.

const SCHED = 'process scheduling is set by the systemd unit (Nice=, CPUSchedulingPolicy=, CPUAffinity=), not by the config';
const SNMP = 'lvsd has no SNMP/DBus agent; use the REST API and /metrics';
const NAMES = 'keepalived renames its processes (prctl) so pidof/killall find them; lvsd does not rename its own: it runs as the unit lvsd.service, so systemctl status lvsd lists its processes';
const PIDFILE = 'lvsd writes no pid file: systemd tracks its processes (systemctl show -p MainPID lvsd); run a second lvsd as another unit with its own --config, stateFile and api.socket';
const NETLINK_BUFS = 'lvsd\'s IPVS and process-connector netlink sockets keep the kernel\'s receive buffer size (net.core.rmem_default: raise it with sysctl); not configurable';
const FIREWALL = 'lvsd installs no iptables rules or ipsets: it does not filter VIPs (keepalived\'s no_accept / vrrp_strict), and its VMAC IGMP/MLD table is nftables (vrrp.nftables)';

/** Why strict mode stays in the not-carried list: the one part of it lvsd leaves to the firewall. */
export const STRICT_NOT_CARRIED =
  'lvsd installs no VIP filter (keepalived\'s iptables/nftables rules that drop traffic to the VIPs of a non-owner master in strict mode): filter in the firewall if you rely on it; the rest of strict mode is carried (accept mode off, no answer or GARPs on a lower-priority advert, authentication, preempt_delay and down_timer_adverts dropped as keepalived drops them)';

const SKIP_CHECK_ADV_ADDR =
  'nothing to skip: lvsd accepts an advert whose address list differs from its own, in every state (logged, rate-limited), where keepalived drops it unless this option lets a backup take it from the master it already follows; the unicast source check stays, as the same master passed it before';

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
  vrrp_rlimit_rtime: SCHED,
  child_wait_time: 'lvsd stops its own processes: systemd waits for them (TimeoutStopSec= in the unit, 30 s, then SIGKILL), and its scripts are killed with it',
  vrrp_netlink_cmd_rcv_bufs: NETLINK_BUFS,
  vrrp_netlink_cmd_rcv_bufs_force: NETLINK_BUFS,
  vrrp_netlink_monitor_rcv_bufs: NETLINK_BUFS,
  vrrp_netlink_monitor_rcv_bufs_force: NETLINK_BUFS,
  vrrp_rx_bufs_policy: 'lvsd gives every VRRP socket a 1 MiB receive buffer (SO_RCVBUFFORCE, room for ~1000 adverts), more than the MTU or advert policies size for any real config; not configurable',
  vrrp_rx_bufs_multiplier: 'lvsd gives every VRRP socket a 1 MiB receive buffer (SO_RCVBUFFORCE, room for ~1000 adverts), more than the MTU or advert policies size for any real config; not configurable',
  vrrp_notify_priority_changes: 'priority changes are not written to the notify FIFO (vrrp.notifyFifo carries the state changes); they are in the REST API\'s event stream and the instance snapshot',
  fifo_write_vrrp_states_on_reload: 'lvsd writes state changes only to the notify FIFO; a reload that changes no state writes nothing, and a reader gets the current states from the REST API (GET /api/v1/status)',
  log_unknown_vrids: 'lvsd never logs adverts of other VRIDs on a link (other routers share the group): it counts them per instance (the snapshot\'s drops, reason other-vrid)',
  namespace_with_ipsets: FIREWALL,
  net_namespace_ipvs: 'lvsd does not enter a namespace itself: the systemd unit puts it there (NetworkNamespacePath=/run/netns/NAME), IPVS included',
  nftables_ipvs: 'lvsd expands a virtual_server_group into one IPVS service per member (the importer does it); it sets no fwmarks with nftables. For one service per group, write a fwmark service and mark the traffic in your firewall',
  nftables_ipvs_priority: 'lvsd sets no IPVS fwmarks with nftables (see nftables_ipvs)',
  nftables_ipvs_start_fwmark: 'lvsd sets no IPVS fwmarks with nftables (see nftables_ipvs)',
  rs_init_notifies: 'lvsd runs a real server\'s notify up/down when its state changes, not for the state it starts in; the states at start are in the REST API and /metrics (lvsd_real_server_up)',
  vmac_addr_prefix: 'lvsd creates no VMAC for VIPs on other interfaces (use_vmac_addr), so there is nothing to name',
  use_vmac_addr: 'lvsd creates VMAC interfaces only for the instance\'s own interface (use_vmac); a VIP on another interface goes on that interface itself',
  vrf: 'lvsd does not put its VMAC interface in a VRF: enslave it (and the VIPs\' interfaces) to the VRF with your network configuration (e.g. a networkd .network file matching vrrp.*)',
  track_group: 'not carried: lvsd adds its static addresses, routes and rules at start and does not watch them after, so one deleted behind its back puts no instance in FAULT (keepalived\'s static track group does); track them with a track_script if you rely on it',
  hashed: 'obsolete: IPVS sets the hashed flag itself (keepalived 2.2.7 ignores it too)',
  nftables_ifindex: 'lvsd\'s VMAC table always matches interfaces by index (keepalived\'s setting is for its VIP filter rules, which lvsd does not install)',
  vrrp_strict: STRICT_NOT_CARRIED,
  strict_mode: STRICT_NOT_CARRIED,
  vrrp_skip_check_adv_addr: SKIP_CHECK_ADV_ADDR,
  skip_check_adv_addr: SKIP_CHECK_ADV_ADDR,
  lvs_flush: 'lvsd reconciles the IPVS table instead of flushing it',
  lvs_flush_on_stop: 'lvsd leaves IPVS entries in place on stop so traffic keeps flowing',
  track_bfd: 'lvsd has no BFD daemon (keepalived runs one as a process of its own); follow a BFD session from a track_script (e.g. BIRD\'s `birdc show bfd sessions`) instead',
  bfd_instance: 'lvsd has no BFD daemon (keepalived runs one as a process of its own); run BFD in BIRD or FRR and track it with a track_script',
  notify_priority_changes: 'priority changes are not written to the notify FIFO (vrrp.notifyFifo carries the state changes); they are in the REST API\'s event stream and the instance snapshot',
  lvs_notify_fifo: 'checker events are not written to a FIFO (VRRP events are: vrrp.notifyFifo); use the event stream of the REST API',
  linkbeat_use_polling: 'lvsd follows link state through rtnetlink link events only (keepalived polls the MII/ethtool state instead with this, for drivers that do not report carrier changes): such a NIC\'s failure is seen by a track_script (e.g. `ethtool IF | grep -q "Link detected: yes"`)',
  linkbeat_interfaces: 'lvsd follows link state through rtnetlink link events only (keepalived polls the MII/ethtool state of these interfaces, for drivers that do not report carrier changes): such a NIC\'s failure is seen by a track_script (e.g. `ethtool IF | grep -q "Link detected: yes"`)',
  net_namespace: 'lvsd does not enter a namespace itself: the systemd unit puts it there (NetworkNamespacePath=/run/netns/NAME), so it runs in it from the start as keepalived does after net_namespace',
  nat_mask: 'obsolete: keepalived ignores it too',
  BFD_CHECK: 'lvsd has no BFD daemon, so no BFD checker; check the real server with TCP_CHECK or MISC_CHECK instead',
  debug: 'keepalived 2.2.7 only prints a vrrp_instance\'s debug level in its config dump (vrrp_data.c), so it changed nothing; lvsd\'s logging is --log-level / LVSD_LOG_LEVEL',
  kernel_rx_buf_size: 'lvsd gives every VRRP socket a 1 MiB receive buffer (SO_RCVBUFFORCE, room for ~1000 adverts), above what keepalived sets by default and what configs set here (it sizes the netlink sockets\' buffers too, which lvsd reads as events arrive); not configurable',
  check_unicast_src: 'lvsd always checks that unicast adverts come from a listed peer',
  vrrp_check_unicast_src: 'lvsd always checks that unicast adverts come from a listed peer',
  global_tracking: 'valid only in a vrrp_sync_group (there it is read as sync_group_tracking_weight, as keepalived 2.2.7 reads it)',
  sync_group_tracking_weight: 'valid only in a vrrp_sync_group, where the importer carries it (members\' weighted tracking kept as written; without it dropped as keepalived drops it)',
  process_names: NAMES,
  process_name: NAMES,
  vrrp_process_name: NAMES,
  checker_process_name: NAMES,
  instance: 'keepalived\'s instance NAME only moves its pid files (and .data files) under a per-instance name; ' + PIDFILE,
  use_pid_dir: PIDFILE,
  lvs_process_name: NAMES,
  bfd_process_name: NAMES,
  bfd_cpu_affinity: SCHED,
  bfd_no_swap: SCHED,
  bfd_rlimit_rtime: SCHED,
  bfd_rlimit_rttime: SCHED,
  bfd_rt_priority: SCHED,
  checker_rlimit_rtime: SCHED,
  dbus_service_name: SNMP,
  lvs_flush_onstop: 'lvsd leaves IPVS entries in place on stop so traffic keeps flowing',
  lvs_netlink_cmd_rcv_bufs: NETLINK_BUFS,
  lvs_netlink_cmd_rcv_bufs_force: NETLINK_BUFS,
  lvs_netlink_monitor_rcv_bufs: NETLINK_BUFS,
  lvs_netlink_monitor_rcv_bufs_force: NETLINK_BUFS,
  process_monitor_rcv_bufs: NETLINK_BUFS,
  process_monitor_rcv_bufs_force: NETLINK_BUFS,
  lvs_notify_fifo_script: 'checker events are not written to a FIFO, so there is no FIFO script; use the event stream of the REST API',
  reload_check_config: 'lvsd always validates a config before it reloads (SIGHUP, the API): an invalid file changes nothing and the running config stays',
  reload_file: 'lvsd reads the config file once, whole, at each reload; use `lvsd check-config` then SIGHUP (or the API, which writes the file atomically)',
  reload_time_file: 'scheduled reloads are not built in: run `systemctl reload lvsd` from a systemd timer at the time (on every director alike)',
  reload_repeat: 'scheduled reloads are not built in: run `systemctl reload lvsd` from a systemd timer at the time (on every director alike)',
  config_save_dir: 'lvsd keeps the previous good config in memory for a rollback (the API\'s rollback); it saves no copies to a directory',
  tmp_config_directory: 'lvsd keeps no copy of the config text outside its own memory; nothing to place',
  random_seed: 'lvsd\'s randomness (the warmup spread of first checks) is not seedable',
  umask: 'set the file mode mask in the unit (UMask=); lvsd creates its API socket and state file 0600 whatever it is',
  data_use_instance: 'lvsd writes no .data dump files (keepalived\'s SIGUSR1 dump); its state is the REST API\'s snapshot',
  include_check: 'the importer reads the includes as keepalived does (an unreadable one stops the import); an lvsd config has no includes to check',
};

export function unsupportedReason(scope: string, keyword: string): string {
  const specific = REASONS[keyword];
  if (specific !== undefined) return specific;
  if (/^[A-Z_]+_CHECK$/.test(keyword)) return `checker ${keyword} is not supported by lvsd`;
  return `not supported in ${scope} by the importer`;
}
