// Runs INSIDE the guest, in the client namespace: N long-lived TCP connections to each of the VIP's PORTS (one
// per forwarding method in the failover scenario), each sending a
// numbered line every INTERVAL ms and waiting for its echo; and, beside them, one new short connection every
// NEW ms, to the ports in turn (connect, one line, its echo, close). On SIGTERM it prints one JSON line: per connection whether it is
// still alive (no error, no close, its last line answered), the longest gap between answers, and every new
// connection with its start time and outcome; when each lost connection died, and every gap of more than
// two intervals with the time it ended, so a caller running several failovers can tell them apart; and the
// times the client itself was starved of CPU for over a second (its own gaps and timeouts, not the directors'). Wall-clock times (Date.now()) so the caller can line them up with
// a director's log. Each long-lived connection that dies is also announced at once on its own line,
// `dead ID LOCAL_PORT PORT`, so a caller can reconnect from that source port (the kube-proxy #81775 case), and
// once a second `status ALIVE ANSWERS NEW_OK NEW_FAILED` (connections alive, answers and new connections in that
// second) for a live display (lab/guest-demo.ts).
//   node conn-client.js HOST PORT[,PORT…] N INTERVAL_MS NEW_MS
import { connect, type Socket } from 'node:net';

const [host = '10.1.0.100', portText = '7000', nText = '30', intervalText = '300', newText = '250'] = process.argv.slice(2);
const ports = portText.split(',').map(Number);
const N = Number(nText);
const INTERVAL = Number(intervalText);
const NEW = Number(newText);
/** A new connection that gets no echo in this long counts as failed (the client gives up, as a user would). */
const NEW_TIMEOUT_MS = 3000;

interface Long {
  id: number;
  port: number;
  sock: Socket;
  opened: boolean;
  localPort: number | undefined;
  dead: string | null;
  deadAt: number | null;
  sent: number;
  answered: number;
  lastAnswer: number;
  maxGapMs: number;
  servers: Set<string>;
}
/** A new short connection; `server` is the real server that answered (the echo's first word); `connectMs`
 * when its handshake completed (absent: it never did) and `localPort` its source port, so a failure says
 * whether the SYN or a later packet went astray, and where to look for it in a capture or a table. */
interface Fresh { at: number; port: number; ok: boolean; ms: number; error?: string; server?: string; connectMs?: number; localPort?: number }
/** A gap between two answers on one connection longer than two intervals; `at` is when it ended. */
interface Gap { at: number; ms: number }

const longs: Long[] = [];
const fresh: Fresh[] = [];
const gaps: Gap[] = [];
/** Times this process itself did not run for over a second (a timer 100 ms apart fired late): in a loaded
 * guest the client can be starved, and its gaps and timeouts then say nothing about the directors. */
const stalls: Gap[] = [];
let lastBeat = Date.now();
const beat = setInterval(() => {
  const now = Date.now();
  if (now - lastBeat > 1100 && stalls.length < 10_000) stalls.push({ at: now, ms: now - lastBeat - 100 });
  lastBeat = now;
}, 100);
let stopping = false;

function openLong(id: number, port: number): Long {
  const sock = connect({ host, port });
  sock.setNoDelay(true);
  const c: Long = { id, port, sock, opened: false, localPort: undefined, dead: null, deadAt: null, sent: 0, answered: 0, lastAnswer: Date.now(), maxGapMs: 0, servers: new Set() };
  let buf = '';
  sock.on('connect', () => {
    c.opened = true;
    c.localPort = sock.localPort;
    c.lastAnswer = Date.now();
  });
  sock.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const [server] = buf.slice(0, nl).split(' ');
      buf = buf.slice(nl + 1);
      const now = Date.now();
      c.maxGapMs = Math.max(c.maxGapMs, now - c.lastAnswer);
      if (now - c.lastAnswer > 2 * INTERVAL && gaps.length < 10_000) gaps.push({ at: now, ms: now - c.lastAnswer });
      c.lastAnswer = now;
      c.answered++;
      if (server !== undefined) c.servers.add(server);
    }
  });
  const die = (why: string): void => {
    if (c.dead !== null) return;
    c.dead = why;
    c.deadAt = Date.now();
    if (!stopping) process.stdout.write(`dead ${c.id} ${String(c.localPort)} ${c.port}\n`);
  };
  sock.on('error', (e: NodeJS.ErrnoException) => { die(e.code ?? e.message); });
  sock.on('close', () => {
    if (!stopping) die('closed');
  });
  return c;
}

function tick(): void {
  for (const c of longs) {
    if (c.opened && c.dead === null) {
      c.sock.write(`${c.id} ${c.sent}\n`);
      c.sent++;
    }
  }
}

let nextPort = 0;
function newConnection(): void {
  const at = Date.now();
  const port = ports[nextPort++ % ports.length] ?? 0;
  const sock = connect({ host, port });
  let done = false;
  let connectMs: number | undefined;
  let localPort: number | undefined;
  const finish = (ok: boolean, error?: string, server?: string): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    fresh.push({ at, port, ok, ms: Date.now() - at, ...(error === undefined ? {} : { error }), ...(server === undefined ? {} : { server }), ...(connectMs === undefined ? {} : { connectMs }), ...(localPort === undefined ? {} : { localPort }) });
    sock.destroy();
  };
  // Judged after this loop turn's I/O (setImmediate runs after the poll phase): a client starved of CPU wakes
  // with the timer due and the echo already in the socket buffer, and must not call that a timeout.
  const timer = setTimeout(() => { setImmediate(() => { finish(false, 'timeout'); }); }, NEW_TIMEOUT_MS);
  sock.on('connect', () => {
    connectMs = Date.now() - at;
    localPort = sock.localPort;
    sock.write('new 0\n');
  });
  sock.on('data', (d: Buffer) => { finish(true, undefined, d.toString().split(' ')[0]); });
  sock.on('error', (e: NodeJS.ErrnoException) => { finish(false, e.code ?? e.message); });
}

for (const port of ports) for (let i = 0; i < N; i++) longs.push(openLong(longs.length, port));
const t1 = setInterval(tick, INTERVAL);
const t2 = setInterval(newConnection, NEW);
let counted = { answers: 0, fresh: 0 };
const t3 = setInterval(() => {
  const answers = longs.reduce((n, c) => n + c.answered, 0);
  const recent = fresh.slice(counted.fresh);
  const alive = longs.filter((c) => c.opened && c.dead === null).length;
  process.stdout.write(`status ${alive} ${answers - counted.answers} ${recent.filter((f) => f.ok).length} ${recent.filter((f) => !f.ok).length}\n`);
  counted = { answers, fresh: fresh.length };
}, 1000);
process.stdout.write('started\n');

process.on('SIGTERM', () => {
  stopping = true;
  clearInterval(t1);
  clearInterval(t2);
  clearInterval(t3);
  clearInterval(beat);
  // The last line sent deserves its answer: wait one round trip's worth before judging.
  setTimeout(() => {
    const now = Date.now();
    const conns = longs.map((c) => {
      // Alive: never failed, and answered within a few intervals of the end (not silently stuck).
      const stuck = now - c.lastAnswer > Math.max(5 * INTERVAL, 2000);
      return { id: c.id, port: c.port, localPort: c.localPort, alive: c.opened && c.dead === null && !stuck, dead: c.dead ?? (stuck ? 'no answer' : null), deadAt: c.deadAt ?? (stuck ? c.lastAnswer : null), sent: c.sent, answered: c.answered, maxGapMs: c.maxGapMs, servers: [...c.servers] };
    });
    for (const c of longs) c.sock.destroy();
    // Exit once the report is handed over: stdout is a pipe, and process.exit() right after a write of a few
    // hundred KB cut the report short (the reader got invalid JSON).
    process.stdout.write(`${JSON.stringify({ conns, fresh, gaps, stalls })}\n`, () => { process.exit(0); });
  }, Math.max(2 * INTERVAL, 500));
});
