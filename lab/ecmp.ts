// `LVSD_LAB=ecmp npm start`: the active-active lab (test/support/ecmp-lab.ts) on this host: a BIRD router with
// ECMP and L4 hashing, three directors each running lvsd (nftables, mh) and BIRD, three nginx real servers and
// a client. Prints the router's route, the panels and the hints (lab/ecmp-banner.ts), and keeps running until
// Ctrl-C, then tears every namespace and process down.
import { createWriteStream, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createEcmpLab, ECMP_VIP, type EcmpDirector, type EcmpLab } from '../test/support/ecmp-lab.js';
import { requireCommands } from '../test/support/prereq.js';
import { addUser, openStore } from '../daemon/state/store.js';
import { ecmpBanner, ecmpPidFile } from './ecmp-banner.js';
import { relayPanel, type PanelRelay } from './panel-relay.js';

const CLI = join(resolve(import.meta.dirname, '..', '..'), 'dist', 'daemon', 'cli', 'main.js');

/** Panel ports on the host: LVSD_LAB_PORT1..3 (default 9181–9183). */
function panelPorts(): number[] {
  return [1, 2, 3].map((i) => Number(process.env[`LVSD_LAB_PORT${String(i)}`] ?? 9180 + i));
}

/** lvsd's log to DIR/dN-lvsd.log and its pid to DIR/dN-lvsd.pid (removed when it exits), for the hints. */
function record(lab: EcmpLab, d: EcmpDirector): void {
  const child = d.lvsd?.child;
  if (child?.pid === undefined) return;
  const log = createWriteStream(join(lab.dir, `${d.name}-lvsd.log`), { flags: 'a' });
  child.stdout?.on('data', (b: Buffer) => log.write(b));
  child.stderr?.on('data', (b: Buffer) => log.write(b));
  const pid = ecmpPidFile(lab.dir, d.name);
  writeFileSync(pid, `${String(child.pid)}\n`);
  child.once('exit', () => { rmSync(pid, { force: true }); log.end(); });
}

/** Brings the lab up and resolves only when it has been torn down (the process exits then). */
export async function runEcmpLab(): Promise<void> {
  requireCommands('ip', 'nft', 'bird', 'birdc', 'nginx');
  const ports = panelPorts();
  const password = randomBytes(9).toString('base64url');
  process.stdout.write('lvsd ECMP lab: building namespaces (router, client, d1–d3 with lvsd + BIRD, rs1–rs3)…\n');
  const lab = await createEcmpLab('ecmp-lab');
  const relays: PanelRelay[] = [];
  const down = async (): Promise<void> => {
    for (const r of relays) {
      r.server.close();
      r.child.kill('SIGTERM');
    }
    await lab.destroy();
  };
  try {
    for (const d of lab.directors) {
      const { store } = await openStore(join(lab.dir, `${d.name}-state.json`));
      await addUser(store, 'admin', password, 'admin');
    }
    await Promise.all(lab.directors.map(async (d) => {
      await lab.startDirector(d);
      record(lab, d);
    }));
    await lab.waitNexthops(lab.directors.map((d) => d.core), 60_000);
    for (const [i, d] of lab.directors.entries()) relays.push(await relayPanel(d.ns, join(lab.dir, `${d.name}-api-relay.sock`), ports[i] ?? 0));
  } catch (e) {
    await down();
    throw e;
  }
  const route = (await lab.router.exec('ip', ['route', 'show', ECMP_VIP])).stdout;
  process.stdout.write(ecmpBanner({
    vip: ECMP_VIP, dir: lab.dir, cli: CLI, routerNs: lab.router.name, clientNs: lab.client.name, route, password,
    directors: lab.directors.map((d, i) => ({ name: d.name, ns: d.ns.name, core: d.core, panelPort: ports[i] ?? 0 })),
  }));
  return new Promise<void>(() => {
    let stopping = false;
    const stop = (): void => {
      if (stopping) return;
      stopping = true;
      process.stdout.write('\nlvsd ECMP lab: tearing down…\n');
      void down().then(() => process.exit(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
