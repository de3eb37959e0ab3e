// Replays fixed flows INSIDE a namespace (`ip netns exec NS node flow-probe.js HOST PORT FROM TO [PATH]`):
// one HTTP request per client port FROM…TO, each from that exact source port, so a test can send the same
// 5-tuples through two directors and compare which real server answered (nginx names itself in the body).
// PATH `echo` speaks to a line echo server instead (test/vm/guest/echo-server.ts): one line out, its answer in.
// Each connection ends with a reset once the answer is read: no TIME_WAIT at either end, so the same tuple
// can be sent again at once. Prints one JSON line: { "<port>": "<body>" | "error: …" }.
import { connect } from 'node:net';

const [host = '', portText = '80', fromText = '0', toText = '-1', path = '/'] = process.argv.slice(2);

function once(localPort: number): Promise<string> {
  return new Promise((resolve) => {
    let buf = '';
    const sock = connect({ host, port: Number(portText), localPort });
    const done = (answer: string): void => {
      clearTimeout(timer);
      sock.resetAndDestroy();
      resolve(answer);
    };
    const timer = setTimeout(() => { done('error: timeout'); }, 5_000);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(path === 'echo' ? 'probe\n' : `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`));
    sock.on('data', (d: string) => {
      buf += d;
      if (path === 'echo') {
        if (buf.includes('\n')) done(buf.trim());
        return;
      }
      const head = buf.indexOf('\r\n\r\n');
      const len = /content-length: *(\d+)/i.exec(buf);
      if (head >= 0 && len !== null && buf.length >= head + 4 + Number(len[1])) done(buf.slice(head + 4).trim());
    });
    sock.on('error', (e) => { done(`error: ${e.message}`); });
  });
}

const out: Record<string, string> = {};
for (let p = Number(fromText); p <= Number(toText); p++) out[String(p)] = await once(p);
process.stdout.write(`${JSON.stringify(out)}\n`);
