// The SMTP check (keepalived SMTP_CHECK): read the banner, which must be 220; say HELO, which must
// be answered 250; say QUIT and read its answer (any code: the server has shown it speaks SMTP).
// A 554 banner ("no service") is down though the port accepts connections, which a TCP check
// would miss. One connection per check, nothing sent beyond those two commands.
//
// SmtpDialog is the check without the socket: the JavaScript probe below and the native engine
// (which keeps the bytes and hands JavaScript the transcript, native-probe.ts) both judge with it.
import { connect } from 'node:net';
import { hostname } from 'node:os';
import { fail, type CheckVerdict } from '../types.js';
import type { Endpoint, SmtpCheckOptions } from '../options.js';
import { verdictFromError } from './errors.js';
import { settleOnce, type Probe } from './probe.js';
import { MAX_REPLY_BYTES, readReply, SmtpProtocolError, type SmtpReply } from './smtp-reply.js';

type Step = 'banner' | 'helo' | 'quit';

/** The code each step's reply must have (undefined: any). */
const EXPECT: Record<Step, number | undefined> = { banner: 220, helo: 250, quit: undefined };

const QUIT_LINE = Buffer.from('QUIT\r\n', 'latin1');

/** The HELO line of these options; throws Error("helo: why"). */
export function smtpHeloLine(o: SmtpCheckOptions): Buffer {
  const helo = o.helo ?? hostname();
  if (!/^[\x21-\x7e]+$/.test(helo)) throw new Error(`helo: ${JSON.stringify(helo)} is not one word of printable ASCII`);
  return Buffer.from(`HELO ${helo}\r\n`, 'latin1');
}

/** What the native engine sends, in order: this HELO line, then QUIT. */
export function smtpRequest(heloLine: Buffer): Buffer {
  return Buffer.concat([heloLine, QUIT_LINE]);
}

/** One check's dialog: bytes in, the lines to send and, once it is settled, the verdict. */
export class SmtpDialog {
  private step: Step = 'banner';
  private received: Buffer = Buffer.alloc(0);
  private banner = '';
  verdict: CheckVerdict | undefined;

  constructor(private readonly heloLine: Buffer) {}

  /** Takes what arrived; returns what to send now (each reply judged in order, as a pipelining server sends them). */
  feed(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
    try {
      for (let r = readReply(this.received); r !== null && this.verdict === undefined; r = readReply(this.received)) {
        this.received = this.received.subarray(r.consumed);
        const send = this.judge(r);
        if (send !== undefined) out.push(send);
      }
    } catch (e) {
      if (!(e instanceof SmtpProtocolError)) throw e;
      this.verdict = fail('protocol', e.message);
    }
    if (this.verdict === undefined && this.received.length > MAX_REPLY_BYTES) this.verdict = fail('protocol', `reply longer than ${MAX_REPLY_BYTES} bytes`);
    return this.verdict === undefined ? out : [];
  }

  /** The peer closed: the verdict, if the dialog had none yet. */
  end(): CheckVerdict {
    this.verdict ??= fail('reset', this.step === 'banner' ? 'closed before the banner' : `closed after ${this.step === 'helo' ? 'the banner' : 'HELO'} without an answer`);
    return this.verdict;
  }

  private judge(r: SmtpReply): Buffer | undefined {
    const want = EXPECT[this.step];
    if (want !== undefined && r.code !== want) {
      this.verdict = fail('status', `${this.step === 'banner' ? 'banner' : 'HELO answered'} ${r.code} ${r.text}`.trim());
      return undefined;
    }
    if (this.step === 'banner') {
      this.banner = `${r.code} ${r.text}`.trim();
      this.step = 'helo';
      return this.heloLine;
    }
    if (this.step === 'helo') {
      this.step = 'quit';
      return QUIT_LINE;
    }
    this.verdict = { ok: true, reason: 'ok', detail: this.banner };
    return undefined;
  }
}

/** The verdict of a whole transcript (the native engine's bytes): `eof` when the peer closed after them. */
export function smtpTranscriptVerdict(heloLine: Buffer, bytes: Buffer, eof: boolean): CheckVerdict {
  const d = new SmtpDialog(heloLine);
  if (bytes.length > 0) d.feed(bytes);
  return d.verdict ?? (eof ? d.end() : fail('protocol', 'incomplete reply'));
}

export function smtpProbe(ep: Endpoint, o: SmtpCheckOptions, timeoutMs: number): Probe {
  const heloLine = smtpHeloLine(o);
  return (signal) =>
    new Promise<CheckVerdict>((resolve) => {
      const sock = connect({ host: ep.host, port: ep.port, localAddress: ep.localAddress, localPort: ep.localPort, noDelay: true });
      const done = settleOnce(signal, resolve, () => { sock.destroy(); }, () => fail('timeout', `no answer within ${timeoutMs} ms`));
      const dialog = new SmtpDialog(heloLine);
      sock.on('data', (chunk: Buffer) => {
        for (const line of dialog.feed(chunk)) sock.write(line);
        if (dialog.verdict !== undefined) done(dialog.verdict);
      });
      sock.once('end', () => {
        done(dialog.end());
      });
      sock.once('error', (e) => {
        done(verdictFromError(e));
      });
    });
}
