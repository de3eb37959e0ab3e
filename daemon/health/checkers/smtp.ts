// The SMTP check (keepalived SMTP_CHECK): read the banner, which must be 220; say HELO, which must
// be answered 250; say QUIT and read its answer (any code: the server has shown it speaks SMTP).
// A 554 banner ("no service") is down though the port accepts connections, which a TCP check
// would miss. One connection per check, nothing sent beyond those two commands.
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

export function smtpProbe(ep: Endpoint, o: SmtpCheckOptions, timeoutMs: number): Probe {
  const helo = o.helo ?? hostname();
  if (!/^[\x21-\x7e]+$/.test(helo)) throw new Error(`helo: ${JSON.stringify(helo)} is not one word of printable ASCII`);
  const heloLine = Buffer.from(`HELO ${helo}\r\n`, 'latin1');
  const quitLine = Buffer.from('QUIT\r\n', 'latin1');
  return (signal) =>
    new Promise<CheckVerdict>((resolve) => {
      const sock = connect({ host: ep.host, port: ep.port, localAddress: ep.localAddress, localPort: ep.localPort, noDelay: true });
      let over = false;
      const done = settleOnce(signal, resolve, () => { over = true; sock.destroy(); }, () => fail('timeout', `no answer within ${timeoutMs} ms`));
      let step: Step = 'banner';
      let received: Buffer = Buffer.alloc(0);
      let banner = '';
      const judge = (r: SmtpReply): void => {
        const want = EXPECT[step];
        if (want !== undefined && r.code !== want) {
          done(fail('status', `${step === 'banner' ? 'banner' : 'HELO answered'} ${r.code} ${r.text}`.trim()));
          return;
        }
        if (step === 'banner') {
          banner = `${r.code} ${r.text}`.trim();
          step = 'helo';
          sock.write(heloLine);
        } else if (step === 'helo') {
          step = 'quit';
          sock.write(quitLine);
        } else {
          done({ ok: true, reason: 'ok', detail: banner });
        }
      };
      sock.on('data', (chunk: Buffer) => {
        received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
        try {
          for (let r = readReply(received); r !== null && !over; r = readReply(received)) {
            received = received.subarray(r.consumed);
            judge(r);
          }
        } catch (e) {
          if (e instanceof SmtpProtocolError) done(fail('protocol', e.message));
          else throw e;
          return;
        }
        if (received.length > MAX_REPLY_BYTES) done(fail('protocol', `reply longer than ${MAX_REPLY_BYTES} bytes`));
      });
      sock.once('end', () => {
        done(fail('reset', step === 'banner' ? 'closed before the banner' : `closed after ${step === 'helo' ? 'the banner' : 'HELO'} without an answer`));
      });
      sock.once('error', (e) => {
        done(verdictFromError(e));
      });
    });
}
