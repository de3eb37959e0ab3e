// Real servers for integration tests: Debian's nginx, one instance per namespace, each with its own
// config and runtime directory under a temp folder, answering with a body that says who it is.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Netns } from './netns.js';

export interface NginxOptions {
  /** Text served at every path (default: the namespace's name). */
  body?: string;
  /** Ports to listen on (default [80]). Each listens on all addresses, IPv4 and IPv6. */
  ports?: number[];
  /** Extra `location` / directives inserted in the server block. */
  extraServerConfig?: string;
  /** TLS listener: port and PEM files. */
  tls?: { port: number; cert: string; key: string };
  workerProcesses?: number;
}

export interface NginxHandle {
  readonly dir: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

function serverBlock(listen: string, body: string, extra: string): string {
  return `
    server {
      ${listen}
      location / { default_type text/plain; return 200 "${body}\\n"; }
      location = /health { default_type text/plain; return 200 "ok\\n"; }
      ${extra}
    }`;
}

/** Starts nginx in the foreground inside `ns`; resolves once it accepts connections. */
export async function startNginx(ns: Netns, opts: NginxOptions = {}): Promise<NginxHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-nginx-'));
  const body = (opts.body ?? ns.name).replace(/"/g, '');
  const ports = opts.ports ?? [80];
  const listens = ports.map((p) => `listen ${p}; listen [::]:${p};`).join(' ');
  const tls =
    opts.tls === undefined
      ? ''
      : serverBlock(
          `listen ${opts.tls.port} ssl; listen [::]:${opts.tls.port} ssl; ssl_certificate ${opts.tls.cert}; ssl_certificate_key ${opts.tls.key};`,
          body,
          opts.extraServerConfig ?? '',
        );
  const conf = `
daemon off;
master_process on;
worker_processes ${opts.workerProcesses ?? 1};
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_requests 100000;
  ${serverBlock(listens, body, opts.extraServerConfig ?? '')}
  ${tls}
}
`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child = ns.spawn('nginx', ['-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')]);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code) => {
      reject(new Error(`nginx in ${ns.name} exited (${String(code)}): ${stderr}`));
    });
  });
  const ready = waitForPort(ns, ports[0] ?? opts.tls?.port ?? 80);
  await Promise.race([ready, exited]);
  exited.catch(() => undefined);
  return {
    dir,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) {
          rmSync(dir, { recursive: true, force: true });
          resolve();
          return;
        }
        child.once('exit', () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** Polls until something listens on `port` inside the namespace (up to 10 s). */
export async function waitForPort(ns: Netns, port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { stdout } = await ns.exec('ss', ['-Hltn', `sport = :${port}`]);
    if (stdout.trim() !== '') return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port} in ${ns.name} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
