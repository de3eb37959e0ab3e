// BIRD's control-socket protocol, the pure part: framing the byte stream into replies and reading them.
// Every line starts with a four-digit code and '-' (more lines follow) or ' ' (the reply's last line); a line
// that starts with a space continues the previous code. Codes (BIRD's doc/reply_codes): 0xxx the command
// succeeded (the last line), 1xxx and 2xxx table rows and headers, 8xxx a runtime error, 9xxx a parse error.
// Measured against bird 2.0.12: `enable p` → "0011-p: enabled\n0000 \n"; `configure check` →
// "0002-Reading configuration from bird.conf\n0020 Configuration OK\n" or "…\n8002 FILE:LINE:COL message\n".

export interface BirdLine {
  code: number;
  text: string;
}

export interface BirdReply {
  /** The code of the last line: < 8000 success, 8xxx runtime error, 9xxx parse error. */
  code: number;
  lines: BirdLine[];
}

export const isError = (r: BirdReply): boolean => r.code >= 8000;

/** The text BIRD gave for a reply, one line each (what an error message shows). */
export function replyText(r: BirdReply): string {
  return r.lines.map((l) => l.text).filter((t) => t.trim() !== '').join('; ');
}

/** Splits the socket's byte stream into lines and lines into replies; keeps a partial line for the next chunk. */
export class ReplyFramer {
  private rest = '';
  private lines: BirdLine[] = [];
  private lastCode = 0;

  /** Feeds a chunk; returns the replies it completed, in order. Throws on a line that is not BIRD's. */
  push(chunk: string): BirdReply[] {
    const text = this.rest + chunk;
    const parts = text.split('\n');
    this.rest = parts.pop() ?? '';
    const out: BirdReply[] = [];
    for (const line of parts) {
      const m = /^(\d{4})([ -])(.*)$/.exec(line);
      if (m !== null) {
        const code = Number(m[1]);
        this.lastCode = code;
        this.lines.push({ code, text: m[3] ?? '' });
        if (m[2] === ' ') {
          out.push({ code, lines: this.lines });
          this.lines = [];
        }
      } else if (line.startsWith(' ') && this.lines.length > 0) {
        this.lines.push({ code: this.lastCode, text: line.slice(1) });
      } else {
        throw new Error(`not a BIRD reply line: ${JSON.stringify(line.slice(0, 80))}`);
      }
    }
    return out;
  }
}

/** One row of `show protocols`. */
export interface BirdProtocol {
  name: string;
  proto: string;
  table: string;
  state: string;
  since: string;
  info: string;
}

/**
 * `show protocols` → rows, cut at the columns of BIRD's own header line (2002: "Name  Proto  Table  State
 * Since  Info"), since "Since" may hold a space (a date and a time) and "Info" is free text.
 */
export function parseProtocols(r: BirdReply): BirdProtocol[] {
  const header = r.lines.find((l) => l.code === 2002)?.text;
  if (header === undefined) return [];
  const cols = ['Name', 'Proto', 'Table', 'State', 'Since', 'Info'].map((c) => header.indexOf(c));
  if (cols.some((c) => c < 0)) throw new Error(`unexpected show protocols header: ${header}`);
  const cut = (t: string, i: number): string => t.slice(cols[i], i + 1 < cols.length ? cols[i + 1] : undefined).trim();
  return r.lines
    .filter((l) => l.code === 1002 && l.text.trim() !== '')
    .map((l) => ({ name: cut(l.text, 0), proto: cut(l.text, 1), table: cut(l.text, 2), state: cut(l.text, 3), since: cut(l.text, 4), info: cut(l.text, 5) }));
}
