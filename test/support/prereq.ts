// Integration tests need root and real programs. A missing prerequisite is a loud failure, never a skip:
// scripts/install-deps.sh installs every one of them, so a missing one means the set-up is broken.
import { execFileSync } from 'node:child_process';

export function requireRoot(): void {
  if (process.getuid?.() !== 0) throw new Error('prerequisite missing: this test must run as root (network namespaces, raw sockets)');
}

export function requireCommands(...commands: string[]): void {
  const missing = commands.filter((c) => {
    try {
      execFileSync('sh', ['-c', `command -v ${c}`], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0) {
    throw new Error(`prerequisite missing: ${missing.join(', ')} (scripts/install-deps.sh installs them)`);
  }
}
