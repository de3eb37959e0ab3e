// SMTP replies (RFC 5321 4.2): "250 text" ends a reply, "250-text" continues it. Pure: the SMTP
// checker feeds it what arrived so far and learns whether a whole reply is there, and its code.
// keepalived's SMTP_CHECK reads only the first line of each reply; a multi-line banner ("220-…")
// is legal SMTP, so this waits for the reply's last line instead.

/** Longest reply the checker keeps (RFC 5321 allows 512 bytes a line; banners run a few lines). */
export const MAX_REPLY_BYTES = 4096;

export interface SmtpReply {
  code: number;
  /** The reply's text lines joined by " / ", without the codes. */
  text: string;
  /** Bytes after the reply's last line (a server that pipelines, or a second reply). */
  consumed: number;
}

/** A whole reply at the start of `buf`, or null when its last line has not arrived; throws on garbage. */
export function readReply(buf: Buffer): SmtpReply | null {
  const texts: string[] = [];
  let at = 0;
  let code = -1;
  for (;;) {
    const nl = buf.indexOf(0x0a, at);
    if (nl < 0) return null;
    const line = buf.toString('latin1', at, nl).replace(/\r$/, '');
    at = nl + 1;
    const m = /^([2-5][0-9]{2})([ -]|$)(.*)$/.exec(line);
    if (m === null) throw new SmtpProtocolError(`not an SMTP reply: ${JSON.stringify(line.slice(0, 80))}`);
    const c = Number(m[1]);
    if (code >= 0 && c !== code) throw new SmtpProtocolError(`reply lines with codes ${code} and ${c}`);
    code = c;
    texts.push(m[3] ?? '');
    if (m[2] !== '-') return { code, text: texts.join(' / ').trim(), consumed: at };
  }
}

export class SmtpProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SmtpProtocolError';
  }
}
