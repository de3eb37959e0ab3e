// The table the nftables benchmarks load (nft-change.ts, nft-apply-steps.ts): one definition for both.
import type { DesiredTable } from '../daemon/dataplane/types.js';

/**
 * `services` virtual servers of `servers` real servers each, wrr but for service 1 (sh: a hashed one);
 * `bump` changes the first weight of service `which` (0: wrr, whose slot space follows its weights; 1: sh).
 */
export function bigTable(services: number, servers: number, bump = -1, which = 0): DesiredTable {
  return {
    services: Array.from({ length: services }, (_, i) => ({
      id: `tcp:10.200.${i >> 8}.${i & 255}:80`, family: 4 as const, protocol: 'tcp' as const, address: `10.200.${i >> 8}.${i & 255}`, port: 80, scheduler: i === 1 ? 'sh' as const : 'wrr' as const,
      realServers: Array.from({ length: servers }, (_, j) => ({
        id: `10.201.${j >> 8}.${(j & 255) + 1}:80`, address: `10.201.${j >> 8}.${(j & 255) + 1}`, port: 80, weight: i === which && j === 0 ? 2 + bump : 1, method: 'nat' as const,
      })),
    })),
  };
}
