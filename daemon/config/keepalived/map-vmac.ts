// use_vmac [NAME] and vmac_xmit_base → vmac: { name, xmitBase }; use_ipvlan [NAME] [ADDRESS]
// [bridge|private|vepa] → ipvlan: { name, address, type } (docs/vrrp.md, "Virtual MAC").
import { isIP } from 'node:net';
import type { InstanceOut } from './lvsd-shape.js';
import type { BlockReader, Context } from './reader.js';
import type { Directive } from './parser.js';

export function mapVmac(ctx: Context, r: BlockReader, inst: InstanceOut, prefix?: { value: string; d: Directive }): void {
  const useD = r.last('use_vmac');
  const baseD = r.last('vmac_xmit_base');
  const ipvlanD = r.last('use_ipvlan');
  if (ipvlanD !== undefined) {
    if (useD !== undefined) ctx.reportDirective(ipvlanD, 'use_vmac and use_ipvlan in one instance: lvsd takes use_vmac');
    else mapIpvlan(ctx, ipvlanD, inst);
    if (baseD && useD === undefined) ctx.reportDirective(baseD, 'vmac_xmit_base is only valid with a vmac (keepalived 2.2.7 says so and ignores it); not carried over');
    if (useD === undefined) return;
  }
  if (useD === undefined) {
    // keepalived ignores vmac_xmit_base without use_vmac; say so rather than drop it silently.
    if (baseD) ctx.reportDirective(baseD, 'vmac_xmit_base without use_vmac has no effect (keepalived ignores it too); not carried over');
    return;
  }
  const name = useD.args[0];
  // IFNAMSIZ: keepalived refuses a longer name and falls back to vrrp.<VRID>; lvsd's schema allows 1..15 characters.
  if (name !== undefined && (name.length > 15 || /[\s/:]/.test(name))) {
    ctx.reportDirective(useD, `${name} is not a valid interface name (1..15 characters, no '/' or ':'); the default vrrp.${inst.virtualRouterId} is used`);
    inst.vmac = {};
  } else inst.vmac = name === undefined ? {} : { name };
  ctx.source.at(inst, 'vmac', useD.pos);
  if (inst.vmac.name === undefined && prefix !== undefined) {
    // keepalived names it PREFIX.VRID, cutting the prefix short so the whole fits IFNAMSIZ (15 characters).
    const vrid = String(inst.virtualRouterId);
    inst.vmac.name = `${prefix.value.slice(0, 15 - vrid.length - 1)}.${vrid}`;
    ctx.source.at(inst.vmac, 'name', prefix.d.pos);
  }
  if (baseD) {
    inst.vmac.xmitBase = true;
    ctx.source.at(inst.vmac, 'xmitBase', baseD.pos);
  }
}

/** keepalived 2.2.7's parser: each word is a type (the first one counts), else an address, else the name. */
function mapIpvlan(ctx: Context, d: Directive, inst: InstanceOut): void {
  const out: NonNullable<InstanceOut['ipvlan']> = {};
  for (const w of d.args) {
    if (w === 'bridge' || w === 'private' || w === 'vepa') {
      if (out.type === undefined) out.type = w;
      else ctx.reportDirective(d, `ipvlan type already specified - ${w} ignored (as keepalived)`);
    } else if (isIP(w.split('/')[0] ?? '') !== 0) {
      if (out.address === undefined) out.address = w;
    } else if (out.name === undefined && w.length <= 15 && !/[\s/:]/.test(w)) out.name = w;
    else ctx.reportDirective(d, `${w}: not an ipvlan type, an address or a valid interface name; ignored`);
  }
  const v6 = (inst.virtualIpaddresses ?? []).some((v) => (typeof v === 'string' ? v : v.address).includes(':'));
  if (out.address === undefined && !v6) {
    ctx.reportDirective(d, 'an IPv4 instance on an ipvlan needs an address (use_ipvlan NAME ADDRESS): keepalived 2.2.7 keeps it in FAULT ("IPv4 ipvlan requires a source ip address"); not carried over');
    return;
  }
  if (out.type === 'bridge') delete out.type;
  inst.ipvlan = out;
  ctx.source.at(inst, 'ipvlan', d.pos);
}
