// A slow kernel (or a starved event loop: the QEMU guest under load) must not make the table lag its
// verdicts. The counters poll and the IPVS resync are periodic reads that share the dump sockets (and the
// backend's queue) with the applies; when one read outlasts its period, the next must not start beside it,
// or the reads pile up without bound and a real server's removal waits behind all of them — in the guest,
// minutes (issue 16). The real IPVS backend and the director's dataplane supervisor, over an in-memory kernel
// whose dumps take their turn on one socket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { Config } from '../../daemon/config/types.js';
import { IpvsClient } from '../../daemon/ipvs/client.js';
import { Cmd } from '../../daemon/ipvs/constants.js';
import { createIpvsDataplane } from '../../daemon/dataplane/ipvs/backend.js';
import { memoryOwnership } from '../../daemon/dataplane/ipvs/ownership.js';
import type { DesiredTable, ServiceSpec } from '../../daemon/dataplane/types.js';
import { DataplaneSupervisor } from '../../daemon/director/dataplane-supervisor.js';
import { FakeKernel } from '../support/fake-ipvs-kernel.js';
import type { IpvsRequest } from '../../daemon/ipvs/transport.js';
import type { NetlinkErrno } from '../../daemon/ipvs/transport.js';

/** Dumps wait their turn on one socket and take `dumpMs` each; what was served is logged in order. */
class SlowKernel extends FakeKernel {
  readonly served: string[] = [];
  private line: Promise<unknown> = Promise.resolve();
  constructor(private readonly dumpMs: number) {
    super();
  }
  override request(cmd: number, payload: Buffer, dump: boolean): Promise<Buffer[]> {
    if (!dump) return super.request(cmd, payload, dump);
    const job = this.line.then(async () => {
      await new Promise((r) => setTimeout(r, this.dumpMs));
      this.served.push(cmd === Cmd.GET_SERVICE ? 'services' : 'dests');
      return super.request(cmd, payload, dump);
    });
    this.line = job.catch(() => undefined);
    return job;
  }
  override async requestMany(reqs: readonly IpvsRequest[]): Promise<(Buffer[] | NetlinkErrno)[]> {
    const r = await super.requestMany(reqs);
    for (const q of reqs) if (q.cmd === Cmd.DEL_DEST) this.served.push('delete');
    return r;
  }
}

const svc = (n: number, servers: number): ServiceSpec => ({
  id: `tcp:10.0.0.${n}:80`, family: 4, protocol: 'tcp', address: `10.0.0.${n}`, port: 80, scheduler: 'rr',
  realServers: Array.from({ length: servers }, (_, i) => ({ id: `10.0.1.${i + 1}:80`, address: `10.0.1.${i + 1}`, port: 80, weight: 1, method: 'nat' as const })),
});

test('a dump slower than the counters poll and the resync: neither piles up, and a removal lands behind at most one of each', async () => {
  // 4 services: a full read is 5 dumps (25 ms), five times the poll's period and 2.5 times the resync's.
  const k = new SlowKernel(5);
  const dp = await createIpvsDataplane({
    client: new IpvsClient(k), ownership: memoryOwnership(), resyncIntervalMs: 10, drainRecheckMs: 1e9, drain: { mode: 'immediate', timeoutMs: 0 },
  });
  let inFlight = 0;
  let most = 0;
  const observe = dp.observe.bind(dp);
  dp.observe = async () => {
    most = Math.max(most, ++inFlight);
    try {
      return await observe();
    } finally {
      inFlight--;
    }
  };
  let resyncs = 0;
  let mostResyncs = 0;
  const resync = dp.resync.bind(dp);
  dp.resync = async () => {
    mostResyncs = Math.max(mostResyncs, ++resyncs);
    try {
      return await resync();
    } finally {
      resyncs--;
    }
  };
  let desired: DesiredTable = { services: [1, 2, 3, 4].map((n) => svc(n, 2)) };
  const sup = new DataplaneSupervisor(
    { dataplane: dp, kind: 'ipvs', reason: 'test', sync: null, retune: () => Promise.resolve() },
    { logger: pino({ level: 'silent' }), emit: () => undefined, desired: () => desired, statsIntervalMs: 5 },
  );
  await sup.start({ virtualServers: [] } as unknown as Config);
  try {
    // 60 poll periods, 30 resync periods: about 12 full reads fit in that time.
    await new Promise((r) => setTimeout(r, 300));
    // Before the fix both grew without bound here, and the apply below never came out of the queue.
    assert.equal(most, 1, 'counters polls overlapped');
    assert.equal(mostResyncs, 1, 'resyncs queued behind one another');
    const before = k.served.length;
    desired = { services: [svc(1, 1), ...desired.services.slice(1)] };
    await sup.request();
    const after = k.served.slice(before);
    const waited = after.indexOf('delete');
    assert.ok(waited >= 0, 'the removal never reached the kernel');
    // Ahead of it: the resync in flight in the backend's queue and the polls that run, one at a time, while that
    // reads (their dumps interleave on the socket): a few full reads, where before the fix there were hundreds.
    const reads = after.slice(0, waited).filter((x) => x === 'services').length;
    assert.ok(reads <= 4, `the removal waited behind ${reads} full reads (${waited} dumps)`);
    assert.deepEqual(k.weights('tcp:10.0.0.1:80'), { '10.0.1.1:80': 1 });
  } finally {
    await sup.close();
  }
});
