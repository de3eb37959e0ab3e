// Per-real-server connection counts from /proc/net/nf_conntrack. Pure parser. A DNATed connection's
// original tuple holds the VIP:port, its reply tuple the real server:port; ESTABLISHED (or any UDP
// flow) counts as active and the rest (SYN_SENT, TIME_WAIT, …) as inactive, as ipvsadm shows them.
import { canonicalAddress, sameService, type NftService, type NftTableModel } from './model.js';

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

interface Entry {
  proto: string;
  state: string;
  /** Original destination (the VIP) and the reply's source (the real server). */
  odst: string;
  odport: number;
  rsrc: string;
  rsport: number;
}

/** The NAT-relevant fields of each /proc/net/nf_conntrack line (tcp, udp, sctp). */
function entries(text: string): Entry[] {
  const out: Entry[] = [];
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
    out.push({ proto, state, odst: canonicalAddress(odst), odport: Number(odport), rsrc: canonicalAddress(rsrc), rsport: Number(rsport) });
  }
  return out;
}

export function countConntrack(text: string): Map<string, ConnCount> {
  const out = new Map<string, ConnCount>();
  const bump = (key: string, active: boolean): void => {
    const c = out.get(key) ?? { active: 0, inactive: 0 };
    if (active) c.active++;
    else c.inactive++;
    out.set(key, c);
  };
  for (const e of entries(text)) {
    // Not DNATed: the reply does not come from somewhere else than where the client sent it.
    if (e.rsrc === e.odst) continue;
    const active = e.proto === 'udp' || e.state === 'ESTABLISHED';
    bump(conntrackKey(e.proto, e.odst, e.odport, e.rsrc, e.rsport), active);
    bump(anyServiceKey(e.rsrc, e.rsport), active);
  }
  return out;
}

/** A real server that stopped receiving new connections of a service (tuple services name their VIP). */
export interface GoneTarget {
  address: string;
  /** 0: the real server keeps the packet's port (fwmark services). */
  port: number;
  vip?: { address: string; protocol: string; port: number };
}

/**
 * Real servers in a service's DNAT map in `from` but not in `to` (a removed service loses all of them). Pure.
 * `chains`: the services to look at (default all of `from`; the backend passes tableDelta's).
 */
export function goneTargets(from: ReadonlyMap<string, NftService>, to: NftTableModel, chains: Iterable<string> = from.keys()): GoneTarget[] {
  const out = new Map<string, GoneTarget>();
  for (const chain of chains) {
    const svc = from.get(chain);
    if (svc === undefined) continue;
    if (svc.match.kind === 'tuple' && svc.match.protocol !== 'tcp') continue;
    const next = to.services.get(chain);
    // Unchanged services first, without building anything: this runs after every apply, and building the
    // key set of each of 1,000 services × 10 real servers was ~11 ms of a one-service change (profiled).
    if (next !== undefined && sameService(svc, next)) continue;
    const kept = new Set((next?.slots ?? []).map((s) => `${s.address}|${s.port}`));
    for (const s of svc.slots) {
      if (kept.has(`${s.address}|${s.port}`)) continue;
      const vip = svc.match.kind === 'tuple' ? { address: svc.match.address, protocol: svc.match.protocol, port: svc.match.port } : undefined;
      const target: GoneTarget = { address: s.address, port: s.port, ...(vip === undefined ? {} : { vip }) };
      out.set(JSON.stringify(target), target);
    }
  }
  return [...out.values()];
}

/**
 * `conntrack` arguments that delete the CLOSE entries of connections to a gone real server. Such an entry
 * (left for 10 s after the server reset a connection, e.g. when it stopped) still holds its DNAT binding, and
 * conntrack does not reopen it for a new SYN from the same client port when the reset came from the server:
 * it passes the SYN on to the old server, which refuses it. Entries in any other state are left alone
 * (established connections keep their server; TIME_WAIT entries are reopened with a new NAT decision).
 */
export function forgetClosedArgs(t: GoneTarget): string[] {
  const args = ['-D', '-f', t.address.includes(':') ? 'ipv6' : 'ipv4', '-p', 'tcp', '--state', 'CLOSE', '--reply-src', t.address];
  if (t.port !== 0) args.push('--reply-port-src', String(t.port));
  if (t.vip !== undefined) args.push('--orig-dst', t.vip.address, '--orig-port-dst', String(t.vip.port));
  return args;
}

/** The targets that have at least one TCP entry in state CLOSE in `text` (/proc/net/nf_conntrack): the only ones worth a `conntrack -D`. */
export function withClosedEntries(text: string, gone: GoneTarget[]): GoneTarget[] {
  const closed = entries(text).filter((e) => e.proto === 'tcp' && e.state === 'CLOSE');
  return gone.filter((t) =>
    closed.some((e) => e.rsrc === t.address && (t.port === 0 || e.rsport === t.port) && (t.vip === undefined || (e.odst === t.vip.address && e.odport === t.vip.port))),
  );
}
