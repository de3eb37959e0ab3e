// use_vmac [NAME] and vmac_xmit_base → vmac: { name, xmitBase } (docs/vrrp.md, "Virtual MAC").
import type { InstanceOut } from './lvsd-shape.js';
import type { BlockReader, Context } from './reader.js';

export function mapVmac(ctx: Context, r: BlockReader, inst: InstanceOut): void {
  const useD = r.last('use_vmac');
  const baseD = r.last('vmac_xmit_base');
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
  if (baseD) {
    inst.vmac.xmitBase = true;
    ctx.source.at(inst.vmac, 'xmitBase', baseD.pos);
  }
}
