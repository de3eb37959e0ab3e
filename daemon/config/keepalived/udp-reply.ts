// keepalived's UDP_CHECK reply test, as an lvsd expect: keepalived compares only the first
// min(reply length, require_reply length) bytes (check_udp_reply), so a reply that stops early or runs on
// past the given bytes still passes, and an X nibble matches anything. lvsd's hex expect is the whole reply,
// so the importer writes that comparison as a regular expression over the reply read as latin1.

const byte = (n: number): string => `\\x${n.toString(16).padStart(2, '0')}`;

/** One byte of a normalised require_reply (two hex digits, either of them may be x): a regex atom. */
function byteAtom(pair: string): string {
  const [hi, lo] = [pair[0] ?? 'x', pair[1] ?? 'x'];
  if (hi !== 'x' && lo !== 'x') return byte(parseInt(pair, 16));
  if (hi === 'x' && lo === 'x') return '[\\x00-\\xff]';
  if (lo === 'x') return `[${byte(parseInt(hi, 16) * 16)}-${byte(parseInt(hi, 16) * 16 + 15)}]`;
  let set = '';
  for (let h = 0; h < 16; h++) set += byte(h * 16 + parseInt(lo, 16));
  return `[${set}]`;
}

/**
 * A regex (source, without slashes) that matches a reply exactly when keepalived's byte comparison passes:
 * the reply may end after any prefix of the given bytes, and may go on after all of them.
 */
export function keepalivedReplyRegex(hex: string): string {
  let inner = '';
  for (let i = hex.length - 2; i >= 0; i -= 2) inner = `(?:$|${byteAtom(hex.slice(i, i + 2))}${inner})`;
  return `^${inner}`;
}

/** keepalived's bounds when a require_reply has bytes: min_reply_length 0, max_reply_length 255. */
export const KEEPALIVED_MAX_REPLY_LENGTH = 255;
