// keepalived's track_file as a real server's FILE_CHECK reads it (keepalived 2.2.7, track_file.c and
// check_file.c): pure, so every rule is a table row in a test.
//
// - The file's first 127 bytes are read as C's strtol(…, 0) reads them: leading space, a sign, then
//   decimal, 0x… hex or 0… octal, up to the first other character. No file, an empty file or no
//   digits at all = 0. A number outside [-2^31, 2^31] is ignored (the last value stays).
// - weight 0: a non-zero value is a failure and 0 is fine; `reverse` swaps the two.
// - otherwise value × weight (× -1 with reverse), bounded to a 32-bit int, is added to the real server's
//   weight; the bound -2^31 itself means down (keepalived's IPVS_WEIGHT_FAULT).

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;

/** What keepalived reads from the file: the number, or undefined when it ignores the content. */
export function trackFileValue(content: string | undefined): number | undefined {
  if (content === undefined) return 0;
  const m = /^[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)?/.exec(content.slice(0, 127));
  const digits = m?.[2];
  if (digits === undefined) return 0;
  const n = digits.length > 1 && digits[0] === '0'
    ? (/^0[xX]/.test(digits) ? Number.parseInt(digits.slice(2), 16) : Number.parseInt(digits, 8))
    : Number.parseInt(digits, 10);
  const v = m?.[1] === '-' ? -n : n;
  return v < INT_MIN || v > INT_MAX + 1 ? undefined : v;
}

export interface FileVerdict {
  up: boolean;
  /** Added to the real server's weight while up (0 with weight 0). */
  offset: number;
}

/** The checker's state and weight offset for a file value, a FILE_CHECK weight and reverse. */
export function fileVerdict(value: number, weight: number, reverse: boolean): FileVerdict {
  if (weight === 0) return { up: (value === 0) !== reverse, offset: 0 };
  const product = value * weight * (reverse ? -1 : 1);
  const status = Math.max(INT_MIN, Math.min(INT_MAX, product));
  return status === INT_MIN ? { up: false, offset: 0 } : { up: true, offset: status };
}
