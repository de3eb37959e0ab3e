// An in-memory IPVS kernel behind the IpvsTransport seam, speaking the real codec: what the backend's unit
// tests program instead of the kernel (the real kernel is exercised by test/vm/).
import { decodeDest, decodeService, destText, encodeDest, serviceKeyText, servicePayload, type IpvsDest, type IpvsService } from '../../daemon/ipvs/codec.js';
import { Cmd, CmdAttr, SvcFlag } from '../../daemon/ipvs/constants.js';
import { Attrs, nest } from '../../daemon/net/nlattr.js';
import { NetlinkErrno, type IpvsRequest, type IpvsTransport } from '../../daemon/ipvs/transport.js';

const EEXIST = 17, ESRCH = 3, ENOENT = 2;

export class FakeKernel implements IpvsTransport {
  readonly table = new Map<string, { svc: IpvsService; dests: Map<string, IpvsDest> }>();
  changes = 0;

  private svcOf(payload: Buffer): IpvsService {
    const raw = Attrs.parse(payload, 'cmd').raw(CmdAttr.SERVICE);
    if (raw === undefined) throw new Error('no service');
    return decodeService(raw);
  }
  private destOf(payload: Buffer, family: 4 | 6): IpvsDest {
    const raw = Attrs.parse(payload, 'cmd').raw(CmdAttr.DEST);
    if (raw === undefined) throw new Error('no dest');
    return decodeDest(raw, family);
  }

  request(cmd: number, payload: Buffer, dump: boolean): Promise<Buffer[]> {
    return new Promise((resolve) => {
      resolve(this.handle(cmd, payload, dump)); // a throw inside becomes the rejection
    });
  }
  async requestMany(reqs: readonly IpvsRequest[]): Promise<(Buffer[] | NetlinkErrno)[]> {
    return Promise.all(reqs.map((r) => this.request(r.cmd, r.payload, false).catch((e: unknown) => e as NetlinkErrno)));
  }
  close(): void {
    /* nothing */
  }

  private handle(cmd: number, payload: Buffer, dump: boolean): Buffer[] {
    if (cmd === Cmd.GET_SERVICE && dump) return [...this.table.values()].map((e) => servicePayload({ ...e.svc, flags: e.svc.flags | SvcFlag.HASHED }));
    const svc = this.svcOf(payload);
    const key = serviceKeyText(svc.key);
    const entry = this.table.get(key);
    if (cmd === Cmd.GET_DEST && dump) {
      if (entry === undefined) throw new NetlinkErrno(ESRCH);
      return [...entry.dests.values()].map((d) => nest(CmdAttr.DEST, encodeDest(d)));
    }
    this.changes++;
    switch (cmd) {
      case Cmd.NEW_SERVICE:
        if (entry !== undefined) throw new NetlinkErrno(EEXIST);
        if (svc.scheduler === 'twos') throw new NetlinkErrno(ENOENT);
        this.table.set(key, { svc, dests: new Map() });
        return [];
      case Cmd.SET_SERVICE:
        if (entry === undefined) throw new NetlinkErrno(ESRCH);
        entry.svc = svc;
        return [];
      case Cmd.DEL_SERVICE:
        if (entry === undefined) throw new NetlinkErrno(ESRCH);
        this.table.delete(key);
        return [];
    }
    if (entry === undefined) throw new NetlinkErrno(ESRCH);
    const d = this.destOf(payload, svc.key.family);
    const dk = destText(d);
    const cur = entry.dests.get(dk);
    switch (cmd) {
      case Cmd.NEW_DEST:
        if (cur !== undefined) throw new NetlinkErrno(EEXIST);
        entry.dests.set(dk, { ...d, activeConns: 0, inactiveConns: 0, persistConns: 0 });
        return [];
      case Cmd.SET_DEST:
        if (cur === undefined) throw new NetlinkErrno(ENOENT);
        entry.dests.set(dk, { ...d, activeConns: cur.activeConns ?? 0, inactiveConns: cur.inactiveConns ?? 0, persistConns: 0 });
        return [];
      case Cmd.DEL_DEST:
        if (cur === undefined) throw new NetlinkErrno(ENOENT);
        entry.dests.delete(dk);
        return [];
    }
    throw new Error(`fake kernel: command ${cmd} not modelled`);
  }

  weights(key: string): Record<string, number> {
    return Object.fromEntries([...(this.table.get(key)?.dests.values() ?? [])].map((d) => [destText(d), d.weight]));
  }
}
