// `lvsd bgp withdraw PREFIX` / `lvsd bgp restore PREFIX`: take one announced prefix off this director (its
// BGP route goes, the other directors keep it, so ECMP moves its flows to them) or let it follow quorum
// again. Over the admin socket (POST /api/v1/bgp/withdraw), audited like the panel's action.
import type { BgpForceHow } from '../director/snapshot.js';
import { LocalApiError, localRequest } from '../api/local-client.js';
import { EXIT, UsageError, parse, type Command } from './command.js';
import { findLocalDaemon } from './local.js';

function bgpCommand(how: BgpForceHow, summary: string): Command {
  return {
    name: `bgp ${how}`,
    summary,
    usage: `bgp ${how} PREFIX [--socket PATH | --config FILE]`,
    async run(argv, io) {
      const { values, positionals } = parse(argv, { socket: { type: 'string' }, config: { type: 'string', short: 'c' } }, true);
      const [prefix, ...extra] = positionals;
      if (prefix === undefined || extra.length > 0) throw new UsageError(`bgp ${how} needs one PREFIX, as written in bgp.announce (e.g. 192.0.2.10/32)`);
      const { socket } = await findLocalDaemon({ config: values.config, socket: values.socket }, io);
      try {
        const { body } = await localRequest<{ prefix: string; announced: boolean; withdrawnBy: string | null }>(socket, 'POST', '/api/v1/bgp/withdraw', { prefix, how });
        io.out(`${body.prefix}: ${body.announced ? 'announced' : 'withdrawn'}${body.withdrawnBy === null ? '' : ` (by ${body.withdrawnBy})`}`);
        return EXIT.ok;
      } catch (e) {
        if (e instanceof LocalApiError && e.status === 0) {
          io.err(e.message);
          return EXIT.notRunning;
        }
        if (e instanceof LocalApiError && (e.status === 404 || e.status === 409)) {
          io.err(e.message);
          return EXIT.failed;
        }
        throw e;
      }
    },
  };
}

export const bgpWithdrawCommand = bgpCommand('withdraw', 'withdraw one announced BGP prefix from this director (the others keep announcing it)');
export const bgpRestoreCommand = bgpCommand('restore', 'let a withdrawn BGP prefix follow quorum again on this director');
