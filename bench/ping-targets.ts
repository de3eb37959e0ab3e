// The ping benchmark's real servers: N addresses on the target namespace's interface, answered by its
// kernel, speaking health-targets.c's line protocol so bench/health-scale.ts drives both the same way.
// A "kill" adds the address to an nftables set whose echo requests are dropped; the echo requests
// that arrive are counted by an nft counter (the kernel answers them: no target process CPU).
//   node ping-targets.js INTERFACE_ADDRESS BASE N     (run inside the target namespace)
// stdin:  "kill PORT" (PORT - BASE is the address's index), "revive", "stats", "quit"
// stdout: {"ready":N} {"killed":PORT,"t":ms} {"revived":true} {"connections":echoes,"cpuUs":0}
import { execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { pingTargetAddress } from './targets-binary.js';

const [ifaceAddress, baseArg, countArg] = process.argv.slice(2);
const base = Number(baseArg);
const count = Number(countArg);
const nft = (script: string): string => execFileSync('nft', ['-f', '-'], { input: script, encoding: 'utf8' });

const link = (JSON.parse(execFileSync('ip', ['-j', 'addr', 'show'], { encoding: 'utf8' })) as { ifname: string; addr_info: { local: string }[] }[])
  .find((l) => l.addr_info.some((a) => a.local === ifaceAddress))?.ifname;
if (link === undefined) throw new Error(`ping-targets: no interface holds ${ifaceAddress ?? '(none)'}`);
const batch: string[] = [];
for (let i = 0; i < count; i++) batch.push(`address add ${pingTargetAddress(i)}/32 dev ${link}`);
execFileSync('ip', ['-batch', '-'], { input: batch.join('\n') + '\n' });
nft(`table inet lvt_ping_bench {
  set dead { type ipv4_addr; }
  counter echoes { }
  chain input {
    type filter hook input priority 0; policy accept;
    icmp type echo-request counter name "echoes"
    icmp type echo-request ip daddr @dead drop
  }
}
`);
const out = (o: object): void => {
  process.stdout.write(JSON.stringify(o) + '\n');
};

createInterface({ input: process.stdin }).on('line', (line) => {
  const [cmd, arg] = line.trim().split(/\s+/);
  if (cmd === 'kill') {
    const port = Number(arg);
    nft(`add element inet lvt_ping_bench dead { ${pingTargetAddress(port - base)} }\n`);
    out({ killed: port, t: Date.now() });
  } else if (cmd === 'revive') {
    nft('flush set inet lvt_ping_bench dead\n');
    out({ revived: true });
  } else if (cmd === 'stats') {
    const j = JSON.parse(execFileSync('nft', ['-j', 'list', 'counter', 'inet', 'lvt_ping_bench', 'echoes'], { encoding: 'utf8' })) as { nftables: { counter?: { packets: number } }[] };
    out({ connections: j.nftables.find((x) => x.counter !== undefined)?.counter?.packets ?? 0, cpuUs: 0 });
  } else if (cmd === 'quit') {
    process.exit(0);
  }
});
out({ ready: count });
