// `lvsd doctor [--config FILE] [--json]`: what an LVS director needs, checked on this machine against the config
// (modules, forwarding and conntrack per method, rp_filter, the VIPs' and the sync daemon's interfaces,
// capabilities), then the exact setup each DR and TUN real server needs, ready to paste. Exit 0 when nothing
// failed, 1 otherwise. The rules live in doctor-checks.ts (pure); this file only reads the machine.
import { execFileSync } from 'node:child_process';
import { release } from 'node:os';
import { loadConfig } from '../config/load.js';
import { formatError } from '../config/errors.js';
import { probeCapabilities, realFs } from './capabilities.js';
import { EXIT, UsageError, parse, type Command } from './command.js';
import { doctorExit, doctorFindings, realServerSetup, renderFindings, type Facts, type InterfaceFacts } from './doctor-checks.js';
import { DEFAULT_CONFIG } from './local.js';

const IFF_UP = 0x1;
const IFF_MULTICAST = 0x1000;

function machineFacts(): Facts {
  const kernel = release();
  const dep = realFs.read(`/lib/modules/${kernel}/modules.dep`) ?? '';
  const builtin = realFs.read(`/lib/modules/${kernel}/modules.builtin`) ?? '';
  return {
    caps: probeCapabilities(),
    module: (name) => {
      if (realFs.exists(`/sys/module/${name}`) || builtin.includes(`/${name}.ko`)) return 'loaded';
      return new RegExp(`/${name}\\.ko(\\.[a-z]+)?:`).test(dep) ? 'loadable' : 'missing';
    },
    sysctl: (name) => realFs.read(`/proc/sys/${name.replace(/\./g, '/')}`)?.trim(),
    iface: (name): InterfaceFacts => {
      const flags = realFs.read(`/sys/class/net/${name}/flags`);
      if (flags === undefined) return { exists: false, up: false, multicast: false, ipv4: [] };
      const bits = Number.parseInt(flags.trim(), 16);
      let ipv4: string[] = [];
      try {
        const j = JSON.parse(execFileSync('ip', ['-j', '-4', 'addr', 'show', 'dev', name], { encoding: 'utf8' })) as { addr_info?: { local: string; prefixlen: number }[] }[];
        ipv4 = j.flatMap((l) => (l.addr_info ?? []).map((a) => `${a.local}/${a.prefixlen}`));
      } catch {
        /* no iproute2: the address check says none */
      }
      return { exists: true, up: (bits & IFF_UP) !== 0, multicast: (bits & IFF_MULTICAST) !== 0, ipv4 };
    },
  };
}

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'check this director for what LVS needs and print the real servers\' DR/TUN setup',
  usage: 'doctor [--config FILE] [--json]',
  async run(argv, io) {
    const { values, positionals } = parse(argv, { config: { type: 'string', short: 'c' }, json: { type: 'boolean' } }, true);
    if (positionals.length > 0) throw new UsageError('doctor takes no positional arguments (use --config FILE)');
    const file = values.config ?? DEFAULT_CONFIG;
    const r = await loadConfig(file);
    if (!r.ok) {
      for (const e of r.errors) io.err(formatError(e));
      io.err(`${file}: fix the config first (lvsd check-config ${file})`);
      return EXIT.failed;
    }
    const findings = doctorFindings(r.config, machineFacts());
    const setup = realServerSetup(r.config);
    if (values.json === true) io.out(JSON.stringify({ findings, realServerSetup: setup, ok: doctorExit(findings) === 0 }));
    else {
      io.out(`lvsd doctor: ${file}\n\n${renderFindings(findings)}\n\n# Real-server setup (lvsd does not touch the real servers)\n${setup}`);
      const failed = findings.filter((x) => x.status === 'fail').length;
      io.out(`\n${failed === 0 ? 'no problems found' : `${failed} problem${failed === 1 ? '' : 's'} found`}`);
    }
    return doctorExit(findings);
  },
};
