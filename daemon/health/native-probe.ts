// The native probe engine (daemon/health/native/probe_engine.c, built by `npm ci` through binding.gyp
// into build/Release/lvsd_probe.node): TCP, plain-HTTP, SMTP and ping checks run by one epoll thread, results
// delivered in batches. This wrapper decides which checks it may run (nativeSpecFor), turns its
// result codes into the same verdicts the JavaScript checkers give, and batches starts so one turn of
// the monitor's timer costs one call into the addon.
//
// Verdicts stay identical to the JavaScript path: errors go through the same errno → reason table
// (errors.ts), and an HTTP head the engine does not accept on its own (bad status, odd head, closed
// early) comes back as bytes that the JavaScript checker's reader judges; an SMTP check always does
// (its transcript, judged by the JavaScript checker's dialog).
import { constants } from 'node:os';
import { loadAddon } from '../native-addon.js';
import { verdictFromError } from './checkers/errors.js';
import { HttpResponseReader } from './checkers/http-response.js';
import { prepareHttp, verdictAfterData, verdictAtEnd, type PreparedHttp } from './checkers/http.js';
import { resolveEndpoint } from './checkers/index.js';
import { smtpHeloLine, smtpRequest, smtpTranscriptVerdict } from './checkers/smtp.js';
import type { CheckOptions } from './options.js';
import { fail, OK_VERDICT, type CheckVerdict } from './types.js';

interface Addon {
  open(onBatch: (records: Int32Array, bodies: Buffer[]) => void): object;
  close(engine: object): void;
  /** bindPort 0: any; mark 0: none. */
  addSpec(
    engine: object, kind: number, host: string, port: number, bindTo: string | null, request: Buffer | null, ranges: Int32Array | null, timeoutMs: number,
    bindPort: number, mark: number,
  ): number;
  removeSpec(engine: object, id: number): void;
  start(engine: object, batch: Int32Array, count: number): void;
  /** The echo request a ping check sends (daemon/health/native/icmp_codec.c), for tests. */
  icmpEcho(family: 4 | 6, id: number, seq: number): Buffer;
  /** [kind (0 none, 1 reply, 2 error), id, seq, errno, offset of the quoted destination or -1]. */
  icmpRead(datagram: Buffer, family: 4 | 6, ipHeader: boolean): [number, number, number, number, number];
  /** Where the next SMTP reply ends (daemon/health/native/smtp_scan.c), for tests: [0 more | 1 reply | -1 garbage, code, consumed]. */
  smtpScan(buf: Buffer): [number, number, number];
}

const KIND_TCP = 0;
const KIND_HTTP = 1;
/** HTTP whose body is judged (regex or digest): the engine reads the whole response, JavaScript judges it. */
const KIND_HTTP_BODY = 2;
/** ICMP / ICMPv6 echo (keepalived PING_CHECK) on the engine's shared ICMP socket of the family. */
const KIND_PING = 3;
/** keepalived SMTP_CHECK: banner, HELO, QUIT; the engine hands back the transcript, JavaScript judges it. */
const KIND_SMTP = 4;
const RES = { OK: 0, ERRNO: 1, TIMEOUT: 2, HEAD: 3, EOF: 4 } as const;

/** What the engine needs to run one target's check, and what this side needs to judge its results. */
export interface NativeSpec {
  kind: typeof KIND_TCP | typeof KIND_HTTP | typeof KIND_HTTP_BODY | typeof KIND_PING | typeof KIND_SMTP;
  host: string;
  port: number;
  bindTo: string | undefined;
  /** keepalived bind_port / checker fwmark (0: none). */
  bindPort: number;
  mark: number;
  timeoutMs: number;
  http: PreparedHttp | undefined;
  /** SMTP: the HELO line (the transcript's judge needs it) and what the engine sends (HELO, then QUIT). */
  smtp?: { helo: Buffer; request: Buffer };
}

/**
 * The native spec of a check, or undefined when the engine cannot run it: HTTPS (TLS), an
 * interface-scoped link-local target, and every other check type. A body regex or digest runs natively
 * too: the engine reads the response to the end of its body and this side judges the bytes.
 * Option errors are the JavaScript checker's to report (buildProbe runs first).
 */
export function nativeSpecFor(id: string, address: string, port: number, o: CheckOptions): NativeSpec | undefined {
  if (o.type === 'ping') {
    const ep = resolveEndpoint(id, address, 0, o);
    return { kind: KIND_PING, host: ep.host, port: 0, bindTo: ep.localAddress, bindPort: 0, mark: 0, timeoutMs: o.timeoutMs, http: undefined };
  }
  if (o.type !== 'tcp' && o.type !== 'http' && o.type !== 'smtp') return undefined;
  // An agent beside the check rides on the JS probe that also asks the agent (checkers/index.ts).
  if (o.bindInterface !== undefined || o.agent !== undefined) return undefined;
  const ep = resolveEndpoint(id, address, port, o);
  const base = { host: ep.host, port: ep.port, bindTo: ep.localAddress, bindPort: ep.localPort ?? 0, mark: o.fwmark ?? 0, timeoutMs: o.timeoutMs };
  if (o.type === 'tcp') return { kind: KIND_TCP, ...base, http: undefined };
  if (o.type === 'smtp') {
    const helo = smtpHeloLine(o.smtp ?? {});
    return { kind: KIND_SMTP, ...base, http: undefined, smtp: { helo, request: smtpRequest(helo) } };
  }
  const http = prepareHttp(ep, o.http ?? {}, false);
  return { kind: http.regex !== undefined || http.digest !== undefined ? KIND_HTTP_BODY : KIND_HTTP, ...base, http };
}

let addon: Addon | null | undefined;

/** The addon, or null when it is not built or LVSD_HEALTH_NATIVE=0 switches it off. */
export function probeAddon(): Addon | null {
  if (addon === undefined) addon = loadAddon('lvsd_probe', 'LVSD_HEALTH_NATIVE') as Addon | null;
  return addon;
}

const ERRNO_NAMES = new Map<number, string>(Object.entries(constants.errno).map(([name, n]) => [n, name]));

/** Receives each verdict; null when the engine's timeout settled the check (the monitor words it). */
export type NativeVerdictSink = (token: number, gen: number, verdict: CheckVerdict | null) => void;

export class NativeProbeEngine {
  private readonly engine: object;
  private readonly specs: (NativeSpec | undefined)[] = [];
  private pending = new Int32Array(3 * 256);
  private npending = 0;
  private flushQueued = false;
  private closed = false;

  constructor(
    private readonly lib: Addon,
    private readonly sink: NativeVerdictSink,
  ) {
    this.engine = lib.open(this.onBatch);
  }

  add(spec: NativeSpec): number {
    const ranges = spec.http === undefined ? null : Int32Array.from(spec.http.ranges.flat());
    const id = this.lib.addSpec(this.engine, spec.kind, spec.host, spec.port, spec.bindTo ?? null, spec.http?.request ?? spec.smtp?.request ?? null, ranges, spec.timeoutMs, spec.bindPort, spec.mark);
    this.specs[id] = spec;
    return id;
  }

  /**
   * Why this engine cannot run ping checks of the family (the ICMP socket does not open), or undefined
   * when it can. Opens the socket now, so a config that cannot run is refused when it is applied.
   */
  pingRefusal(family: 4 | 6): string | undefined {
    const known = this.pingRefusals.get(family);
    if (known !== undefined) return known === '' ? undefined : known;
    let why = '';
    try {
      this.lib.removeSpec(this.engine, this.lib.addSpec(this.engine, KIND_PING, family === 6 ? '::1' : '127.0.0.1', 0, null, null, null, 1000, 0, 0));
    } catch (e) {
      why = (e as Error).message;
    }
    this.pingRefusals.set(family, why);
    return why === '' ? undefined : why;
  }

  private readonly pingRefusals = new Map<4 | 6, string>();

  /** Forgets a spec; checks in flight finish on their own (their verdicts arrive and are ignored). */
  remove(id: number): void {
    this.specs[id] = undefined;
    this.lib.removeSpec(this.engine, id);
  }

  /** Queues a check; the queue goes to the engine in one call once the current job is done. */
  start(spec: number, token: number, gen: number): void {
    if (this.npending * 3 === this.pending.length) {
      const grown = new Int32Array(this.pending.length * 2);
      grown.set(this.pending);
      this.pending = grown;
    }
    const i = this.npending * 3;
    this.pending[i] = spec;
    this.pending[i + 1] = token;
    this.pending[i + 2] = gen;
    this.npending++;
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flush);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.lib.close(this.engine);
  }

  private readonly flush = (): void => {
    this.flushQueued = false;
    if (this.closed || this.npending === 0) return;
    this.lib.start(this.engine, this.pending, this.npending);
    this.npending = 0;
  };

  private readonly onBatch = (rec: Int32Array, bodies: Buffer[]): void => {
    for (let i = 0; i + 4 < rec.length; i += 5) {
      const spec = rec[i] ?? 0;
      const token = rec[i + 1] ?? 0;
      const gen = rec[i + 2] ?? 0;
      const code = rec[i + 3] ?? 0;
      const value = rec[i + 4] ?? 0;
      if (code === RES.OK) this.sink(token, gen, OK_VERDICT);
      else if (code === RES.TIMEOUT) this.sink(token, gen, null);
      else this.sink(token, gen, this.slowVerdict(spec, code, value, bodies));
    }
  };

  private slowVerdict(id: number, code: number, value: number, bodies: Buffer[]): CheckVerdict {
    const spec = this.specs[id];
    if (code === RES.ERRNO) {
      const name = ERRNO_NAMES.get(value) ?? `errno ${value}`;
      const ping = spec?.kind === KIND_PING;
      const where = spec === undefined ? '' : ` ${spec.host}${ping ? '' : `:${spec.port}`}${spec.bindTo !== undefined ? ` - Local (${spec.bindTo})` : ''}`;
      return verdictFromError({ code: name, message: `${ping ? 'ping' : 'connect'} ${name}${where}` });
    }
    // Only HTTP and SMTP specs produce bytes. A removed spec's verdict is ignored by the monitor (its
    // generation moved on); a reused id may meet a stale result the same way.
    if (spec?.smtp !== undefined) return smtpTranscriptVerdict(spec.smtp.helo, bodies[value] ?? Buffer.alloc(0), code === RES.EOF);
    return httpVerdict(spec?.http, bodies[value] ?? Buffer.alloc(0), code === RES.EOF);
  }
}

/** Judges the response bytes the engine handed over, exactly as the JavaScript checker would. */
export function httpVerdict(p: PreparedHttp | undefined, bytes: Buffer, eof: boolean): CheckVerdict {
  if (p === undefined) return fail('error', 'check removed');
  const reader = new HttpResponseReader(p.regex !== undefined || p.digest !== undefined);
  if (bytes.length > 0) {
    const v = verdictAfterData(p, reader, bytes);
    if (v !== undefined) return v;
  }
  return eof ? verdictAtEnd(p, reader) : fail('protocol', 'incomplete response head');
}
