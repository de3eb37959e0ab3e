// A scripted SMTP server on loopback for the SMTP checker's tests (JavaScript and native engine alike):
// `greet` written on connect, then `answer(line)` for each command line it hears (null: hang up).
import type { LoopbackServers } from './loopback-servers.js';

export function smtpServer(servers: LoopbackServers, greet: string | null, answer: (line: string) => string | null, heard: string[] = []): Promise<number> {
  return servers.listen((s) => {
    if (greet !== null) s.write(greet, 'latin1');
    let buf = '';
    s.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl).replace(/\r$/, '');
        buf = buf.slice(nl + 1);
        heard.push(line);
        const a = answer(line);
        if (a === null) s.destroy();
        else if (line === 'QUIT') s.end(a, 'latin1');
        else s.write(a, 'latin1');
      }
    });
  });
}

/** A server that says yes: 250 to HELO, 221 to QUIT, 500 to anything else. */
export const polite = (line: string): string => (line.startsWith('HELO ') ? '250 pleased to meet you\r\n' : line === 'QUIT' ? '221 bye\r\n' : '500 what\r\n');
