// `lvsd peer-token FILE`: makes the credential one director reads another with (cluster section,
// docs/cluster.md). The token goes into FILE (mode 0600: the tokenFile of this director's peer entry);
// what the peer's config needs is only its sha256, printed here for its acceptTokenSha256. With --hash,
// prints the sha256 of a token FILE that exists (to check or rebuild a peer's entry).
import { open, readFile } from 'node:fs/promises';
import { EXIT, parse, UsageError, type Command } from './command.js';
import { newPeerToken, peerTokenSha256 } from '../api/cluster/peer-token.js';

export const peerTokenCommand: Command = {
  name: 'peer-token',
  summary: 'write a new peer token to FILE and print the sha256 the peer accepts it by',
  usage: 'peer-token [--hash] FILE',
  async run(argv, io) {
    const { values, positionals } = parse(argv, { hash: { type: 'boolean' } }, true);
    const file = positionals[0];
    if (file === undefined || positionals.length > 1) throw new UsageError('give one FILE');
    try {
      if (values.hash === true) {
        const token = (await readFile(file, 'utf8')).trim();
        if (token === '') throw new Error(`${file} is empty`);
        io.out(`acceptTokenSha256: ${peerTokenSha256(token)}`);
        return EXIT.ok;
      }
      const token = newPeerToken();
      // 'wx': never overwrite a token some peer entry may already point at
      const fh = await open(file, 'wx', 0o600);
      try {
        await fh.writeFile(`${token}\n`);
      } finally {
        await fh.close();
      }
      io.out(`wrote a peer token to ${file} (mode 0600): this director's tokenFile for the peer`);
      io.out(`on the peer, under cluster.peers for this director:\n  acceptTokenSha256: ${peerTokenSha256(token)}`);
      return EXIT.ok;
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      io.err(`lvsd peer-token: ${err.code === 'EEXIST' ? `${file} exists; remove it first or use --hash to print its sha256` : err.message}`);
      return EXIT.failed;
    }
  },
};
