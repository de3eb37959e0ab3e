// Per-interface settings under /proc/sys/net/ipv{4,6}/conf/<interface>/ (arp_ignore, rp_filter, …),
// read and written as files: the names keep their dots there (vrrp.51), unlike sysctl(8)'s vrrp/51.
import { readFileSync, writeFileSync } from 'node:fs';

const path = (ifname: string, key: string, v = 'ipv4'): string => {
  if (ifname === '' || ifname.includes('/') || ifname === '.' || ifname === '..') throw new Error(`not an interface name: ${JSON.stringify(ifname)}`);
  if (!/^[a-z0-9_]+$/.test(key)) throw new Error(`not an interface setting: ${key}`);
  return `/proc/sys/net/${v}/conf/${ifname}/${key}`;
};

export function readIpv4Conf(ifname: string, key: string): number {
  const v = Number(readFileSync(path(ifname, key), 'utf8').trim());
  if (!Number.isInteger(v)) throw new Error(`${path(ifname, key)}: not a number`);
  return v;
}

export function writeIpv4Conf(ifname: string, key: string, value: number): void {
  writeFileSync(path(ifname, key), `${value}\n`);
}

export function writeIpv6Conf(ifname: string, key: string, value: number): void {
  writeFileSync(path(ifname, key, 'ipv6'), `${value}\n`);
}
