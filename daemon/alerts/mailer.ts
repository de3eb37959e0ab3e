// The edge of the alerts: one SMTP submission per message, through nodemailer (a well-kept client: RFC 5321
// dialogue, dot-stuffing, MIME headers and opportunistic STARTTLS are its business, not ours).
// keepalived's smtp_connect_timeout bounds the whole exchange, so here it bounds connect, greeting and every
// socket wait alike: a dead or black-holed server costs one timeout per message at most, never a hang.
import type { Transporter } from 'nodemailer';

export interface SmtpServer {
  host: string;
  port: number;
  connectTimeoutMs: number;
  /** The name in HELO/EHLO (keepalived smtp_helo_name). Default: nodemailer's, the machine's host name. */
  helo?: string;
}

export interface OutgoingMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

export function smtpMailer(server: SmtpServer): Mailer {
  // Loaded at the first message, not at start: every `lvsd` command imports the director, few ever mail.
  let transport: Promise<Transporter> | null = null;
  const open = async (): Promise<Transporter> => {
    const { createTransport } = await import('nodemailer');
    return createTransport({
      host: server.host,
      port: server.port,
      secure: false,
      connectionTimeout: server.connectTimeoutMs,
      greetingTimeout: server.connectTimeoutMs,
      socketTimeout: server.connectTimeoutMs,
      ...(server.helo === undefined ? {} : { name: server.helo }),
    });
  };
  return {
    async send(mail) {
      transport ??= open();
      // One message to every recipient, as keepalived sends it (one RCPT TO each, one To: header).
      await (await transport).sendMail({ from: mail.from, to: mail.to, subject: mail.subject, text: mail.text, headers: { 'X-Mailer': 'lvsd' } });
    },
    close() {
      void transport?.then((t) => { t.close(); });
      transport = null;
    },
  };
}
