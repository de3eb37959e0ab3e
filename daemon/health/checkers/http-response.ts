// A small incremental HTTP/1.x response reader for the HTTP checker. Pure: bytes in, state out.
// It understands what a health check needs: the status line, Content-Length, chunked transfer
// coding and read-until-close; headers other than those two are skipped.

export type ReaderState = 'head' | 'body' | 'complete' | 'bad';

const CRLFCRLF = Buffer.from('\r\n\r\n');

export class HttpResponseReader {
  state: ReaderState = 'head';
  status = 0;
  body: Buffer = Buffer.alloc(0);
  problem = '';
  private head: Buffer = Buffer.alloc(0);
  private mode: 'length' | 'chunked' | 'eof' = 'eof';
  private length = 0;
  private parts: Buffer[] = [];
  private received = 0;
  /** Chunked coding: the bytes after the last whole chunk, and the chunks' data so far. */
  private pending: Buffer = Buffer.alloc(0);
  private chunks: Buffer[] = [];

  constructor(
    /** Whether the body matters; without it the reader completes at the end of the head. */
    private readonly needBody: boolean,
    private readonly maxBytes = 1 << 20,
  ) {}

  push(chunk: Buffer): void {
    if (this.state === 'complete' || this.state === 'bad') return;
    if (this.state === 'head') {
      this.head = this.head.length === 0 ? chunk : Buffer.concat([this.head, chunk]);
      const end = this.head.indexOf(CRLFCRLF);
      if (end < 0) {
        if (this.head.length > 64 * 1024) this.bad('response head larger than 64 KiB');
        return;
      }
      if (!this.parseHead(this.head.subarray(0, end).toString('latin1'))) return;
      const rest = this.head.subarray(end + 4);
      this.head = Buffer.alloc(0);
      if (!this.needBody) {
        this.state = 'complete';
        return;
      }
      this.state = 'body';
      if (this.mode === 'length' && this.length === 0) {
        this.state = 'complete';
        return;
      }
      chunk = rest;
    }
    if (chunk.length === 0) return;
    this.received += chunk.length;
    if (this.received > this.maxBytes + 64) {
      this.bad(`body larger than ${this.maxBytes} bytes`);
      return;
    }
    if (this.mode === 'chunked') {
      this.tryChunked(chunk);
      return;
    }
    this.parts.push(chunk);
    if (this.mode === 'length' && this.received >= this.length) {
      this.body = Buffer.concat(this.parts).subarray(0, this.length);
      this.state = 'complete';
    }
  }

  /** The peer closed the connection. */
  end(): void {
    if (this.state === 'complete' || this.state === 'bad') return;
    if (this.state === 'head') {
      this.bad(this.head.length === 0 ? 'connection closed without a response' : 'connection closed inside the response head');
      return;
    }
    if (this.mode === 'eof') {
      this.body = Buffer.concat(this.parts);
      this.state = 'complete';
      return;
    }
    this.bad(`connection closed after ${this.received} body bytes (${this.mode === 'length' ? `Content-Length ${this.length}` : 'chunked'})`);
  }

  private bad(detail: string): void {
    this.state = 'bad';
    this.problem = detail;
  }

  private parseHead(text: string): boolean {
    const lines = text.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0] ?? '');
    if (m?.[1] === undefined) {
      this.bad(`not an HTTP/1.x status line: ${JSON.stringify((lines[0] ?? '').slice(0, 60))}`);
      return false;
    }
    this.status = Number(m[1]);
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i] ?? '';
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-length' && this.mode !== 'chunked') {
        if (!/^\d+$/.test(value)) {
          this.bad(`bad Content-Length ${JSON.stringify(value)}`);
          return false;
        }
        this.mode = 'length';
        this.length = Number(value);
        if (this.length > this.maxBytes && this.needBody) {
          this.bad(`body larger than ${this.maxBytes} bytes`);
          return false;
        }
      } else if (name === 'transfer-encoding' && value.toLowerCase().split(',').map((s) => s.trim()).includes('chunked')) {
        this.mode = 'chunked';
      }
    }
    // RFC 9110: 1xx, 204 and 304 carry no body.
    if (this.status === 204 || this.status === 304 || (this.status >= 100 && this.status < 200)) {
      this.mode = 'length';
      this.length = 0;
    }
    return true;
  }

  /**
   * Decodes the chunks that `chunk` completes; completes at the last chunk. Incremental: a peer sending a
   * megabyte of one-byte chunks in small reads used to have the whole body re-decoded at every read,
   * blocking the event loop for seconds.
   */
  private tryChunked(chunk: Buffer): void {
    const all = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let pos = 0;
    for (;;) {
      const eol = all.indexOf('\r\n', pos, 'latin1');
      if (eol < 0) break;
      const sizeText = all.subarray(pos, eol).toString('latin1').split(';')[0]?.trim() ?? '';
      if (!/^[0-9a-fA-F]+$/.test(sizeText)) {
        this.bad(`bad chunk size ${JSON.stringify(sizeText.slice(0, 20))}`);
        return;
      }
      // A chunk larger than the limit is waited for until the body passes the limit, as the native engine
      // does (probe_engine.c body_settled): both give one verdict for the same bytes.
      const size = parseInt(sizeText, 16);
      if (size === 0) {
        // Last chunk; trailers (if any) are not needed. Complete once the final CRLF arrived or now.
        this.body = Buffer.concat(this.chunks);
        this.state = 'complete';
        return;
      }
      const start = eol + 2;
      if (all.length < start + size + 2) break;
      this.chunks.push(all.subarray(start, start + size));
      pos = start + size + 2;
    }
    this.pending = all.subarray(pos);
  }
}

/** Parses accepted status specs: 200, "200", "200-299". Throws a message naming the bad entry. */
export function parseStatusRanges(specs: readonly (number | string)[]): [number, number][] {
  return specs.map((s) => {
    const m = /^\s*(\d{3})\s*(?:-\s*(\d{3})\s*)?$/.exec(String(s));
    if (m?.[1] === undefined) throw new Error(`bad status ${JSON.stringify(s)} (want 200 or "200-299")`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo) throw new Error(`bad status range ${JSON.stringify(s)}`);
    return [lo, hi];
  });
}

export function statusAccepted(status: number, ranges: readonly (readonly [number, number])[]): boolean {
  for (const [lo, hi] of ranges) if (status >= lo && status <= hi) return true;
  return false;
}
