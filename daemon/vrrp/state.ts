// The four states of a VRRP instance (RFC 5798 §6.4 Initialize, Backup, Master, plus keepalived's FAULT): the
// one definition the machine, the engine's reports, the director's snapshot, the API and the panel share.
export type VrrpState = 'INIT' | 'BACKUP' | 'MASTER' | 'FAULT';
export const VRRP_STATES: readonly VrrpState[] = ['INIT', 'BACKUP', 'MASTER', 'FAULT'];
