// Runs INSIDE the guest, in the client namespace: short connections through the VIP, each optionally from a
// given source port (to land on a director's existing connection entry: the kube-proxy #81775 case), each
// sending one line; prints one JSON line with who answered or why not. For the real-server crash step of
// failover-scenario.ts.
//   node reuse-probe.js HOST '[{"port":7000,"localPort":40123},{"port":7001}]'
import { connect } from 'node:net';

export interface Probe { port: number; localPort?: number }
export interface ProbeResult extends Probe { ok: boolean; server?: string; error?: string }

const [host = '10.1.0.100', json = '[]'] = process.argv.slice(2);
const TIMEOUT_MS = 3000;

function probe(p: Probe): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const sock = connect({ host, port: p.port, ...(p.localPort === undefined ? {} : { localPort: p.localPort }) });
    const done = (r: Omit<ProbeResult, keyof Probe>): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ ...p, ...r });
    };
    const timer = setTimeout(() => { done({ ok: false, error: 'timeout' }); }, TIMEOUT_MS);
    sock.on('connect', () => sock.write('probe 0\n'));
    sock.once('data', (d: Buffer) => { done({ ok: true, server: d.toString().split(' ')[0] ?? '' }); });
    sock.on('error', (e: NodeJS.ErrnoException) => { done({ ok: false, error: e.code ?? e.message }); });
  });
}

// One after another: two probes from the same source port must not race.
const results: ProbeResult[] = [];
for (const p of JSON.parse(json) as Probe[]) results.push(await probe(p));
process.stdout.write(`${JSON.stringify(results)}\n`);
