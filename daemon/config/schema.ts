// The one schema of lvsd.yaml (TypeBox → JSON Schema). Keys are camelCase; the concepts and names
// are keepalived's (vrrp_instance → vrrp.instances, virtual_server → virtualServers, …) so a
// keepalived operator recognises them. The schema checks shape, types, enums and ranges; the
// cross-field rules (duplicate VRID, v2/v3 options, DR with port mapping, …) live in semantic.ts.
// `description` texts become docs/config.md (scripts/gen-config-docs.ts) and editor hints.
import Type, { type Static, type TEnum, type TSchema } from 'typebox';
import { DURATION_PATTERN, MAX_DURATION_MS, MAX_KERNEL_DURATION_MS } from './formats.js';

const opt = Type.Optional;

/** A closed object: unknown keys are errors (typos must not pass silently). */
function Obj<P extends Record<string, TSchema>>(properties: P, description: string) {
  return Type.Object(properties, { additionalProperties: false, description });
}

function Enum<const V extends string[]>(values: readonly [...V], description: string): TEnum<V> {
  return Type.Enum(values, { description });
}

const durationWithin = (description: string, format: 'lvsd-duration' | 'lvsd-kernel-duration', maxMs: number) =>
  Type.Union([Type.String({ pattern: DURATION_PATTERN, format }), Type.Number({ minimum: 0, maximum: maxMs / 1000 })], {
    description: `${description} Duration: "250ms", "1s", "1.5s", "2m", or a bare number of seconds; at most ${String(maxMs / 86_400_000)}d.`,
    'x-lvsd-type': 'duration',
    'x-lvsd-max-days': maxMs / 86_400_000,
  });
const Duration = (description: string) => durationWithin(description, 'lvsd-duration', MAX_DURATION_MS);
/** An IPVS timeout: the kernel keeps it, so keepalived's bound, not a Node timer's. */
const KernelDuration = (description: string) => durationWithin(description, 'lvsd-kernel-duration', MAX_KERNEL_DURATION_MS);

const Int = (minimum: number, maximum: number, description: string) =>
  Type.Integer({ minimum, maximum, description });

const Ip = (description: string) => Type.String({ format: 'ip', description });
const Port = (description: string) => Int(1, 65535, description);
const Command = (description: string) => Type.String({ minLength: 1, description });
const Name = (description: string) => Type.String({ pattern: '^[A-Za-z0-9_.:@-]+$', maxLength: 64, description });

// ---------------------------------------------------------------------------------------------
// Daemon-wide sections

const ScriptUser = (what: string) => Type.String({ minLength: 1, pattern: '^[^:\\s]+(:[^:\\s]+)?$', description: `${what} "user" or "user:group".` });

// keepalived startup_script / shutdown_script: run once, before anything starts and after everything stopped.
const LifecycleScript = (when: string) =>
  Obj(
    {
      command: Type.String({ minLength: 1, description: 'The program and its arguments (split like a notify command, not run by a shell).' }),
      timeout: opt(Duration('After this long the script\'s process group gets SIGTERM (SIGKILL 2 s later) and lvsd goes on (keepalived startup_script_timeout / shutdown_script_timeout). Default 10s.')),
      user: opt(ScriptUser('Run as this user (keepalived startup_script "/x" user group). Default: vrrp.scriptUser, else the daemon\'s user.')),
    },
    `A script lvsd runs ${when} and waits for (keepalived ${when === 'before it starts anything' ? 'startup_script' : 'shutdown_script'}); its exit status is logged, never fatal.`,
  );

export const NodeSection = Obj(
  {
    name: opt(Name('This director\'s name (keepalived router_id). Default: the hostname.')),
    startupScript: opt(LifecycleScript('before it starts anything')),
    shutdownScript: opt(LifecycleScript('after everything stopped (VIPs released)')),
  },
  'Identity of this director, and its start and stop scripts.',
);

export const ApiSection = Obj(
  {
    listen: opt(Type.String({ format: 'host-port', description: 'HTTP listen address host:port. Default 127.0.0.1:9180.' })),
    socket: opt(Type.String({ minLength: 1, description: 'Local admin socket (mode 0600) that `lvsd status` uses. Default /run/lvsd/lvsd.sock.' })),
    allowedHosts: opt(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { description: 'Host header names (or host:port) the panel answers besides localhost and its own address, e.g. the name operators type; a request with any other Host is refused (DNS rebinding). Default none.' })),
    tls: opt(
      Obj(
        {
          cert: Type.String({ minLength: 1, description: 'PEM certificate file.' }),
          key: Type.String({ minLength: 1, description: 'PEM private key file.' }),
        },
        'Serve HTTPS instead of HTTP.',
      ),
    ),
    prometheus: opt(
      Obj(
        {
          url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000, description: 'Base URL of a Prometheus that scrapes this director\'s /metrics, e.g. http://127.0.0.1:9090.' }),
          match: Type.String({ minLength: 1, maxLength: 1000, description: 'PromQL label matchers selecting this director\'s series, e.g. `job="lvsd", instance="10.0.0.1:9180"`.' }),
        },
        'Draw the panel\'s graphs from this Prometheus instead of lvsd\'s own samples (the last 3 hours either way; VRRP and health marks stay lvsd\'s own). When it does not answer, the graphs show lvsd\'s samples and say why.',
      ),
    ),
  },
  'The REST API and admin panel.',
);

export const DATAPLANES = ['auto', 'ipvs', 'nftables', 'userspace'] as const;

export const IpvsSection = Obj(
  {
    removal: opt(Enum(['graceful', 'immediate'], 'How a removed real server leaves: graceful = weight 0 and drain, then delete; immediate = delete now. Default graceful.')),
    drainTimeout: opt(Duration('How long a gracefully removed real server drains before it is deleted. Default 60s.')),
    timeouts: opt(
      Obj(
        {
          tcp: opt(KernelDuration('IPVS TCP connection timeout (ipvsadm --set). Default: leave the kernel\'s.')),
          tcpFin: opt(KernelDuration('IPVS TCP FIN_WAIT timeout. Default: leave the kernel\'s.')),
          udp: opt(KernelDuration('IPVS UDP timeout. Default: leave the kernel\'s.')),
        },
        'IPVS connection timeouts.',
      ),
    ),
    syncDaemon: opt(
      Obj(
        {
          interface: Type.String({ minLength: 1, description: 'Interface the connection-sync multicast runs on (lvs_sync_daemon_interface).' }),
          syncId: opt(Int(0, 255, 'Sync id; both directors must agree. Default 0.')),
          maxLen: opt(Int(1, 65507, 'Largest sync packet payload. Default 1472.')),
          mcastGroup: opt(Ip('Multicast group. Default 224.0.0.81.')),
          port: opt(Port('UDP port. Default 8848.')),
          ttl: opt(Int(1, 255, 'Multicast TTL. Default 1.')),
          role: opt(
            Enum(
              ['follow-vrrp', 'both'],
              'follow-vrrp: the master sync daemon on the VRRP master, the backup daemon elsewhere (keepalived with lvs_sync_daemon … inst NAME). both: every director runs the master daemon (with syncId) and the backup daemon (syncId 0: accepts any id) at once (keepalived without inst). Default follow-vrrp.',
            ),
          ),
          threshold: opt(Int(0, 1_000_000, 'net.ipv4.vs.sync_threshold, first number: a connection is synced when its incoming packet count modulo thresholdPeriod equals this. Default 3.')),
          thresholdPeriod: opt(Int(0, 1_000_000, 'net.ipv4.vs.sync_threshold, second number (the kernel\'s sync_period; 0 = sync by refreshPeriod and state changes only). Default 0.')),
          refreshPeriod: opt(Duration('net.ipv4.vs.sync_refresh_period: an established connection with traffic is synced again once its timer moved this much since the last sync, so the backup\'s copy never expires much before the master\'s (0 = only by the packet count). Default 60s.')),
          persistMode: opt(Enum(['all', 'templates'], 'net.ipv4.vs.sync_persist_mode: all = sync every connection (0); templates = for persistent services only the persistence templates (1). Default all.')),
          ports: opt(Int(1, 64, 'net.ipv4.vs.sync_ports: sync threads, each on its own UDP port from port upwards (a power of two; both directors must agree). Default 1.')),
        },
        'IPVS connection synchronisation daemon, and the sysctls that decide what is synced and when (written whenever the daemon is configured).',
      ),
    ),
  },
  'Settings of the IPVS dataplane.',
);

export const NftablesSection = Obj(
  {
    table: opt(Name('The nftables table lvsd owns. Default lvsd.')),
    masquerade: opt(Type.Boolean({ description: 'Masquerade (SNAT) traffic to real servers. Default true.' })),
  },
  'Settings of the nftables dataplane (NAT only).',
);

export const UserspaceSection = Obj(
  {
    idleTimeout: opt(Duration('Idle connection timeout. Default 300s.')),
    proxyProtocol: opt(Enum(['none', 'v1', 'v2'], 'Send a PROXY protocol header to real servers. Default none.')),
  },
  'Settings of the userspace (Node TCP/UDP proxy) dataplane.',
);

// ---------------------------------------------------------------------------------------------
// VRRP

export const GarpSettings = Obj(
  {
    masterDelay: opt(Duration('Delay before the second burst of gratuitous ARPs after becoming master (garp_master_delay). Default 5s.')),
    masterRepeat: opt(Int(0, 1000, 'Gratuitous ARPs per burst (garp_master_repeat). Default 5.')),
    masterRefresh: opt(Duration('Re-send gratuitous ARPs this often while master; 0 = never (garp_master_refresh). Default 0s.')),
    masterRefreshRepeat: opt(Int(0, 1000, 'Gratuitous ARPs per refresh (garp_master_refresh_repeat). Default 1.')),
    interval: opt(Duration('Gap between gratuitous ARPs of one instance\'s burst. Default 0s. (keepalived\'s vrrp_garp_interval paces the whole link instead: vrrp.garpGroups.)')),
    naInterval: opt(Duration('Gap between unsolicited neighbour advertisements (IPv6) of one instance\'s burst. Default 0s.')),
    extraIf: opt(
      Duration('While master, every this long (checked at each advert) one gratuitous ARP / NA on each other interface holding one of the instance\'s VIPs, for the first VIP there, so switches keep that MAC (keepalived garp_extra_if all); 0 = never. Default 0s.'),
    ),
    lowerPrioRepeat: opt(
      Int(0, 1000, 'Gratuitous ARPs a master sends at once when it hears a lower-priority master, as after a healed split brain (garp_lower_prio_repeat); 0 = none. Default: vrrp.garp.masterRepeat.'),
    ),
    lowerPrioDelay: opt(Duration('Second such burst this long after the first; 0 = none (garp_lower_prio_delay). Default: vrrp.garp.masterDelay.')),
  },
  'Gratuitous ARP / unsolicited neighbour advertisement timing.',
);

export const GarpGroup = Obj(
  {
    interfaces: opt(
      Type.Array(Type.String({ minLength: 1, maxLength: 15 }), {
        minItems: 1,
        description: 'The interfaces that share the queues of this group (keepalived garp_group `interface` / `interfaces`; a VMAC counts as its parent). Absent: every interface no other group lists, each with a queue of its own (keepalived vrrp_garp_interval / vrrp_gna_interval).',
      }),
    ),
    interval: opt(Duration('At most one gratuitous ARP per this interval on these interfaces, whatever instance sends it (garp_interval); 0 = not paced. Default 0s.')),
    naInterval: opt(Duration('The same for unsolicited neighbour advertisements (IPv6) (gna_interval). Default 0s.')),
  },
  'A GARP group (keepalived garp_group): one queue per family for its interfaces. An announcement goes out at once when the queue is free; otherwise its address waits, marked once however many repeats asked for it, and the waiting addresses go out one per interval in configuration order. With a group, a burst of masterRepeat therefore gives each address one or two announcements, as in keepalived.',
);

export const VrrpScript = Obj(
  {
    command: Command('Command run through /bin/sh -c; exit 0 = success.'),
    interval: opt(Duration('How often it runs. Default 1s.')),
    timeout: opt(Duration('Kill it and count a failure after this long. Default: the interval.')),
    rise: opt(Int(1, 1000, 'Successes in a row before it counts as up. Default 1.')),
    fall: opt(Int(1, 1000, 'Failures in a row before it counts as down. Default 1.')),
    weight: opt(Int(-253, 253, 'Priority change while up (>0) or while down (<0); 0 = fault while down. Default 0.')),
    user: opt(Type.String({ minLength: 1, pattern: '^[^:\\s]+(:[^:\\s]+)?$', description: 'Run as this user, "user" or "user:group" (vrrp_script user). Default: vrrp.scriptUser, else the daemon\'s user.' })),
  },
  'A tracking script (keepalived vrrp_script).',
);

export const VrrpProcess = Obj(
  {
    process: Type.String({ minLength: 1, description: 'The process: its name as in /proc/PID/comm (the first 15 characters count, as the kernel keeps them) or, with parameters, paramMatch or fullCommand, the first word of its command line (/proc/PID/cmdline), compared exactly (not a pattern, unlike pgrep).' }),
    parameters: opt(Type.Array(Type.String(), { description: 'Its parameters: the command line is compared, by paramMatch.' })),
    paramMatch: opt(Enum(['exact', 'partial', 'initial'], 'exact: the parameters are these; partial: these first, more may follow; initial: the command line\'s parameters start with these (the last may be longer). Given without parameters: the process has no parameters (exact). Default exact.')),
    fullCommand: opt(Type.Boolean({ description: 'Compare the first word of the command line instead of the process name, even without parameters (keepalived full_command). Default false.' })),
    quorum: opt(Int(0, 65535, 'Fewest matching processes for OK. Default 1.')),
    quorumMax: opt(Int(0, 65535, 'Most matching processes for OK (0: OK only while none runs; then set quorum: 0). Default: no limit.')),
    weight: opt(Int(-254, 254, 'Priority change while OK (>0) or while not (<0); 0 = FAULT while not OK. Default 1, as keepalived.')),
    reverse: opt(Type.Boolean({ description: 'Count as failing while the quorum is held, and the other way round (keepalived reverse). Default false.' })),
    forkDelay: opt(Duration('A quorum gained by a fork (a matching process forking) counts only after this long, hiding fork/exec bounces (keepalived fork_delay). Default 0s.')),
    terminateDelay: opt(Duration('A quorum lost by an exit counts only after this long, so a restart of the process does not move the VIP (keepalived terminate_delay). Default 0s.')),
  },
  'A process tracker (keepalived vrrp_track_process): counts matching processes from the kernel\'s process events (no polling), after one scan of /proc at start. Works where lvsd runs in the initial network namespace: elsewhere the kernel does not send process events (see docs/vrrp.md).',
);

const InstanceNotify = Obj(
  {
    master: opt(Command('Run on becoming MASTER.')),
    backup: opt(Command('Run on becoming BACKUP.')),
    fault: opt(Command('Run on entering FAULT.')),
    stop: opt(Command('Run when the instance stops.')),
    deleted: opt(Command('Run when a reload removes the instance; implies notifyDeleted (keepalived notify_deleted SCRIPT). Instances only.')),
    any: opt(Command('Run on every change with arguments: GROUP|INSTANCE name state priority (keepalived notify).')),
    masterRxLowerPri: opt(Command('Run (without arguments) each time a MASTER hears an advert of lower priority, as after a healed split brain (keepalived notify_master_rx_lower_pri). Instances only.')),
    users: opt(
      Obj(
        Object.fromEntries(['master', 'backup', 'fault', 'stop', 'deleted', 'any', 'masterRxLowerPri'].map((k) => [k, opt(ScriptUser(`Runs the ${k} hook.`))])),
        'Who runs each hook, "user" or "user:group" (keepalived notify_master "/x" user group). Default: vrrp.scriptUser.',
      ),
    ),
  },
  'Notify hooks (keepalived notify_master, notify_backup, …).',
);

export const VirtualIpAddress = Type.Union(
  [
    Type.String({ format: 'cidr', description: 'Address in CIDR form; a bare address gets a host prefix.' }),
    Obj(
      {
        address: Type.String({ format: 'cidr', description: 'Address in CIDR form.' }),
        dev: opt(Type.String({ minLength: 1, description: 'Interface. Default: the instance\'s interface.' })),
        label: opt(Type.String({ minLength: 1, maxLength: 15, description: 'Address label (e.g. eth1:vip).' })),
        scope: opt(Enum(['global', 'site', 'link', 'host'], 'Address scope. Default global.')),
        broadcast: opt(Type.String({ format: 'ipv4', description: 'IPv4 broadcast address (keepalived brd). Default none, as keepalived.' })),
        peer: opt(Type.String({ format: 'cidr', description: 'Point-to-point peer, ADDR or ADDR/LEN (keepalived peer): the prefix is the peer\'s (default a host prefix) and the address\'s own is ignored, as keepalived does.' })),
        home: opt(Type.Boolean({ description: 'IPv6 home address flag (keepalived home). Default false.' })),
        dad: opt(Type.Boolean({ description: 'Run duplicate address detection on this IPv6 address (keepalived -nodad). Default false: IPv6 VIPs are added nodad, as keepalived adds them.' })),
        noPrefixRoute: opt(Type.Boolean({ description: 'Add no prefix route for the address (keepalived noprefixroute). Default false.' })),
        preferredLft: opt(
          Type.Union([Type.Integer({ minimum: 0, maximum: 4294967294 }), Type.Literal('forever')], {
            description: 'Preferred lifetime of an IPv6 address in seconds, or "forever" (keepalived preferred_lft; keepalived ignores it on IPv4 addresses, lvsd alike). Default 0 (deprecated: never chosen as a source address) for a /128, forever otherwise, as keepalived.',
          }),
        ),
      },
      'A VIP with its own interface, label, scope or address options.',
    ),
  ],
  { description: 'A virtual IP address: "192.0.2.10/24" or { address, dev, label, scope, broadcast, peer, home, dad, noPrefixRoute, preferredLft }.' },
);

const Iface = (description: string) => Type.String({ minLength: 1, maxLength: 15, description });
const TableId = (description: string) => Type.Integer({ minimum: 1, maximum: 4294967295, description });

export const VirtualRoute = Obj(
  {
    to: Type.Union([Type.Literal('default'), Type.String({ format: 'cidr' })], { description: 'Destination in CIDR form, or "default".' }),
    via: opt(Ip('Gateway.')),
    dev: opt(Iface('Interface. Default: the instance\'s, for a unicast route without via.')),
    src: opt(Ip('Preferred source address (often a VIP: the route needs it, so it is added after the VIPs).')),
    table: opt(TableId('Routing table id. Default main (254).')),
    metric: opt(Type.Integer({ minimum: 0, maximum: 4294967295, description: 'Route metric (priority).' })),
    scope: opt(Enum(['global', 'site', 'link', 'host'], 'Route scope. Default link for a unicast route without via, else global.')),
    type: opt(Enum(['unicast', 'blackhole', 'unreachable', 'prohibit', 'throw'], 'Route type. Default unicast.')),
  },
  'A route added while the instance is MASTER (keepalived virtual_routes), marked proto keepalived.',
);

export const VirtualRule = Obj(
  {
    from: opt(Type.String({ format: 'cidr', description: 'Source prefix. Default all.' })),
    to: opt(Type.String({ format: 'cidr', description: 'Destination prefix. Default all.' })),
    table: opt(TableId('Table to look up; needed unless type is blackhole, unreachable or prohibit.')),
    priority: opt(Type.Integer({ minimum: 0, maximum: 4294967295, description: 'Rule priority (ip rule preference).' })),
    fwmark: opt(Type.Integer({ minimum: 0, maximum: 4294967295, description: 'Firewall mark to match.' })),
    fwmask: opt(Type.Integer({ minimum: 0, maximum: 4294967295, description: 'Mask for fwmark.' })),
    iif: opt(Iface('Incoming interface to match.')),
    oif: opt(Iface('Outgoing interface to match.')),
    type: opt(Enum(['table', 'blackhole', 'unreachable', 'prohibit'], 'Action. Default table (look up `table`).')),
  },
  'A policy rule added while the instance is MASTER (keepalived virtual_rules), marked proto keepalived.',
);

const TrackWeight = (what: string) =>
  opt(Int(-254, 254, `Priority change while ${what} is down (<0) or up (>0); 0/absent = the instance goes to FAULT when it is down.`));

export const VrrpInstance = Obj(
  {
    name: Name('Instance name (keepalived vrrp_instance).'),
    interface: Type.String({ minLength: 1, maxLength: 15, description: 'Interface the adverts go out on.' }),
    virtualRouterId: Int(1, 255, 'VRID; unique per interface and address family.'),
    priority: opt(Int(1, 255, 'Priority 1..255; 255 = address owner. Default 100.')),
    state: opt(Enum(['MASTER', 'BACKUP'], 'Initial state hint; the election decides. Default BACKUP.')),
    version: opt(Type.Union([Type.Literal(2), Type.Literal(3)], { description: 'VRRP version: 2 (RFC 3768, IPv4 only) or 3 (RFC 5798). Default 3.' })),
    advertInterval: opt(Duration('Advertisement interval. v2: whole seconds 1..255; v3: 10ms..40.95s in centiseconds. Default 1s.')),
    preempt: opt(Type.Boolean({ description: 'A higher-priority backup takes over; false = keepalived nopreempt. Default true.' })),
    preemptDelay: opt(Duration('Wait this long after start before preempting. Default 0s.')),
    accept: opt(Type.Boolean({ description: 'v3 accept mode: a non-owner master accepts packets to the VIPs. Default false.' })),
    authentication: opt(
      Obj(
        {
          type: Enum(['PASS'], 'Authentication type. Only PASS (simple password, RFC 3768) is supported.'),
          password: Type.String({ minLength: 1, maxLength: 8, description: 'Password, at most 8 characters.' }),
        },
        'VRRPv2 authentication (v2 only).',
      ),
    ),
    unicastSrcIp: opt(Ip('Source address of the adverts, unicast or multicast (keepalived unicast_src_ip, mcast_src_ip). Default: the interface\'s primary address (IPv6: its link-local one).')),
    unicastPeers: opt(Type.Array(Ip('A peer address.'), { description: 'Send adverts to these peers by unicast; empty/absent = multicast.' })),
    downTimerAdverts: opt(Int(1, 100, 'Adverts a backup misses before it takes over: Master_Down_Interval = downTimerAdverts × the master\'s advert interval + skew (keepalived down_timer_adverts; vrrp_down_timer_adverts in global_defs is imported onto every instance). Not the RFC\'s unless 3; every router of the instance must use the same. Default 3.')),
    oldUnicastChecksum: opt(Enum(['auto', 'always', 'never'], 'IPv4 VRRPv3 unicast peers running keepalived ≤ 1.3.6 checksum their adverts over the multicast group instead of the peer\'s address (keepalived old_unicast_checksum): always = send and expect that checksum; never = only the RFC\'s; auto = the RFC\'s until a peer\'s advert verifies only the old way, then the old one, as keepalived 2.2.7 does. Default auto.')),
    unicastTtl: opt(Int(1, 255, 'TTL (IPv6: hop limit) of unicast adverts, for peers behind routers (keepalived unicast_ttl). Needs unicastPeers. Default: 255 for IPv4, the system\'s hop limit for IPv6 (keepalived alike).')),
    trackSrcIp: opt(Type.Boolean({ description: 'FAULT while unicastSrcIp is not on the interface: missing at start or removed later (keepalived track_src_ip). Needs unicastSrcIp. Default false: the adverts go out from it whether the interface has it or not.' })),
    dontTrackPrimary: opt(Type.Boolean({ description: 'The instance\'s own interface going down does not put it in FAULT; only its trackInterfaces do (keepalived dont_track_primary). Default false.' })),
    multicastGroup: opt(Ip('This instance\'s multicast group (keepalived mcast_dst_ip), instead of vrrp.multicastGroup4 / multicastGroup6; of the VIPs\' family, IPv6 link-local scope. Ignored with unicastPeers. Every director of the virtual router must use the same.')),
    promoteSecondaries: opt(Type.Boolean({ description: 'net.ipv4.conf.<interface>.promote_secondaries = 1 while the instance runs, so removing a VIP that is the primary address of its subnet does not take the other addresses of that subnet with it (keepalived promote_secondaries): set at start, put back to 0 at stop unless it was 1 already. Not with vmac/ipvlan (their link has it). Default false.' })),
    virtualIpaddresses: opt(
      Type.Array(VirtualIpAddress, {
        description: 'The VIPs this instance floats and advertises (keepalived virtual_ipaddress). version: 3 needs at least one; a version: 2 instance may have none (only tracking and notify), as in keepalived.',
      }),
    ),
    virtualIpaddressesExcluded: opt(
      Type.Array(VirtualIpAddress, {
        description: 'Addresses added and removed with the state like the VIPs, but not carried in the adverts (keepalived virtual_ipaddress_excluded); either address family.',
      }),
    ),
    trackInterfaces: opt(
      Type.Array(Obj({ name: Type.String({ minLength: 1, maxLength: 15, description: 'Interface.' }), weight: TrackWeight('the interface') }, 'A tracked interface.'), {
        description: 'Interfaces whose link state changes the priority or causes FAULT (track_interface).',
      }),
    ),
    trackScripts: opt(
      Type.Array(Obj({ name: Name('Name of a script in vrrp.scripts.'), weight: opt(Int(-253, 253, 'Overrides the script\'s weight.')) }, 'A tracked script.'), {
        description: 'Scripts from vrrp.scripts (track_script).',
      }),
    ),
    trackFiles: opt(
      Type.Array(Obj({ path: Type.String({ minLength: 1, description: 'File holding an integer.' }), weight: opt(Int(-254, 254, 'Multiplier for the file\'s value; 0 = FAULT when non-zero. Default 1.')) }, 'A tracked file.'), {
        description: 'Files whose integer value changes the priority (track_file).',
      }),
    ),
    trackProcesses: opt(
      Type.Array(
        Obj(
          {
            name: Name('Name of a tracker in vrrp.processes.'),
            weight: opt(Int(-254, 254, 'Overrides the tracker\'s weight.')),
            reverse: opt(Type.Boolean({ description: 'Overrides the tracker\'s reverse.' })),
          },
          'A tracked process.',
        ),
        { description: 'Process trackers from vrrp.processes (track_process).' },
      ),
    ),
    notify: opt(InstanceNotify),
    notifyDeleted: opt(Type.Boolean({ description: 'A reload that removes this instance tells its notify hooks and the notify FIFO DELETED (keepalived notify_deleted). Default false: it tells them FAULT, or nothing when the instance was in FAULT already, as keepalived 2.2.7 does without the directive.' })),
    garp: opt(GarpSettings),
    lowerPrioNoAdvert: opt(
      Type.Boolean({ description: 'A master that hears a lower-priority master does not answer with an advert of its own (lower_prio_no_advert); it still sends the lowerPrioRepeat GARPs. Default: vrrp.lowerPrioNoAdvert, else false (it answers at once, so the other side steps down).' }),
    ),
    higherPrioSendAdvert: opt(Type.Boolean({ description: 'A master that hears a higher-priority advert sends one advert of its own before it becomes backup (higher_prio_send_advert). Default: vrrp.higherPrioSendAdvert, else false.' })),
    virtualRoutes: opt(Type.Array(VirtualRoute, { description: 'Routes added on becoming MASTER (after the VIPs) and removed on leaving it (keepalived virtual_routes).' })),
    virtualRules: opt(Type.Array(VirtualRule, { description: 'Policy rules added on becoming MASTER (after the routes) and removed on leaving it (keepalived virtual_rules).' })),
    vmac: opt(
      Obj(
        {
          name: opt(Type.String({ minLength: 1, maxLength: 15, pattern: '^[^\\s/:]+$', description: 'Name of the macvlan. Default vrrp.<virtualRouterId>.' })),
          xmitBase: opt(Type.Boolean({ description: 'Send and receive the adverts on `interface` itself, with its own MAC; the VIPs stay on the macvlan (keepalived vmac_xmit_base). Default false.' })),
        },
        'Run the instance on a macvlan (private mode) of `interface` carrying the RFC 5798 virtual MAC 00:00:5e:00:01:<VRID> (IPv6: 00:00:5e:00:02:<VRID>) and the VIPs, as keepalived use_vmac: created at start (or adopted, if one with that MAC is left), removed on stop. See docs/vrrp.md, "Virtual MAC".',
      ),
    ),
    ipvlan: opt(
      Obj(
        {
          name: opt(Type.String({ minLength: 1, maxLength: 15, pattern: '^[^\\s/:]+$', description: 'Name of the ipvlan. Default vrrp.<virtualRouterId>.' })),
          address: opt(Type.String({ minLength: 2, description: 'Address (address/prefix) put on the ipvlan and used as the adverts\' source. Required for IPv4 (keepalived 2.2.7 keeps an IPv4 instance without one in FAULT).' })),
          type: opt(Type.Union([Type.Literal('bridge'), Type.Literal('private'), Type.Literal('vepa')], { description: 'The ipvlan\'s l2 flavour. Default bridge.' })),
        },
        'Run the instance and its VIPs on an l2 ipvlan of `interface` (it shares that interface\'s MAC: no virtual MAC), as keepalived use_ipvlan [NAME] [ADDRESS] [bridge|private|vepa]: created at start (or adopted), removed on stop. Not with vmac. See docs/vrrp.md, "Virtual MAC".',
      ),
    ),
  },
  'A VRRP instance (keepalived vrrp_instance): one virtual router on one interface.',
);

export const SyncGroup = Obj(
  {
    name: Name('Sync group name (keepalived vrrp_sync_group).'),
    instances: Type.Array(Name('An instance name.'), { minItems: 1, description: 'Instances that change state together.' }),
    notify: opt(InstanceNotify),
  },
  'Instances that fail over together (keepalived vrrp_sync_group).',
);

export const VrrpSection = Obj(
  {
    garp: opt(GarpSettings),
    garpGroups: opt(Type.Array(GarpGroup, { description: 'GARP / NA pacing per interface across instances (keepalived garp_group, vrrp_garp_interval, vrrp_gna_interval). Default: none, every announcement goes at once.' })),
    lowerPrioNoAdvert: opt(
      Type.Boolean({ description: 'Default of every instance\'s lowerPrioNoAdvert: a master does not answer a lower-priority master\'s advert with its own (vrrp_lower_prio_no_advert). Default false.' }),
    ),
    higherPrioSendAdvert: opt(
      Type.Boolean({ description: 'Default of every instance\'s higherPrioSendAdvert: a master sends one advert of its own before yielding to a higher-priority one (vrrp_higher_prio_send_advert). Default false.' }),
    ),
    scriptUser: opt(ScriptUser('Every notify hook and tracking script without a user of its own runs as this user (keepalived script_user). Default: the daemon\'s user.')),
    scriptSecurity: opt(
      Type.Boolean({
        description:
          'Refuse a script that runs as root when any part of its path (its directories, the file, a symlink\'s target) is not owned by root or is writable by a non-root group or by everyone, as keepalived enable_script_security does; a refused track script is disabled. Without it such a script runs and a SECURITY VIOLATION warning is logged. Default false.',
      }),
    ),
    notifyFifo: opt(
      Obj(
        {
          path: Type.String({ minLength: 1, description: 'The FIFO; created (mode 0644) if it does not exist, and then removed on stop.' }),
          script: opt(Command('Started once with the FIFO\'s path appended, to read it (notify_fifo_script); runs as vrrp.scriptUser.')),
        },
        'keepalived\'s notify FIFO (vrrp_notify_fifo, notify_fifo): every instance and group event as one line, in order, e.g. INSTANCE "VI_1" MASTER 150, GROUP "G" BACKUP 0, INSTANCE "VI_1" MASTER_RX_LOWER_PRI 150.',
      ),
    ),
    multicastGroup4: opt(Ip('IPv4 multicast group of the adverts (keepalived vrrp_mcast_group4). Every director of a virtual router must use the same. Default 224.0.0.18.')),
    multicastGroup6: opt(Ip('IPv6 multicast group of the adverts, link-local scope (keepalived vrrp_mcast_group6). Default ff02::12.')),
    startupDelay: opt(
      Duration('For this long after lvsd (its VRRP engine) starts, no instance becomes MASTER by its timer: a backup\'s master-down timer counts from the end of the delay and an address owner waits, so a node whose links are still coming up cannot grab MASTER (keepalived vrrp_startup_delay). Default 0s.'),
    ),
    delayAfterBoot: opt(
      Duration('The same delay, but until this long after the system booted: a restart later starts at once (keepalived vrrp_delay_after_boot). The longer of the two applies. Default 0s.'),
    ),
    staticIpaddresses: opt(Type.Array(VirtualIpAddress, { description: 'Addresses lvsd adds at start and removes at stop, whatever the instances\' states (keepalived static_ipaddress); each names its interface (dev).' })),
    staticRoutes: opt(Type.Array(VirtualRoute, { description: 'Routes added at start and removed at stop, whatever the states (keepalived static_routes); each has a via or a dev.' })),
    staticRules: opt(Type.Array(VirtualRule, { description: 'Policy rules added at start and removed at stop, whatever the states (keepalived static_rules).' })),
    interfaceUpDownDelays: opt(
      Type.Record(
        Type.String({ pattern: '^[^\\s/:]{1,15}$' }),
        Obj(
          {
            down: Duration('How long the link must stay down before its instances (and trackers) see it down. 0..255s.'),
            up: opt(Duration('How long it must stay up before they see it up again. 0..255s; default 0s.')),
          },
          'One interface\'s delays.',
        ),
        { additionalProperties: false, description: 'Debounce link changes, by interface name (keepalived interface_up_down_delays): a link that goes down and comes back within its down delay never puts its instances in FAULT; a change reverted within its delay is forgotten. Like keepalived, each delay is capped below (downTimerAdverts − 1) adverts of every instance on the interface (a longer one would leave a dead link\'s master holding the VIPs after its backups took over), and a VMAC interface takes its parent\'s delays.' },
      ),
    ),
    disableLocalIgmp: opt(
      Type.Boolean({ description: 'Set net.ipv4.igmp_link_local_mcast_reports to 0 while lvsd runs (keepalived disable_local_igmp): no IGMP reports for 224.0.0.0/24, so a snooping switch does not learn a VMAC interface\'s virtual MAC from a backup. Put back to 1 on stop if lvsd changed it. Default false.' }),
    ),
    nftables: opt(
      Obj(
        {
          table: opt(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.-]*$', maxLength: 255, description: 'Name of the table (one in family ip, one in ip6; keepalived nftables NAME). Default lvsd_vrrp.' })),
          priority: opt(Int(-2147483648, 2147483647, 'Priority of its output chain (keepalived nftables_priority). Default -1.')),
          counters: opt(Type.Boolean({ description: 'A counter on each rule (keepalived nftables_counters). Default false.' })),
        },
        'The nftables table lvsd installs while an instance uses a VMAC interface: IGMP and MLDv2 reports leaving a VMAC are sent from its parent interface instead (with the parent\'s MAC) and the originals dropped, as are IPv6 router solicitations, so a snooping switch never learns the virtual MAC from a backup (keepalived does the same). With disableLocalIgmp only the ip6 table is installed. Deleted on stop.',
      ),
    ),
    scripts: opt(Type.Record(Type.String({ pattern: '^[A-Za-z0-9_.:@-]+$' }), VrrpScript, { additionalProperties: false, description: 'Tracking scripts by name (keepalived vrrp_script).' })),
    processes: opt(Type.Record(Type.String({ pattern: '^[A-Za-z0-9_.:@-]+$' }), VrrpProcess, { additionalProperties: false, description: 'Process trackers by name (keepalived vrrp_track_process).' })),
    instances: opt(Type.Array(VrrpInstance, { description: 'VRRP instances (keepalived vrrp_instance).' })),
    syncGroups: opt(Type.Array(SyncGroup, { description: 'Sync groups (keepalived vrrp_sync_group).' })),
    realtimePriority: opt(
      Type.Integer({
        minimum: 1,
        maximum: 99,
        description: 'Run the VRRP engine process (all its threads) with the SCHED_RR real-time policy at this priority (keepalived vrrp_rt_priority); keeps short advert intervals safe on a busy director.',
      }),
    ),
  },
  'VRRP: virtual routers that float the VIPs between directors.',
);

// ---------------------------------------------------------------------------------------------
// Virtual servers

export const SCHEDULERS = ['rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'dh', 'sh', 'sed', 'nq', 'fo', 'ovf', 'mh', 'twos'] as const;
export const SCHEDULER_FLAGS = ['sh-port', 'sh-fallback', 'mh-port', 'mh-fallback'] as const;
export const METHODS = ['nat', 'dr', 'tun'] as const;
export const CHECK_TYPES = ['tcp', 'http', 'https', 'udp', 'dns', 'smtp', 'ping', 'file', 'exec', 'agent', 'none'] as const;

const HttpStatus = Type.Union(
  [Int(100, 599, 'A status code.'), Type.String({ pattern: '^[1-5][0-9]{2}-[1-5][0-9]{2}$', description: 'A range like 200-299.' })],
  { description: 'A status code (200) or a range ("200-299").' },
);

// How bodyRegex is applied (keepalived's regex_options, regex_no_match, regex_min_offset, regex_max_offset).
const BodyRegexOptions = {
  bodyRegexFlags: opt(Type.String({ pattern: '^(?:([ims])(?!.*\\1))*$', description: 'JavaScript flags of bodyRegex: i (caseless), m (multiline), s (dotall). Default none.' })),
  bodyRegexNoMatch: opt(Type.Boolean({ description: 'Invert bodyRegex: the check fails when the body matches (keepalived regex_no_match). Default false.' })),
  bodyRegexMinOffset: opt(Int(0, 1048576, 'bodyRegex must match starting at this byte of the body or later (keepalived regex_min_offset); a lookbehind still sees the bytes before. Default 0.')),
  bodyRegexMaxOffset: opt(Int(0, 1048576, 'bodyRegex must match starting at this byte of the body or earlier (keepalived regex_max_offset); the match may run on past it. Default: anywhere.')),
};

const HttpUrl = Obj(
  {
    path: Type.String({ pattern: '^/', description: 'Request path.' }),
    status: opt(Type.Array(HttpStatus, { minItems: 1, description: 'Accepted status codes. Default [200-299].' })),
    bodyRegex: opt(Type.String({ minLength: 1, description: 'The body must match this regular expression.' })),
    ...BodyRegexOptions,
    digest: opt(Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'MD5 hex digest the body must have (keepalived digest).' })),
  },
  'One page of an http/https check (keepalived url block).',
);

export const HealthCheck = Obj(
  {
    type: opt(Enum(CHECK_TYPES, 'Checker: tcp connect, http(s) GET, udp probe, dns query, smtp (banner 220, HELO 250, QUIT: keepalived SMTP_CHECK), ping (ICMP/ICMPv6 echo: keepalived PING_CHECK; needs the native probe engine), file (an integer in a file sets up/down or the weight: keepalived FILE_CHECK), exec script, agent (weight feedback line), or none (always up). Default tcp when a healthCheck is given, none when absent.')),
    interval: opt(Duration('Time between checks (keepalived delay_loop). Default 5s.')),
    timeout: opt(Duration('A check that takes longer fails (connect_timeout). Default 2s.')),
    rise: opt(Int(1, 1000, 'Successes in a row to come up. Default 1.')),
    fall: opt(Int(1, 1000, 'Failures in a row to go down. Default 1.')),
    retry: opt(Int(0, 100, 'Extra attempts within one check before it counts as failed (nb_get_retry). Default 0.')),
    delayBeforeRetry: opt(Duration('Pause between those attempts. Default 1s.')),
    warmup: opt(Duration('Random delay (0..warmup) before the first check, to spread load; 0 spreads the first checks over one interval instead. Default 0s.')),
    connectIp: opt(Ip('Check this address instead of the real server\'s.')),
    connectPort: opt(Port('Check this port instead of the real server\'s.')),
    bindTo: opt(Ip('Source address of the checks.')),
    bindPort: opt(Port('Source port of the checks (keepalived bind_port), with bindTo or alone (any address of the target\'s family). Not for ping, file, exec or none checks.')),
    fwmark: opt(Int(1, 4294967295, 'Firewall mark (SO_MARK) on the check\'s socket, from its first packet (keepalived checker fwmark): for policy routing or nft rules. tcp, plain http and smtp checks only (the native probe engine sets it; Node.js cannot), and lvsd needs CAP_NET_ADMIN.')),
    logAllFailures: opt(Type.Boolean({ description: 'Log every failed try of this check while the server is up, not only the change to down (keepalived log_all_failures; its global checker_log_all_failures is imported onto every check). Default false.' })),
    bindInterface: opt(Type.String({ minLength: 1, maxLength: 15, description: 'Interface of an IPv6 link-local check target (fe80::/10, checked as fe80::…%eth0); refused for any other target (Node cannot SO_BINDTODEVICE: use bindTo for a source address).' })),
    http: opt(
      Obj(
        {
          path: opt(Type.String({ pattern: '^/', description: 'Request path. Default /.' })),
          status: opt(Type.Array(HttpStatus, { minItems: 1, description: 'Accepted status codes. Default [200-299].' })),
          host: opt(Type.String({ minLength: 1, description: 'Host header (keepalived virtualhost). Default: the address checked, with :port when the port is not 80 (http) or 443 (https).' })),
          bodyRegex: opt(Type.String({ minLength: 1, description: 'The body must match this regular expression.' })),
          ...BodyRegexOptions,
          digest: opt(Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'MD5 hex digest the body must have (keepalived digest).' })),
          protocol: opt(Enum(['1.0', '1.0C', '1.1'], 'Request line and Connection header (keepalived http_protocol): 1.0 sends HTTP/1.0 without a Connection header, 1.0C HTTP/1.0 with Connection: close, 1.1 HTTP/1.1 with Connection: close. keepalived\'s default is 1.0, which the importer writes out. Default 1.1.')),
          urls: opt(Type.Array(HttpUrl, { minItems: 1, description: 'Several pages, every one must pass (keepalived: several url blocks). Instead of path, status, bodyRegex and digest; each url is checked as its own checker with this check\'s timing, so the panel names the page that failed.' })),
          headers: opt(Type.Record(Type.String({ pattern: '^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$' }), Type.String(), { additionalProperties: false, description: 'Extra request headers. Default none.' })),
          tlsVerify: opt(Type.Boolean({ description: 'https: verify the certificate chain and name against the system CA store (keepalived verifies neither). Default false.' })),
          sni: opt(Type.String({ minLength: 1, description: 'https: TLS server name. Default: host without its port when it is a name (an address is never sent as SNI, RFC 6066).' })),
          ca: opt(Type.String({ minLength: 1, description: 'https with tlsVerify: PEM file of the CAs trusted instead of the system store.' })),
          clientCertificate: opt(
            Obj(
              {
                certificate: Type.String({ minLength: 1, description: 'PEM file: the client certificate, then any intermediates (keepalived SSL certificate).' }),
                key: Type.String({ minLength: 1, description: 'PEM file of its private key (keepalived SSL key).' }),
                password: opt(Type.String({ minLength: 1, description: 'Password of an encrypted key (keepalived SSL password). A secret: never logged or shown in errors.' })),
              },
              'https: the certificate this check presents when the real server asks for one (keepalived\'s SSL block, which applies to every SSL_GET). The files are read when the check starts and again when they change on disk: a renewed certificate needs no reload.',
            ),
          ),
        },
        'http/https checker settings.',
      ),
    ),
    udp: opt(
      Obj(
        {
          payload: opt(Type.String({ pattern: '^([0-9a-fA-F]{2})*$', description: 'Datagram to send, hex. Default empty.' })),
          expect: opt(Type.String({ minLength: 1, description: 'Expected reply. A string of hex digits only (an even number of them) is the exact reply, as bytes; any other string is a JavaScript regular expression, written without slashes, over the reply read as latin1. With expect a reply is required; without it none is: the check passes unless an ICMP port-unreachable comes back within min(timeout/2, 500ms) (keepalived UDP_CHECK without require_reply).' })),
          minReplyLength: opt(Int(0, 65535, 'With expect: a reply shorter than this many bytes fails (keepalived min_reply_length). Default 0.')),
          maxReplyLength: opt(Int(0, 65535, 'With expect: a reply longer than this many bytes fails (keepalived max_reply_length; keepalived\'s default is 255, which the importer writes out). Default: no limit.')),
        },
        'udp checker settings.',
      ),
    ),
    dns: opt(
      Obj(
        {
          name: Type.String({ minLength: 1, description: 'Name to query.' }),
          type: opt(Enum(['A', 'AAAA', 'CNAME', 'MX', 'NS', 'PTR', 'SOA', 'SRV', 'TXT'], 'Query type. Default A.')),
          expectRcode: opt(Enum(['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'], 'Expected response code. Default NOERROR.')),
          expectAnswer: opt(Type.String({ minLength: 1, description: 'An answer record the reply must hold.' })),
          protocol: opt(Enum(['udp', 'tcp'], 'Transport: udp, or tcp with the 2-byte length prefix (RFC 7766). Default udp.')),
          tcpOnTruncation: opt(Type.Boolean({ description: 'udp: ask again over TCP when the answer is truncated (TC). Default true.' })),
        },
        'dns checker settings.',
      ),
    ),
    smtp: opt(
      Obj(
        { helo: opt(Type.String({ pattern: '^[\\x21-\\x7e]+$', maxLength: 255, description: 'Name said in HELO (keepalived helo_name). Default: this director\'s host name.' })) },
        'smtp checker settings.',
      ),
    ),
    file: opt(
      Obj(
        {
          path: Type.String({ pattern: '^/', minLength: 2, description: 'Absolute path of the file; its integer is read at every check (strtol base 0: 12, -3, 0x1f). No file, an empty file or no digits = 0.' }),
          weight: opt(Int(-65535, 65535, 'The value times this weight is added to the real server\'s weight; 0 = down while the value is non-zero (keepalived track_file weight). Default 1.')),
          reverse: opt(Type.Boolean({ description: 'Negate the weight; with weight 0, down while the value is 0 (weight … reverse). Default false.' })),
        },
        'file checker settings (keepalived FILE_CHECK over a track_file). With a weight, a value whose product reaches -2147483648 means down.',
      ),
    ),
    exec: opt(
      Obj(
        {
          command: Command('Command run through /bin/sh -c; exit 0 = up (keepalived MISC_CHECK). Its environment holds LVSD_RS_ADDRESS, LVSD_RS_PORT and LVSD_CHECK_TIMEOUT_MS.'),
          dynamicWeight: opt(Type.Boolean({ description: 'Exit codes 2..255 set the weight to code-2 (misc_dynamic). Default false.' })),
        },
        'exec checker settings.',
      ),
    ),
    agent: opt(
      Obj(
        {
          port: opt(Port('Port of the agent on the real server. With type agent: default connectPort or the real server\'s port; beside another check: required.')),
          send: opt(Type.String({ minLength: 1, maxLength: 510, pattern: '^[\\x20-\\x7e]+$', description: 'A line sent to the agent once connected (haproxy agent-send). Default: nothing.' })),
        },
        'Agent (haproxy agent-check): the real server answers one line — "75%", "drain", "down #reason", "ready"… — that scales its weight or takes it out. With type agent it is the check; beside another check it adds weight feedback.',
      ),
    ),
  },
  'A health check. On a virtual server it is the default of every real server; on a real server it is merged over that.',
);

const MoreChecks = (which: string) =>
  Type.Array(HealthCheck, {
    minItems: 1,
    description: `Further checkers beside healthCheck (keepalived: several checkers in one real_server). The real server is up only while healthCheck and every one of these pass, each with its own interval, timeout and rise/fall; each is a whole check (it does not inherit healthCheck's settings). ${which}`,
  });

export const TunnelSettings = Obj(
  {
    type: Enum(['ipip', 'gue', 'gre'], 'Tunnel encapsulation.'),
    port: opt(Port('gue: UDP port.')),
    checksum: opt(Enum(['none', 'csum', 'remcsum'], 'gue/gre checksum. Default none.')),
  },
  'TUN forwarding encapsulation.',
);

export const RealServer = Obj(
  {
    address: Ip('Real server address.'),
    port: opt(Port('Real server port. Default: the virtual server\'s port (required to be equal for dr/tun).')),
    weight: opt(Int(0, 65535, 'Weight 0..65535; 0 = quiesced. Default 1.')),
    method: opt(Enum(METHODS, 'Forwarding method. Default: the virtual server\'s.')),
    tunnel: opt(TunnelSettings),
    upperThreshold: opt(Int(0, 2147483647, 'Stop sending new connections above this many; 0 = no limit.')),
    lowerThreshold: opt(Int(0, 2147483647, 'Resume below this many; 0 = no limit.')),
    healthCheck: opt(HealthCheck),
    moreChecks: opt(MoreChecks('Replaces the virtual server\'s moreChecks.')),
    notify: opt(Obj({ up: opt(Command('Run when it comes up.')), down: opt(Command('Run when it goes down.')) }, 'Notify hooks (notify_up / notify_down).')),
  },
  'A real server (keepalived real_server).',
);

export const VirtualServer = Obj(
  {
    name: opt(Name('Name shown in logs and the panel. Default: the canonical id, e.g. tcp:192.0.2.10:80.')),
    address: opt(Ip('Virtual address (a VIP). Exclusive with fwmark.')),
    port: opt(Int(0, 65535, 'Virtual port (required with address; not allowed with fwmark). 0 = every port, as keepalived\'s virtual server without a port: persistent services only (IPVS refuses others), the real servers keep the packet\'s port, and only the ipvs dataplane carries it.')),
    fwmark: opt(Int(1, 4294967295, 'Firewall mark instead of address/port.')),
    family: opt(Enum(['ipv4', 'ipv6'], 'fwmark services: address family. Default ipv4.')),
    protocol: opt(Enum(['tcp', 'udp', 'sctp'], 'Protocol. Default tcp.')),
    scheduler: opt(Enum(SCHEDULERS, 'IPVS scheduler (lb_algo). Default wlc.')),
    schedulerFlags: opt(Type.Array(Enum(SCHEDULER_FLAGS, 'A scheduler flag.'), { description: 'sh-port / sh-fallback (scheduler sh), mh-port / mh-fallback (scheduler mh). Default: none, except [mh-fallback, mh-port] for scheduler mh (written out, [] turns them off).' })),
    method: opt(Enum(METHODS, 'Default forwarding method of the real servers (lb_kind). Default nat.')),
    persistence: opt(
      Obj(
        {
          timeout: KernelDuration('Persistence timeout (persistence_timeout).'),
          netmask: opt(Type.String({ minLength: 1, description: 'Client granularity: IPv4 netmask (255.255.255.0) or IPv6 prefix length ("64"). Default: host.' })),
          engine: opt(Enum(['sip'], 'IPVS persistence engine (keepalived persistence_engine): sip = one real server per SIP Call-ID (UDP; the kernel\'s ip_vs_pe_sip). ipvs dataplane only. Default none.')),
        },
        'Persistent (sticky) connections.',
      ),
    ),
    onePacket: opt(Type.Boolean({ description: 'UDP one-packet scheduling (ops). Default false.' })),
    quorum: opt(Int(0, 2147483647, 'Sum of weights of live real servers below which the service is down. Default 1.')),
    hysteresis: opt(Int(0, 2147483647, 'Quorum hysteresis. Default 0.')),
    inhibitOnFailure: opt(Type.Boolean({ description: 'Keep failed real servers at weight 0 instead of removing them. Default false.' })),
    alpha: opt(Type.Boolean({ description: 'Real servers start down until a check passes. Default false.' })),
    haSuspend: opt(Type.Boolean({ description: 'keepalived ha_suspend: suspend the health checks while no VRRP instance of this director holds the virtual address as MASTER; the real servers keep their state meanwhile. An address no VRRP instance carries is taken as local (checks run). Not with fwmark. Default false.' })),
    omega: opt(Type.Boolean({ description: 'Run the down notify of every real server when the service is removed. Default false.' })),
    notify: opt(Obj({ quorumUp: opt(Command('Run when quorum is gained.')), quorumDown: opt(Command('Run when quorum is lost.')) }, 'Quorum notify hooks.')),
    sorryServer: opt(
      Obj(
        {
          address: Ip('Sorry server address.'),
          port: opt(Port('Sorry server port. Default: the virtual server\'s port.')),
          method: opt(Enum(METHODS, 'Forwarding method. Default: the virtual server\'s.')),
          inhibit: opt(Type.Boolean({ description: 'Keep the sorry server in the table at weight 0 while the quorum holds, instead of adding it only when the quorum is lost (keepalived sorry_server_inhibit). Default false.' })),
        },
        'Server that takes all traffic while the quorum is lost (sorry_server).',
      ),
    ),
    healthCheck: opt(HealthCheck),
    moreChecks: opt(MoreChecks('The default of every real server that has no moreChecks of its own.')),
    realServers: opt(Type.Array(RealServer, { description: 'Real servers (real_server).' })),
  },
  'A virtual server (keepalived virtual_server): address:port/protocol or fwmark, with its real servers.',
);

// ---------------------------------------------------------------------------------------------
// BGP: every healthy director announces its VIPs through BIRD (docs/bgp.md)

export const BgpAnnouncement = Obj(
  {
    prefix: Type.String({ format: 'cidr', description: 'The route announced, e.g. 192.0.2.10/32 (the VIP, kept on lo for the dataplane).' }),
    virtualServers: opt(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'Virtual servers (id or name) that must all have quorum for the prefix to be announced. Default: every virtual server on the prefix\'s address (host routes only).' })),
    communities: opt(Type.Array(Type.String({ pattern: '^[0-9]{1,5}:[0-9]{1,5}$' }), { description: 'Standard BGP communities "asn:value" added to the route.' })),
  },
  'One prefix lvsd announces while its virtual servers have quorum and withdraws when they lose it.',
);

export const BgpSection = Obj(
  {
    speaker: opt(Enum(['bird'], 'The BGP speaker lvsd drives. Only BIRD 2 for now. Default bird.')),
    socket: opt(Type.String({ minLength: 1, description: 'BIRD\'s control socket (bird -s). Default /run/bird/bird.ctl.' })),
    configFile: opt(Type.String({ minLength: 1, description: 'The fragment lvsd writes and bird.conf includes (one protocol static per prefix). Default /etc/bird/lvsd.conf.' })),
    configureTimeout: opt(Duration('A reload\'s `configure timeout`: BIRD undoes the new config by itself if lvsd does not confirm it in time. Default 30s.')),
    drainOnStop: opt(Duration('On stop, announce with the graceful-shutdown community (65535:0) this long before the withdraw. 0 withdraws at once. Default 5s.')),
    announce: Type.Array(BgpAnnouncement, { description: 'The prefixes lvsd announces.' }),
  },
  'Active-active directors behind ECMP routers: announce each VIP over BGP while its virtual servers are healthy.',
);

// ---------------------------------------------------------------------------------------------
// Alerts: e-mail as keepalived sends it (notification_email, smtp_server, smtp_alert; docs/alerts.md)

// user@domain, or a bare local user ("root"), which keepalived's samples mail and a local MTA delivers.
const Mailbox = (description: string) => Type.String({ pattern: '^[^\\s@<>,]+(@[^\\s@<>,]+)?$', maxLength: 254, description });

export const EmailAlerts = Obj(
  {
    to: Type.Array(Mailbox('A recipient.'), { minItems: 1, description: 'Recipients (notification_email); one message goes to all of them.' }),
    from: Mailbox('Sender (notification_email_from).'),
    smtpServer: Type.String({ minLength: 1, maxLength: 255, description: 'SMTP server host name or address (smtp_server).' }),
    smtpPort: opt(Port('SMTP server port. Default 25.')),
    connectTimeout: opt(Duration('Bounds the whole SMTP exchange of one message (smtp_connect_timeout). Default 30s.')),
    helo: opt(Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9.-]+$', description: 'Name sent in EHLO/HELO (smtp_helo_name). Default: this machine\'s host name.' })),
    vrrp: opt(Type.Boolean({ description: 'Mail on VRRP transitions (smtp_alert_vrrp). Default true.' })),
    realServers: opt(Type.Boolean({ description: 'Mail when a real server goes up or down (smtp_alert_checker). Default true.' })),
    quorum: opt(Type.Boolean({ description: 'Mail when a virtual server gains or loses its quorum (smtp_alert_checker). Default true.' })),
    instances: opt(Type.Record(Type.String({ minLength: 1 }), Type.Boolean(), { additionalProperties: false, description: 'Per VRRP instance (by name): mail on its transitions or not, over `vrrp` (an instance\'s smtp_alert).' })),
    virtualServers: opt(Type.Record(Type.String({ minLength: 1 }), Type.Boolean(), { additionalProperties: false, description: 'Per virtual server (id or name): mail on its quorum and its real servers or not, over `realServers` and `quorum` (a virtual server\'s smtp_alert).' })),
    queueSize: opt(Int(1, 10000, 'Messages waiting while one is sent; when full (a dead or slow server) a new alert is dropped and counted. Default 64.')),
  },
  'E-mail alerts, sent one at a time through an SMTP server; an alert never waits for the mail.',
);

export const AlertsSection = Obj({ email: opt(EmailAlerts) }, 'Alerts lvsd sends by itself (besides notify scripts and the event stream).');

// ---------------------------------------------------------------------------------------------
// Cluster: the other directors this one shows beside itself in the panel (docs/cluster.md)

export const ClusterPeer = Obj(
  {
    name: Name('The peer director\'s name, as the panel shows it (its node.name, usually).'),
    url: Type.String({ pattern: '^https?://[^\\s/]+/?$', maxLength: 255, description: 'The peer\'s API base URL, e.g. https://lb2.example:9180. Plain http only to a loopback address.' }),
    tokenFile: Type.String({ minLength: 1, description: 'File holding the peer token this director sends to that peer (Authorization: Bearer). Read at each request, so a new token needs no reload.' }),
    acceptTokenSha256: opt(Type.String({ pattern: '^[0-9a-f]{64}$', description: 'sha256 (hex) of the peer token that peer sends here; a request carrying it reads this director\'s API as a viewer named peer:NAME. The token itself is never stored here.' })),
    acceptActions: opt(Type.Boolean({ description: 'Let this peer forward its operators\' actions here (drain / enable a real server, VRRP failover), audited here as USER@PEER. Default false: the peer token only reads.' })),
    ca: opt(Type.String({ minLength: 1, description: 'PEM file of the CA that signed the peer\'s API certificate (https).' })),
    fingerprint: opt(Type.String({ pattern: '^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$', description: 'sha256 fingerprint of the peer\'s API certificate, as `openssl x509 -noout -fingerprint -sha256` prints it: a self-signed certificate pinned.' })),
  },
  'Another director: where its API is, the token to read it with, how to trust its certificate.',
);

export const ClusterSection = Obj(
  {
    name: opt(Name('The cluster\'s name, shown on the panel\'s Cluster page. Default "cluster".')),
    timeout: opt(Duration('How long a peer may take to answer before the Cluster page shows it unreachable. Default 2s.')),
    peers: Type.Array(ClusterPeer, { description: 'The other directors (the VRRP peers, the BGP directors).' }),
  },
  'The directors shown side by side on the panel\'s Cluster page, read director to director with peer tokens.',
);

// ---------------------------------------------------------------------------------------------
// The file

export const ConfigFile = Type.Object(
  {
    $schema: opt(Type.String({ description: 'Editor hint: path or URL of lvsd.schema.json. Ignored by lvsd.' })),
    node: opt(NodeSection),
    api: opt(ApiSection),
    stateFile: opt(Type.String({ minLength: 1, description: 'Operator state (overrides, users, audit). Default /var/lib/lvsd/state.json.' })),
    dataplane: opt(Enum(DATAPLANES, 'Which dataplane programs the virtual servers; auto picks ipvs, then nftables, then userspace. Default auto.')),
    ipvs: opt(IpvsSection),
    nftables: opt(NftablesSection),
    userspace: opt(UserspaceSection),
    vrrp: opt(VrrpSection),
    bgp: opt(BgpSection),
    alerts: opt(AlertsSection),
    cluster: opt(ClusterSection),
    virtualServers: opt(Type.Array(VirtualServer, { description: 'Virtual servers (keepalived virtual_server).' })),
  },
  {
    additionalProperties: false,
    title: 'lvsd configuration',
    description: 'lvsd.yaml: one director of a keepalived/LVS-style HA load balancer.',
  },
);

/** The file as written (after schema validation, before defaults and normalisation). */
export type ConfigFile = Static<typeof ConfigFile>;
export type VrrpInstanceFile = Static<typeof VrrpInstance>;
export type VirtualServerFile = Static<typeof VirtualServer>;
export type RealServerFile = Static<typeof RealServer>;
export type HealthCheckFile = Static<typeof HealthCheck>;

/** The JSON Schema document exported to config/lvsd.schema.json. */
export function jsonSchema(): Record<string, unknown> {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    ...(JSON.parse(JSON.stringify(ConfigFile)) as Record<string, unknown>),
  };
}
