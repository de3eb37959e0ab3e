// global_defs' e-mail settings, and the smtp_alert of instances and virtual servers → lvsd's alerts.email.
// keepalived's switches inherit (object → smtp_alert_vrrp / smtp_alert_checker → smtp_alert → a default);
// lvsd's are written out resolved, so the output says what will be mailed. The defaults, measured with
// keepalived 2.2.7 in the guest (docs/alerts.md): with no smtp_alert anywhere it mails real servers going up
// and down, but neither VRRP transitions nor virtual servers' quorum.
import type { Directive } from './parser.js';
import type { AlertsOut } from './lvsd-shape.js';
import type { BlockReader, Context } from './reader.js';

/** What global_defs says about mail; `flags` are keepalived's tri-state switches (undefined: not written). */
export interface GlobalMail {
  to: string[];
  from?: string;
  server?: { host: string; port?: number };
  connectTimeout?: string;
  helo?: string;
  flags: { all?: boolean | undefined; vrrp?: boolean | undefined; checker?: boolean | undefined };
  d: Directive;
}

/** smtp_alert of an instance (by the out object) or a virtual server: kept beside the output, not in it. */
export const smtpAlertOf = new WeakMap<object, boolean>();

/** Reads the object's own smtp_alert (an instance's or a virtual server's). */
export function readSmtpAlert(r: BlockReader, out: object): void {
  const v = r.bool(r.last('smtp_alert'));
  if (v !== undefined) smtpAlertOf.set(out, v);
}

export function mapGlobalMail(r: BlockReader): GlobalMail | undefined {
  const ctx = r.ctx;
  const emailD = r.last('notification_email');
  const flags = { all: r.bool(r.last('smtp_alert')), vrrp: r.bool(r.last('smtp_alert_vrrp')), checker: r.bool(r.last('smtp_alert_checker')) };
  const fromD = r.last('notification_email_from');
  const serverD = r.last('smtp_server');
  const timeoutD = r.last('smtp_connect_timeout');
  const heloD = r.last('smtp_helo_name');
  r.drop('lvsd mails every fault it reports; no_email_faults is not carried over', 'no_email_faults');
  if (emailD === undefined) {
    for (const d of [fromD, serverD, timeoutD, heloD]) if (d) ctx.reportDirective(d, 'no notification_email: keepalived sends no mail, nor does lvsd');
    return undefined;
  }
  // notification_email { a@x b@y } — one address per word, as keepalived reads the block.
  const to = (emailD.block ?? []).flatMap((d) => [d.keyword, ...d.args]).filter((a) => a.length > 0);
  if (to.length === 0) {
    ctx.reportDirective(emailD, 'no recipient in notification_email; no alerts are carried over');
    return undefined;
  }
  const out: GlobalMail = { to, flags, d: emailD };
  const from = r.str(fromD);
  if (from !== undefined) out.from = from;
  const host = r.str(serverD);
  if (serverD && host !== undefined) {
    const port = serverD.args[1] === undefined ? undefined : r.int(serverD, 1, 65535, 1);
    out.server = { host, ...(port === undefined ? {} : { port }) };
  }
  const timeout = r.timer(timeoutD);
  if (timeout !== undefined) out.connectTimeout = timeout;
  const helo = r.str(heloD);
  if (helo !== undefined) out.helo = helo;
  return out;
}

/** The resolved alerts section; instances by name, virtual servers by their canonical id. */
export function alertsOut(ctx: Context, g: GlobalMail, instances: readonly { name: string; out: object }[], services: readonly { id: string; out: object }[]): AlertsOut | undefined {
  if (g.server === undefined) {
    ctx.reportDirective(g.d, 'no smtp_server: keepalived sends no mail without one, nor does lvsd');
    return undefined;
  }
  const email: NonNullable<AlertsOut['email']> = {
    to: g.to,
    from: g.from ?? 'keepalived@localhost',
    smtpServer: g.server.host,
    ...(g.server.port === undefined ? {} : { smtpPort: g.server.port }),
    connectTimeout: g.connectTimeout ?? '30s',
    ...(g.helo === undefined ? {} : { helo: g.helo }),
    vrrp: g.flags.vrrp ?? g.flags.all ?? false,
    realServers: g.flags.checker ?? g.flags.all ?? true,
    quorum: g.flags.checker ?? g.flags.all ?? false,
  };
  if (g.from === undefined) ctx.note(email, 'from: keepalived\'s default is keepalived@ this host\'s name; set it');
  const inst = Object.fromEntries(instances.flatMap((i) => { const v = smtpAlertOf.get(i.out); return v === undefined ? [] : [[i.name, v]]; }));
  if (Object.keys(inst).length > 0) email.instances = inst;
  const vs = Object.fromEntries(services.flatMap((s) => { const v = smtpAlertOf.get(s.out); return v === undefined ? [] : [[s.id, v]]; }));
  if (Object.keys(vs).length > 0) email.virtualServers = vs;
  ctx.source.self(email, g.d.pos);
  return { email };
}
