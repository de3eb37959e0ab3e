// Per-real-server connection counts from /proc/net/nf_conntrack. Pure parser. A DNATed connection's
// original tuple holds the VIP:port, its reply tuple the real server:port; ESTABLISHED (or any UDP
// flow) counts as active and the rest (SYN_SENT, TIME_WAIT, …) as inactive, as ipvsadm shows them.
import { canonicalAddress } from './model.js';

export interface ConnCount {
  active: number;
  inactive: number;
}

/** Key: "proto vip port > rsaddr rsport"; a second key "* > rsaddr rsport" serves fwmark services. */
export function conntrackKey(protocol: string, vip: string, vport: number, rs: string, rport: number): string {
  return `${protocol} ${vip} ${vport} > ${rs} ${rport}`;
}

export function anyServiceKey(rs: string, rport: number): string {
  return `* > ${rs} ${rport}`;
}

export function countConntrack(text: string): Map<string, ConnCount> {
  const out = new Map<string, ConnCount>();
  const bump = (key: string, active: boolean): void => {
    const c = out.get(key) ?? { active: 0, inactive: 0 };
    if (active) c.active++;
    else c.inactive++;
    out.set(key, c);
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const f = line.split(/\s+/);
    const proto = f[2];
    if (proto !== 'tcp' && proto !== 'udp' && proto !== 'sctp') continue;
    const kv: Record<string, string[]> = {};
    let state = '';
    for (const tok of f.slice(5)) {
      const eq = tok.indexOf('=');
      if (eq < 0) {
        if (state === '' && /^[A-Z_]+$/.test(tok)) state = tok;
        continue;
      }
      const k = tok.slice(0, eq);
      (kv[k] ??= []).push(tok.slice(eq + 1));
    }
    const rsrc = kv.src?.[1];
    const odst = kv.dst?.[0];
    const rsport = kv.sport?.[1];
    const odport = kv.dport?.[0];
    if (odst === undefined || rsrc === undefined || rsport === undefined || odport === undefined) continue;
    // Not DNATed: the reply does not come from somewhere else than where the client sent it.
    if (rsrc === odst) continue;
    const active = proto === 'udp' || state === 'ESTABLISHED';
    const rs = canonicalAddress(rsrc);
    bump(conntrackKey(proto, canonicalAddress(odst), Number(odport), rs, Number(rsport)), active);
    bump(anyServiceKey(rs, Number(rsport)), active);
  }
  return out;
}
