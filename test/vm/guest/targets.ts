// Real servers for the corpus differential, run inside one guest namespace: every listener binds its own
// address:port and answers what the corpus's checkers ask (HTTP "ok", TLS, an SMTP greeting, a DNS answer,
// a UDP reply, or silence), so keepalived's and lvsd's checkers see the same live servers; SIGUSR1 switches the
// targets that have a `failed` behaviour to it (a 554 banner, a 404 page, a closed port…), SIGUSR2 back.
//   node targets.js SPEC.json CERT KEY      (SPEC: Target[]; prints "ready" once every listener is bound)
import { readFileSync } from 'node:fs';
import { createServer as createHttp, type RequestListener } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { createServer as createTcp } from 'node:net';
import { createSocket } from 'node:dgram';

export type TargetKind = 'http' | 'https' | 'smtp' | 'dns' | 'udp';

/** How a target answers; `failed` overrides it while the targets are failed (SIGUSR1; SIGUSR2 recovers). */
export interface Behaviour {
  /** udp: the reply to every datagram (text); none: silent. */
  reply?: string;
  /** smtp: the greeting line (default `220 target ESMTP`). */
  banner?: string;
  /** http, https: paths that answer 404 (every other path answers 200 "ok"). */
  notFound?: string[];
  /** No listener at all: TCP connects are refused, UDP datagrams get an ICMP port unreachable. */
  closed?: boolean;
}

export interface Target extends Behaviour {
  kind: TargetKind;
  address: string;
  port: number;
  failed?: Behaviour;
}

let failed = false;
const now = (t: Target): Behaviour => (failed && t.failed !== undefined ? t.failed : t);

const page = (t: Target): RequestListener => (req, res) => {
  const missing = now(t).notFound?.includes((req.url ?? '').split('?')[0] ?? '') === true;
  res.writeHead(missing ? 404 : 200, { 'content-type': 'text/plain' });
  res.end(missing ? 'not found' : 'ok');
};

/** One answer of the asked type (A: 192.0.2.1; SOA: root names and zero counters; others: empty rdata). */
export function dnsAnswer(query: Buffer): Buffer {
  let end = 12;
  while (end < query.length && query[end] !== 0) end += (query[end] ?? 0) + 1;
  end += 5; // root label + qtype + qclass
  const question = query.subarray(12, end);
  const qtype = query.readUInt16BE(end - 4);
  const rdata = qtype === 1 ? Buffer.from([192, 0, 2, 1]) : qtype === 6 ? Buffer.concat([Buffer.from([0, 0]), Buffer.alloc(20)]) : Buffer.alloc(0);
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  header.writeUInt16BE(0x8400 | (query.readUInt16BE(2) & 0x0100), 2); // QR, AA, RD copied, NOERROR
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(1, 6);
  const rr = Buffer.alloc(12);
  rr.writeUInt16BE(0xc00c, 0); // name: pointer to the question
  rr.writeUInt16BE(qtype, 2);
  rr.writeUInt16BE(1, 4);
  rr.writeUInt32BE(60, 6);
  rr.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([header, question, rr, rdata]);
}

/** Binds one target's listener; resolves with the function that closes it. */
function listen(t: Target, cert: Buffer, key: Buffer): Promise<() => void> {
  return new Promise((resolve, reject) => {
    switch (t.kind) {
      case 'http':
      case 'https':
      case 'smtp': {
        const server =
          t.kind === 'http' ? createHttp(page(t)) : t.kind === 'https' ? createHttps({ cert, key }, page(t)) : createTcp((s) => {
            s.on('error', () => undefined);
            s.write(`${now(t).banner ?? '220 target ESMTP'}\r\n`);
            s.on('data', (d: Buffer) => {
              const cmd = d.toString().slice(0, 4).toUpperCase();
              s.write(cmd === 'QUIT' ? '221 bye\r\n' : '250 ok\r\n');
              if (cmd === 'QUIT') s.end();
            });
          });
        server.once('error', reject);
        server.listen(t.port, t.address, () => {
          resolve(() => {
            server.close();
            if ('closeAllConnections' in server) server.closeAllConnections();
          });
        });
        return;
      }
      case 'dns':
      case 'udp': {
        const s = createSocket(t.address.includes(':') ? 'udp6' : 'udp4');
        s.on('message', (msg, r) => {
          const reply = t.kind === 'dns' ? dnsAnswer(msg) : now(t).reply;
          if (reply !== undefined) s.send(reply, r.port, r.address);
        });
        s.once('error', reject);
        s.bind(t.port, t.address, () => {
          resolve(() => { s.close(); });
        });
        return;
      }
    }
  });
}

/** Opens or closes each target's listener as its current behaviour says (`closed`). */
async function reconcile(spec: Target[], open: Map<Target, () => void>, cert: Buffer, key: Buffer): Promise<void> {
  for (const t of spec) {
    const close = open.get(t);
    if (now(t).closed === true && close !== undefined) {
      close();
      open.delete(t);
    } else if (now(t).closed !== true && close === undefined) {
      open.set(t, await listen(t, cert, key));
    }
  }
}

const [specFile, certFile, keyFile] = process.argv.slice(2);
if (specFile !== undefined && certFile !== undefined && keyFile !== undefined) {
  const spec = JSON.parse(readFileSync(specFile, 'utf8')) as Target[];
  const cert = readFileSync(certFile);
  const key = readFileSync(keyFile);
  const open = new Map<Target, () => void>();
  await reconcile(spec, open, cert, key);
  process.stdout.write('ready\n');
  // The corpus differential fails and recovers the targets that have a `failed` behaviour.
  for (const [signal, to] of [['SIGUSR1', true], ['SIGUSR2', false]] as const) {
    process.on(signal, () => {
      failed = to;
      void reconcile(spec, open, cert, key).then(() => { process.stdout.write(`${to ? 'failed' : 'recovered'}\n`); });
    });
  }
}
