// The director's mail peer: e-mail alerts as keepalived sends them (docs/alerts.md). It listens to the
// director's own events — VRRP transitions, real servers up and down, quorum gained and lost — decides from
// the running config's alerts.email which ones to mail (one place: `wanted`), words them as keepalived does
// (alerts/message.ts) and sends them one at a time through the SMTP server (alerts/mailer.ts).
// Nothing waits for a mail: alerts go into a bounded queue, a full queue drops and counts, a dead server's
// burst of failures is logged once when it starts and once when it ends; each outcome is an `alert.mail`
// event, which /metrics counts. The config is read at each alert, so a reload applies at once.
import type { Logger } from 'pino';
import { alertText, type Alert, type Endpoint } from '../alerts/message.js';
import { smtpMailer, type Mailer, type OutgoingMail, type SmtpServer } from '../alerts/mailer.js';
import { BoundedQueue, OutcomeLedger, type BurstNote, type QueueCounters } from '../alerts/queue.js';
import type { Config, EmailAlertsConfig, VirtualServer } from '../config/types.js';
import type { DirectorEvent, DirectorEventInput } from './snapshot.js';

export interface MailSupervisorOptions {
  logger: Logger;
  config(): Config;
  subscribe(fn: (e: DirectorEvent) => void): () => void;
  emit(e: DirectorEventInput): void;
  /** The SMTP client (default nodemailer); tests of the pure parts plug in their own. */
  mailer?: (server: SmtpServer) => Mailer;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

function vsEndpoint(vs: VirtualServer): Endpoint {
  return vs.fwmark !== undefined ? { fwmark: vs.fwmark } : { address: vs.address ?? '', protocol: vs.protocol, port: vs.port ?? 0 };
}

/** A director event as an alert (with the virtual server it concerns), or null when it is not one keepalived mails. */
export function alertOf(e: DirectorEvent, config: Config): { alert: Alert; instance?: string; service?: string } | null {
  switch (e.type) {
    case 'vrrp.transition':
      // keepalived mails MASTER, BACKUP (the initial one too) and FAULT; nothing on stop.
      if (e.to === 'INIT' || e.from === e.to) return null;
      return { alert: { kind: 'vrrp', instance: e.instance, state: e.to }, instance: e.instance };
    case 'health.change': {
      const vs = config.virtualServers.find((v) => v.id === e.service);
      const rs = vs?.realServers.find((r) => r.id === e.realServer);
      if (vs === undefined || rs === undefined) return null;
      const realServer = { address: rs.address, protocol: vs.protocol, port: rs.port };
      return { alert: { kind: 'realServer', virtualServer: vsEndpoint(vs), realServer, up: e.status === 'up', check: rs.healthCheck.type }, service: vs.id };
    }
    case 'quorum.change': {
      const vs = config.virtualServers.find((v) => v.id === e.service);
      if (vs === undefined) return null;
      return { alert: { kind: 'quorum', virtualServer: vsEndpoint(vs), up: e.up, quorum: vs.quorum, hysteresis: vs.hysteresis, alive: e.aliveWeight ?? 0 }, service: vs.id };
    }
    default:
      return null;
  }
}

/** Whether alerts.email asks for this alert: the instance's or virtual server's own switch, else the kind's. */
export function wanted(email: EmailAlertsConfig, a: { alert: Alert; instance?: string; service?: string }): boolean {
  if (a.alert.kind === 'vrrp') return (a.instance === undefined ? undefined : email.instances[a.instance]) ?? email.vrrp;
  const own = a.service === undefined ? undefined : email.virtualServers[a.service];
  return own ?? (a.alert.kind === 'quorum' ? email.quorum : email.realServers);
}

export class MailSupervisor {
  private readonly unsubscribe: () => void;
  private queue: BoundedQueue<OutgoingMail> | null = null;
  private readonly ledger = new OutcomeLedger();
  private mailer: { key: string; mailer: Mailer } | null = null;
  private draining = false;
  private dropLogged = false;
  private stopped = false;

  constructor(private readonly opts: MailSupervisorOptions) {
    this.unsubscribe = opts.subscribe((e) => { this.onEvent(e); });
  }

  get counters(): Readonly<QueueCounters> {
    return this.ledger.counters;
  }

  private onEvent(e: DirectorEvent): void {
    if (this.stopped || e.type === 'alert.mail') return;
    const config = this.opts.config();
    const email = config.alerts?.email;
    if (email === undefined) return;
    const a = alertOf(e, config);
    if (a === null || !wanted(email, a)) return;
    const { subject, text } = alertText(config.node.name, a.alert);
    if (this.queue?.capacity !== email.queueSize) this.queue = this.resized(email.queueSize);
    if (!this.queue.offer({ from: email.from, to: email.to, subject, text })) {
      this.ledger.dropped();
      this.opts.emit({ type: 'alert.mail', outcome: 'dropped', subject });
      // Once until a message is sent again, like the failures: a dead server must not fill the log.
      if (!this.dropLogged) this.opts.logger.warn({ subject, queueSize: email.queueSize }, `mail alerts dropped: ${email.queueSize} already wait for the SMTP server (further drops are counted, not logged, until one is sent)`);
      this.dropLogged = true;
      return;
    }
    void this.drain();
  }

  /** A new queue of another size keeps what waits (up to its capacity; the rest is dropped and counted). */
  private resized(size: number): BoundedQueue<OutgoingMail> {
    const next = new BoundedQueue<OutgoingMail>(size);
    for (let m = this.queue?.take(); m !== undefined; m = this.queue?.take()) if (!next.offer(m)) this.ledger.dropped();
    return next;
  }

  private mailerFor(email: EmailAlertsConfig): Mailer {
    const server: SmtpServer = { host: email.server.host, port: email.server.port, connectTimeoutMs: email.connectTimeoutMs, ...(email.helo === undefined ? {} : { helo: email.helo }) };
    const key = JSON.stringify(server);
    if (this.mailer?.key !== key) {
      this.mailer?.mailer.close();
      this.mailer = { key, mailer: (this.opts.mailer ?? smtpMailer)(server) };
    }
    return this.mailer.mailer;
  }

  /** One message at a time, in order; never more than one drain loop. */
  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let m = this.queue?.take(); m !== undefined && !this.stopped; m = this.queue?.take()) {
        const email = this.opts.config().alerts?.email;
        if (email === undefined) {
          this.ledger.dropped(1 + (this.queue?.clear() ?? 0)); // the section was removed by a reload
          break;
        }
        const server = `${email.server.host}:${email.server.port}`;
        try {
          await this.mailerFor(email).send(m);
          this.note(this.ledger.sent(), server);
          this.dropLogged = false;
          this.opts.emit({ type: 'alert.mail', outcome: 'sent', subject: m.subject });
        } catch (e) {
          this.note(this.ledger.failed(), server, message(e));
          this.opts.emit({ type: 'alert.mail', outcome: 'failed', subject: m.subject, error: message(e) });
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private note(n: BurstNote, server: string, error?: string): void {
    if (n?.kind === 'burst-start') this.opts.logger.error({ smtpServer: server, error }, `mail alerts failing: SMTP server ${server}: ${error ?? ''} (further failures are counted, not logged, until one is sent)`);
    else if (n?.kind === 'burst-end') this.opts.logger.info({ smtpServer: server, failures: n.failures }, `mail alerts sent again through ${server} after ${n.failures} failed`);
  }

  /** keepalived sends nothing on stop; what still waits is dropped and counted. */
  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    this.ledger.dropped(this.queue?.clear() ?? 0);
    this.mailer?.mailer.close();
    this.mailer = null;
  }
}
