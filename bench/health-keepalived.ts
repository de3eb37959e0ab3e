// keepalived's checker on the same targets, for the side-by-side in the QEMU guest (it refuses to
// run without IPVS). Builds a keepalived.conf with 10 real servers per virtual server, runs
// `keepalived -n -l -D -C` (checker only) in the checker namespace, and reads its CPU and RSS from
// /proc and its detections from its log ("Removing service [addr]:tcp:PORT from VS …").
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ChildProcess } from 'node:child_process';
import type { Netns } from '../test/support/netns.js';
import { TARGET_BODY_MD5, pingTargetAddress, type BenchCheck } from './targets-binary.js';
import { namespaceUsage } from './ns-usage.js';

export interface KeepalivedRun {
  child: ChildProcess;
  /** Arrival times (ms since epoch) of the "Removing service" lines, by real server port. */
  removed: Map<number, number[]>;
  activated: number;
  log: string[];
}

export function keepalivedConf(o: { address: string; base: number; n: number; type: BenchCheck; delayLoopS: number; timeoutS: number; retry: number }): string {
  const lines = ['global_defs {', '  router_id lvsd_bench', '}'];
  for (let vs = 0; vs * 10 < o.n; vs++) {
    lines.push(`virtual_server 10.79.1.1 ${20000 + vs} {`, `  delay_loop ${o.delayLoopS}`, '  lb_algo rr', '  lb_kind NAT', '  protocol TCP');
    for (let i = vs * 10; i < Math.min(o.n, vs * 10 + 10); i++) {
      // ping targets are addresses of their own (bench/ping-targets.ts); the port only names the target
      lines.push(`  real_server ${o.type === 'ping' ? pingTargetAddress(i) : o.address} ${o.base + i} {`, '    weight 1');
      if (o.type === 'tcp') lines.push(`    TCP_CHECK {`);
      else if (o.type === 'ping') lines.push('    PING_CHECK {');
      else if (o.type === 'smtp') lines.push('    SMTP_CHECK {', '      helo_name lvsd-bench');
      else lines.push('    HTTP_GET {', '      url {', '        path /', '        status_code 200', ...(o.type === 'digest' ? [`        digest ${TARGET_BODY_MD5}`] : []), '      }');
      lines.push(`      connect_timeout ${o.timeoutS}`, `      retry ${o.retry}`, '      delay_before_retry 1', '    }', '  }');
    }
    lines.push('}');
  }
  return lines.join('\n') + '\n';
}

export function startKeepalived(ns: Netns, dir: string, conf: string): KeepalivedRun {
  const file = join(dir, 'keepalived.conf');
  writeFileSync(file, conf);
  const child = ns.spawn('keepalived', [
    '-n', '-l', '-D', '-C', '-f', file, '-p', join(dir, 'k.pid'), '-c', join(dir, 'c.pid'), '-r', join(dir, 'v.pid'),
  ]);
  const run: KeepalivedRun = { child, removed: new Map(), activated: 0, log: [] };
  const onLine = (line: string): void => {
    if (run.log.length < 200) run.log.push(line);
    if (line.includes('ctivating healthchecker for service')) run.activated++;
    const m = /Removing service \[[^\]]+\]:(?:[a-z]+:)?(\d+) from VS/.exec(line);
    if (m?.[1] !== undefined) {
      const port = Number(m[1]);
      const list = run.removed.get(port) ?? [];
      list.push(Date.now());
      run.removed.set(port, list);
    }
  };
  if (child.stdout) createInterface({ input: child.stdout }).on('line', onLine);
  if (child.stderr) createInterface({ input: child.stderr }).on('line', onLine);
  return run;
}

/** CPU seconds (user+system) and the largest RSS (MiB) over the namespace's keepalived processes. */
export async function keepalivedUsage(ns: Netns): Promise<{ cpuS: number; rssMiB: number }> {
  const u = await namespaceUsage(ns, 'keepalived');
  return { cpuS: u.cpuS, rssMiB: u.maxRssMiB };
}
