// Runs one nft script as one transaction (`nft -f -`, the script on stdin): all of it applies or none.
// For the VRRP engine's small tables (vrrp/vmac-igmp.ts), written a handful of times per run; the
// nftables dataplane has its own long-lived writers (dataplane/nftables/).
import { spawn } from 'node:child_process';

const TIMEOUT_MS = 5000;

export function runNftScript(script: string, nft = 'nft'): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(nft, ['-f', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, TIMEOUT_MS);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`nft -f - failed (${String(code ?? signal)}): ${stderr.trim().split('\n').filter(Boolean).join('; ')}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(script);
  });
}
