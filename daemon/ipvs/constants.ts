// IPVS generic-netlink constants, from linux include/uapi/linux/ip_vs.h (family "IPVS", version 1).
// Names follow the header so a reader can grep the kernel for them.

export const IPVS_GENL_NAME = 'IPVS';
export const IPVS_GENL_VERSION = 1;

export const Cmd = {
  NEW_SERVICE: 1,
  SET_SERVICE: 2,
  DEL_SERVICE: 3,
  GET_SERVICE: 4,
  NEW_DEST: 5,
  SET_DEST: 6,
  DEL_DEST: 7,
  GET_DEST: 8,
  NEW_DAEMON: 9,
  DEL_DAEMON: 10,
  GET_DAEMON: 11,
  SET_CONFIG: 12,
  GET_CONFIG: 13,
  SET_INFO: 14,
  GET_INFO: 15,
  ZERO: 16,
  FLUSH: 17,
} as const;
export type CmdNumber = (typeof Cmd)[keyof typeof Cmd];
export const CMD_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(Cmd).map(([k, v]) => [v, k]),
);

/** Top-level attributes of every IPVS command. */
export const CmdAttr = { SERVICE: 1, DEST: 2, DAEMON: 3, TIMEOUT_TCP: 4, TIMEOUT_TCP_FIN: 5, TIMEOUT_UDP: 6 } as const;

export const SvcAttr = {
  AF: 1,
  PROTOCOL: 2,
  ADDR: 3,
  PORT: 4,
  FWMARK: 5,
  SCHED_NAME: 6,
  FLAGS: 7,
  TIMEOUT: 8,
  NETMASK: 9,
  STATS: 10,
  PE_NAME: 11,
  STATS64: 12,
} as const;

export const DestAttr = {
  ADDR: 1,
  PORT: 2,
  FWD_METHOD: 3,
  WEIGHT: 4,
  U_THRESH: 5,
  L_THRESH: 6,
  ACTIVE_CONNS: 7,
  INACT_CONNS: 8,
  PERSIST_CONNS: 9,
  STATS: 10,
  ADDR_FAMILY: 11,
  STATS64: 12,
  TUN_TYPE: 13,
  TUN_PORT: 14,
  TUN_FLAGS: 15,
} as const;

export const DaemonAttr = {
  STATE: 1,
  MCAST_IFN: 2,
  SYNC_ID: 3,
  SYNC_MAXLEN: 4,
  MCAST_GROUP: 5,
  MCAST_GROUP6: 6,
  MCAST_PORT: 7,
  MCAST_TTL: 8,
} as const;

export const StatsAttr = {
  CONNS: 1,
  INPKTS: 2,
  OUTPKTS: 3,
  INBYTES: 4,
  OUTBYTES: 5,
  CPS: 6,
  INPPS: 7,
  OUTPPS: 8,
  INBPS: 9,
  OUTBPS: 10,
  PAD: 11,
} as const;

export const InfoAttr = { VERSION: 1, CONN_TAB_SIZE: 2 } as const;

/** Service flags (IP_VS_SVC_F_*). */
export const SvcFlag = {
  PERSISTENT: 0x1,
  HASHED: 0x2,
  ONEPACKET: 0x4,
  /** sh-fallback / mh-fallback */
  SCHED1: 0x8,
  /** sh-port / mh-port */
  SCHED2: 0x10,
  SCHED3: 0x20,
} as const;

/** Forwarding methods (IP_VS_CONN_F_*, masked by IP_VS_CONN_F_FWD_MASK = 0x7). */
export const Fwd = { MASQ: 0, LOCALNODE: 1, TUNNEL: 2, DROUTE: 3, BYPASS: 4 } as const;
export const FWD_MASK = 0x7;

export const TunType = { IPIP: 0, GUE: 1, GRE: 2 } as const;
export const TunFlag = { NOCSUM: 0, CSUM: 1, REMCSUM: 2 } as const;

/** Sync daemon states (IP_VS_STATE_*). */
export const SyncState = { NONE: 0, MASTER: 1, BACKUP: 2 } as const;
export const SYNC_DEFAULT_PORT = 8848;
export const SYNC_DEFAULT_GROUP = '224.0.0.81';
export const SYNC_DEFAULT_GROUP6 = 'ff02::8:8';

export const AF_INET = 2;
export const AF_INET6 = 10;
export const IPPROTO_TCP = 6;
export const IPPROTO_UDP = 17;
export const IPPROTO_SCTP = 132;

/** IP_VS_SCHEDNAME_MAXLEN, IP_VS_PENAME_MAXLEN, IP_VS_IFNAME_MAXLEN: all include the NUL. */
export const NAME_MAXLEN = 16;

/** Netlink framing. */
