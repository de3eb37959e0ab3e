// keepalived checkers (TCP_CHECK, HTTP_GET, SSL_GET, DNS_CHECK, MISC_CHECK, UDP_CHECK, SMTP_CHECK, PING_CHECK,
// FILE_CHECK) → healthCheck.
//
// keepalived's timing defaults differ from lvsd's (delay_loop 60s vs interval 5s, connect_timeout 5s
// vs 2s, retry 1, delay_before_retry 3s for HTTP), so the importer always writes the effective value:
// checker setting, else real server, else virtual server, else keepalived's default. keepalived marks a
// server up after one good check and down after 1 + retry failed attempts: rise 1, fall 1, retry N.
import { isIP } from 'node:net';
import type { Directive } from './parser.js';
import type { HealthCheckOut, UrlOut } from './lvsd-shape.js';
import { BlockReader, seconds, type Context } from './reader.js';
import type { TrackFile } from './map-vrrp.js';
import { KEEPALIVED_MAX_REPLY_LENGTH, keepalivedReplyRegex } from './udp-reply.js';
import { sslOf } from './map-ssl.js';
import { mapUrlRegex } from './map-url-regex.js';

type UdpOut = NonNullable<HealthCheckOut['udp']>;

export const CHECKERS = ['TCP_CHECK', 'HTTP_GET', 'SSL_GET', 'DNS_CHECK', 'MISC_CHECK', 'UDP_CHECK', 'SMTP_CHECK', 'PING_CHECK', 'BFD_CHECK', 'FILE_CHECK'];

/** global_defs checker_log_all_failures (on), by import: every checker logs every failure then. */
export const logAllFailuresOf = new WeakMap<Context, Directive>();

/** The global track_file blocks of one import, by name: a FILE_CHECK names one (the mapper sets it). */
export const trackFilesOf = new WeakMap<Context, ReadonlyMap<string, TrackFile>>();

interface Setting<T> {
  value: T;
  d: Directive;
}

/** Timing settings a virtual server or real server passes down to its checkers. */
export interface Timing {
  delayLoop?: Setting<number>;
  connectTimeout?: Setting<number>;
  retry?: Setting<number>;
  delayBeforeRetry?: Setting<number>;
  warmup?: Setting<number>;
  virtualhost?: Setting<string>;
}

function secondsOf(r: BlockReader, d: Directive | undefined): Setting<number> | undefined {
  if (!d) return undefined;
  const raw = d.args[0];
  if (raw === undefined || !/^\d+(\.\d+)?$/.test(raw)) {
    r.ctx.reportDirective(d, `${raw ?? '(missing)'} is not a number of seconds; not carried over`);
    return undefined;
  }
  return { value: Number(raw), d };
}

/** Takes the timing directives of one block (virtual server, real server or checker). */
export function readTiming(r: BlockReader): Timing {
  const t: Timing = {};
  const delayLoop = secondsOf(r, r.last('delay_loop'));
  if (delayLoop) t.delayLoop = delayLoop;
  const connectTimeout = secondsOf(r, r.last('connect_timeout'));
  if (connectTimeout) t.connectTimeout = connectTimeout;
  const retryD = r.last('retry', 'nb_get_retry');
  const retry = r.int(retryD, 0, 100);
  if (retryD && retry !== undefined) t.retry = { value: retry, d: retryD };
  const dbr = secondsOf(r, r.last('delay_before_retry'));
  if (dbr) t.delayBeforeRetry = dbr;
  const warmup = secondsOf(r, r.last('warmup'));
  if (warmup) t.warmup = warmup;
  const vhD = r.last('virtualhost');
  const vh = r.str(vhD);
  if (vhD && vh !== undefined) t.virtualhost = { value: vh, d: vhD };
  return t;
}

export function mergeTiming(outer: Timing, inner: Timing): Timing {
  return { ...outer, ...Object.fromEntries(Object.entries(inner).filter(([, v]) => v !== undefined)) };
}

/**
 * Maps one checker block to its checkers: one, except an SMTP_CHECK with host blocks (one per host);
 * none when the checker type has no lvsd equivalent or cannot be carried over (reported).
 */
export function mapChecker(ctx: Context, d: Directive, inherited: Timing): HealthCheckOut[] {
  const r = new BlockReader(ctx, d.block ?? [], d.keyword);
  const type = lvsdType(d.keyword);
  if (type === undefined) {
    r.discard();
    ctx.reportDirective(d, notSupported(d.keyword));
    return [];
  }
  if (d.keyword === 'FILE_CHECK') return mapFileCheck(ctx, r, d);
  const t = mergeTiming(inherited, readTiming(r));
  const hc: HealthCheckOut = { type };
  ctx.source.self(hc, d.pos);
  const defaults: string[] = [];

  const delayLoop = t.delayLoop?.value ?? 60;
  hc.interval = seconds(delayLoop);
  if (t.delayLoop) ctx.source.at(hc, 'interval', t.delayLoop.d.pos);
  else defaults.push('delay_loop 60');

  if (d.keyword !== 'MISC_CHECK') {
    hc.timeout = seconds(t.connectTimeout?.value ?? 5);
    if (t.connectTimeout) ctx.source.at(hc, 'timeout', t.connectTimeout.d.pos);
    else defaults.push('connect_timeout 5');
  }
  hc.rise = 1;
  hc.fall = 1;
  const defaultRetry = d.keyword === 'DNS_CHECK' ? 3 : d.keyword === 'MISC_CHECK' ? 0 : 1;
  hc.retry = t.retry?.value ?? defaultRetry;
  if (t.retry) ctx.source.at(hc, 'retry', t.retry.d.pos);
  else defaults.push(`retry ${defaultRetry}`);
  const defaultDbr = d.keyword === 'DNS_CHECK' ? delayLoop : d.keyword === 'HTTP_GET' || d.keyword === 'SSL_GET' ? 3 : 1;
  hc.delayBeforeRetry = seconds(t.delayBeforeRetry?.value ?? defaultDbr);
  if (t.delayBeforeRetry) ctx.source.at(hc, 'delayBeforeRetry', t.delayBeforeRetry.d.pos);
  else defaults.push(`delay_before_retry ${defaultDbr}`);
  hc.warmup = seconds(t.warmup?.value ?? delayLoop);
  if (t.warmup) ctx.source.at(hc, 'warmup', t.warmup.d.pos);
  else defaults.push('warmup = delay_loop');

  readConnection(ctx, r, hc);
  // keepalived logs a failure when either the checker's log_all_failures or the global one is on.
  const lafD = r.last('log_all_failures');
  const lafGlobal = logAllFailuresOf.get(ctx);
  if ((lafD && r.bool(lafD) === true) || lafGlobal) {
    hc.logAllFailures = true;
    ctx.source.at(hc, 'logAllFailures', (lafD && r.bool(lafD) === true ? lafD : lafGlobal ?? d).pos);
  }
  const alpha = r.last('alpha');
  if (alpha) ctx.reportDirective(alpha, 'alpha is set per virtual server in lvsd (virtualServers[].alpha); not carried over per checker');

  switch (d.keyword) {
    case 'HTTP_GET':
    case 'SSL_GET':
      mapHttp(ctx, r, hc, t, d.keyword === 'SSL_GET');
      break;
    case 'DNS_CHECK': {
      const name = r.str(r.last('name')) ?? '.';
      const qtype = (r.str(r.last('type')) ?? 'SOA').toUpperCase();
      hc.dns = { name, type: qtype };
      if (!['A', 'AAAA', 'CNAME', 'MX', 'NS', 'SOA', 'TXT'].includes(qtype)) ctx.reportDirective(d, `DNS query type ${qtype} is not supported`);
      ctx.note(hc, 'keepalived DNS_CHECK defaults: name ".", type SOA');
      break;
    }
    case 'MISC_CHECK': {
      const pathD = r.last('misc_path');
      const command = r.str(pathD);
      if (!pathD || command === undefined) {
        r.discard();
        ctx.reportDirective(d, 'MISC_CHECK without misc_path; not carried over');
        return [];
      }
      hc.exec = { command };
      ctx.source.at(hc.exec, 'command', pathD.pos);
      const timeoutD = r.last('misc_timeout');
      const timeout = secondsOf(r, timeoutD);
      hc.timeout = seconds(timeout?.value ?? delayLoop);
      if (timeout) ctx.source.at(hc, 'timeout', timeout.d.pos);
      else defaults.push('misc_timeout = delay_loop');
      if (r.has('misc_dynamic')) hc.exec.dynamicWeight = true;
      r.drop('lvsd runs checks as its service user; a per-check user is not supported', 'user');
      break;
    }
    case 'UDP_CHECK':
      mapUdp(ctx, r, hc);
      break;
    case 'SMTP_CHECK': {
      const heloD = r.last('helo_name');
      const helo = r.str(heloD);
      hc.smtp = {};
      if (heloD && helo !== undefined) {
        if (/^[\x21-\x7e]+$/.test(helo)) {
          hc.smtp.helo = helo;
          ctx.source.at(hc.smtp, 'helo', heloD.pos);
        } else ctx.reportDirective(heloD, `${JSON.stringify(helo)} is not one word; lvsd says HELO with this director's host name`);
      } else defaults.push('helo_name smtpchecker.keepalived.org');
      if (!heloD) hc.smtp.helo = 'smtpchecker.keepalived.org';
      break;
    }
    default:
      break;
  }
  if (defaults.length > 0) ctx.note(hc, `keepalived defaults written out: ${defaults.join(', ')}`);
  const hosts = d.keyword === 'SMTP_CHECK' ? smtpHosts(ctx, r, hc, d) : [hc];
  r.finish();
  return hosts;
}

/**
 * SMTP_CHECK's deprecated host blocks: keepalived makes each one a checker of its own (connect_ip,
 * connect_port, bindto… over the SMTP_CHECK's), and the SMTP_CHECK itself is a checker only when it
 * names a connection of its own. Every one must pass.
 */
function smtpHosts(ctx: Context, r: BlockReader, hc: HealthCheckOut, d: Directive): HealthCheckOut[] {
  const blocks = r.all('host');
  if (blocks.length === 0) return [hc];
  const own = hc.connectIp !== undefined || hc.connectPort !== undefined || hc.bindTo !== undefined || hc.bindInterface !== undefined || hc.bindPort !== undefined;
  const out = own ? [hc] : [];
  for (const b of blocks) {
    const h: HealthCheckOut = structuredClone(hc);
    ctx.source.self(h, b.pos);
    const hr = new BlockReader(ctx, b.block ?? [], 'SMTP_CHECK host');
    readConnection(ctx, hr, h);
    const to = secondsOf(hr, hr.last('connect_timeout'));
    if (to) {
      h.timeout = seconds(to.value);
      ctx.source.at(h, 'timeout', to.d.pos);
    }
    hr.finish();
    out.push(h);
  }
  ctx.note(out[0] ?? hc, `SMTP_CHECK at ${ctx.displayPos(d.pos)}: each host block is a checker of its own (keepalived does the same); every one must pass`);
  return out;
}

/** connect_ip, connect_port, bindto, bind_if of a checker (or of an SMTP_CHECK host block) onto `hc`. */
function readConnection(ctx: Context, r: BlockReader, hc: HealthCheckOut): void {
  const ipD = r.last('connect_ip');
  const ip = r.str(ipD);
  if (ipD && ip !== undefined) {
    if (isIP(ip) === 0) ctx.reportDirective(ipD, `${ip} is not an IP address; not carried over`);
    else {
      hc.connectIp = ip;
      ctx.source.at(hc, 'connectIp', ipD.pos);
    }
  }
  const portD = r.last('connect_port');
  const port = r.int(portD, 1, 65535);
  if (portD && port !== undefined) {
    hc.connectPort = port;
    ctx.source.at(hc, 'connectPort', portD.pos);
  }
  const bindD = r.last('bindto');
  const bind = r.str(bindD);
  if (bindD && bind !== undefined) {
    if (isIP(bind) === 0) ctx.reportDirective(bindD, `${bind} is not an IP address; not carried over`);
    else {
      hc.bindTo = bind;
      ctx.source.at(hc, 'bindTo', bindD.pos);
    }
  }
  const bindIfD = r.last('bind_if');
  const bindIf = r.str(bindIfD);
  if (bindIfD && bindIf !== undefined) {
    hc.bindInterface = bindIf;
    ctx.source.at(hc, 'bindInterface', bindIfD.pos);
  }
  const bindPortD = r.last('bind_port');
  const bindPort = r.int(bindPortD, 1, 65535);
  if (bindPortD && bindPort !== undefined && ['ping', 'file', 'exec', 'none'].includes(hc.type)) {
    ctx.reportDirective(bindPortD, `a ${hc.type} check has no socket of its own in lvsd; not carried over`);
  } else if (bindPortD && bindPort !== undefined) {
    hc.bindPort = bindPort;
    ctx.source.at(hc, 'bindPort', bindPortD.pos);
  }
  const markD = r.last('fwmark');
  const mark = r.int(markD, 0, 4294967295);
  // keepalived: fwmark 0 is no mark.
  if (markD && mark !== undefined && mark > 0 && hc.type !== 'tcp' && hc.type !== 'http' && hc.type !== 'smtp') {
    ctx.reportDirective(markD, `lvsd marks only tcp, plain http and smtp checks (its native probe engine sets SO_MARK; Node.js cannot), not ${hc.type}; not carried over`);
  } else if (markD && mark !== undefined && mark > 0) {
    hc.fwmark = mark;
    ctx.source.at(hc, 'fwmark', markD.pos);
  }
}

function lvsdType(keyword: string): HealthCheckOut['type'] | undefined {
  switch (keyword) {
    case 'TCP_CHECK':
      return 'tcp';
    case 'HTTP_GET':
      return 'http';
    case 'SSL_GET':
      return 'https';
    case 'DNS_CHECK':
      return 'dns';
    case 'MISC_CHECK':
      return 'exec';
    case 'UDP_CHECK':
      return 'udp';
    case 'SMTP_CHECK':
      return 'smtp';
    case 'PING_CHECK':
      return 'ping';
    case 'FILE_CHECK':
      return 'file';
    default:
      return undefined;
  }
}

function notSupported(keyword: string): string {
  switch (keyword) {
    case 'BFD_CHECK':
      return 'BFD is not supported by lvsd';
    default:
      return `checker ${keyword} is not supported by lvsd`;
  }
}

/**
 * FILE_CHECK { track_file NAME; weight W [reverse] } over the global track_file NAME: the file's path,
 * and the FILE_CHECK's weight, else the track_file's (keepalived: a FILE_CHECK weight of 0 takes the
 * track_file's). It has none of the timing options: keepalived reads the file when inotify says it
 * changed; lvsd watches it too and reads it every second besides.
 */
function mapFileCheck(ctx: Context, r: BlockReader, d: Directive): HealthCheckOut[] {
  const nameD = r.last('track_file');
  const name = r.str(nameD);
  const file = name === undefined ? undefined : trackFilesOf.get(ctx)?.get(name);
  const weightD = r.last('weight');
  const weight = r.int(weightD, -65535, 65535);
  const reverseWord = weightD?.args[1];
  if (weightD && reverseWord !== undefined && reverseWord !== 'reverse' && reverseWord !== 'noreverse') ctx.reportDirective(weightD, `unknown weight option ${reverseWord}; keepalived ignores the weight`);
  r.finish();
  if (file === undefined) {
    ctx.reportDirective(nameD ?? d, name === undefined ? 'FILE_CHECK without track_file; not carried over (keepalived ignores it too)' : `no track_file ${name} was carried over; the check is not carried over`);
    return [];
  }
  const own = weight !== undefined && weight !== 0;
  const hc: HealthCheckOut = { type: 'file', interval: '1s', timeout: '1s', rise: 1, fall: 1, retry: 0, warmup: '0s' };
  ctx.source.self(hc, d.pos);
  const out: NonNullable<HealthCheckOut['file']> = { path: file.path };
  const w = own ? weight : file.weight;
  const reverse = own ? reverseWord === 'reverse' : file.reverse !== undefined;
  if (w !== 1) out.weight = w;
  if (reverse) out.reverse = true;
  hc.file = out;
  if (nameD) ctx.source.at(out, 'path', nameD.pos);
  ctx.note(hc, 'keepalived reads a track_file when inotify reports a change; lvsd too, and every second besides (interval 1s)');
  return [hc];
}

function mapHttp(ctx: Context, r: BlockReader, hc: HealthCheckOut, t: Timing, tls: boolean): void {
  const http: NonNullable<HealthCheckOut['http']> = {};
  const urlDs = r.all('url');
  let host = t.virtualhost;
  // keepalived requires every url to pass: one url's settings go on http itself, several become urls.
  const pages = urlDs.map((url, i) => {
    const page = mapUrl(ctx, url);
    if (page.host === undefined) return page.out;
    if (i === 0) host = page.host;
    else if (page.host.value !== host?.value) {
      ctx.reportDirective(page.host.d, `lvsd sends one Host header per check (${host?.value ?? 'the address'}); this url's virtualhost ${page.host.value} is not carried over`);
    }
    return page.out;
  });
  const first = pages[0];
  if (pages.length === 1 && first !== undefined) Object.assign(http, first);
  if (pages.length > 1) http.urls = pages;
  // Positions: a single url's keys keep theirs (mapUrl recorded them on the page, copied here).
  if (first !== undefined && pages.length === 1) {
    for (const k of Object.keys(first)) {
      const pos = ctx.source.get(first, k);
      if (pos) ctx.source.at(http, k, pos);
    }
    for (const n of ctx.notes.get(first) ?? []) ctx.note(http, n);
  }
  if (host) {
    http.host = host.value;
    ctx.source.at(http, 'host', host.d.pos);
  }
  mapProtocol(ctx, r, http);
  const fastD = r.last('fast_recovery');
  if (fastD && r.bool(fastD) === true) ctx.note(http, FAST_RECOVERY);
  if (tls) {
    // keepalived's SSL_GET does not verify the server certificate.
    http.tlsVerify = false;
    const ssl = sslOf.get(ctx);
    if (ssl?.clientCertificate !== undefined) {
      const cc = { ...ssl.clientCertificate };
      for (const k of Object.keys(cc)) {
        const pos = ctx.source.get(ssl.clientCertificate, k);
        if (pos) ctx.source.at(cc, k, pos);
      }
      http.clientCertificate = cc;
    }
    for (const n of ssl?.notes ?? []) ctx.note(http, n);
    const sni = r.last('enable_sni');
    if (sni && r.bool(sni) !== false) {
      if (host) http.sni = host.value;
      else ctx.reportDirective(sni, 'enable_sni without a virtualhost: lvsd sends no SNI');
    }
  }
  hc.http = http;
  ctx.source.self(http, (urlDs[0] ?? r.items[0])?.pos ?? { file: '', line: 0, col: 0 });
}

// keepalived (check_http.c epilog) checks one url per delay_loop, and a down server's failed url passing
// starts a new round from the first url; fast_recovery runs that round back to back. lvsd checks every
// url each interval (one checker per url), so a server is up once every url passed: fast_recovery's pace.
const FAST_RECOVERY = 'fast_recovery: lvsd checks every url at each interval and the server is up on the first round where all pass (rise 1), as keepalived\'s back-to-back recovery round does';

/** http_protocol 1.0 | 1.0C | 1.1 (keepalived's default 1.0, written out): the request line and Connection header. */
function mapProtocol(ctx: Context, r: BlockReader, http: NonNullable<HealthCheckOut['http']>): void {
  const d = r.last('http_protocol');
  const raw = d?.args[0];
  const value = raw === '1.0c' ? '1.0C' : raw;
  if (d && (value === '1.0' || value === '1.0C' || value === '1.1')) {
    http.protocol = value;
    ctx.source.at(http, 'protocol', d.pos);
    return;
  }
  if (d) ctx.reportDirective(d, `${raw ?? '(missing)'} is not 1.0, 1.0C or 1.1: keepalived keeps its default 1.0, and so does the import`);
  http.protocol = '1.0';
  ctx.note(http, 'keepalived default written out: http_protocol 1.0 (GET … HTTP/1.0, no Connection header)');
}

/** One url block: its page settings, and its virtualhost (which lvsd keeps per check, not per page). */
function mapUrl(ctx: Context, url: Directive): { out: UrlOut; host: Setting<string> | undefined } {
  const out: UrlOut = {};
  ctx.source.self(out, url.pos);
  const u = new BlockReader(ctx, url.block ?? [], 'url');
  const pathD = u.last('path');
  const path = u.str(pathD);
  if (pathD && path !== undefined) {
    out.path = path.startsWith('/') ? path : `/${path}`;
    ctx.source.at(out, 'path', pathD.pos);
  } else out.path = '/';
  const digestD = u.last('digest');
  const digest = u.str(digestD);
  if (digestD && digest !== undefined) {
    if (/^[0-9a-fA-F]{32}$/.test(digest)) {
      out.digest = digest.toLowerCase();
      ctx.source.at(out, 'digest', digestD.pos);
    } else ctx.reportDirective(digestD, `${digest} is not an MD5 hex digest; not carried over`);
  }
  const statusD = u.last('status_code');
  if (statusD) {
    const status: (number | string)[] = [];
    for (const s of statusD.args) {
      if (/^[1-5]\d\d$/.test(s)) status.push(Number(s));
      else if (/^[1-5]\d\d-[1-5]\d\d$/.test(s)) status.push(s);
      else ctx.reportDirective(statusD, `${s} is not a status code or range; not carried over`);
    }
    if (status.length > 0) {
      out.status = status;
      ctx.source.at(out, 'status', statusD.pos);
    }
  }
  const vhD = u.last('virtualhost');
  const vh = u.str(vhD);
  mapUrlRegex(ctx, u, out);
  u.finish();
  return { out, host: vhD && vh !== undefined ? { value: vh, d: vhD } : undefined };
}

/** keepalived's free-form hex: blank-separated groups, pairs from the left, a lone digit is 0X. */
/** require_reply bytes with keepalived's comparison and length bounds (check_udp.c check_udp_reply). */
function mapUdpReply(ctx: Context, r: BlockReader, udp: UdpOut, hex: string, replyD: Directive): void {
  const minD = r.last('min_reply_length');
  const maxD = r.last('max_reply_length');
  const min = r.int(minD, 0, 65535) ?? 0;
  const max = r.int(maxD, 0, 65535) ?? KEEPALIVED_MAX_REPLY_LENGTH;
  if (min > max) {
    ctx.reportDirective(minD ?? replyD, `min_reply_length ${min} > max_reply_length ${max}: every check fails in keepalived; require_reply is not carried over`);
    return;
  }
  const length = hex.length / 2;
  // Both bounds at the byte count and no wildcard: keepalived's comparison is the whole reply, lvsd's hex expect.
  const exact = min === length && max === length && !hex.includes('x');
  udp.expect = exact ? hex : `/${keepalivedReplyRegex(hex)}/`;
  ctx.source.at(udp, 'expect', replyD.pos);
  if (!exact) {
    if (min > 0) udp.minReplyLength = min;
    udp.maxReplyLength = max;
    ctx.note(udp, `require_reply ${hex}: keepalived compares the first min(reply, ${length}) bytes${hex.includes('x') ? ' (x: any nibble)' : ''}, written as a regex; reply length ${min}..${max}${maxD ? '' : ' (keepalived\'s default maximum)'}`);
  }
}

export function normaliseHex(groups: string[], allowWildcard: boolean): string | undefined {
  let out = '';
  const re = allowWildcard ? /^[0-9a-fA-FxX]+$/ : /^[0-9a-fA-F]+$/;
  for (const g of groups) {
    if (!re.test(g)) return undefined;
    for (let i = 0; i < g.length; i += 2) out += i + 1 < g.length ? g.slice(i, i + 2) : `0${g.slice(i)}`;
  }
  return out.toLowerCase();
}

function mapUdp(ctx: Context, r: BlockReader, hc: HealthCheckOut): void {
  const udp: UdpOut = {};
  const payloadD = r.last('payload');
  if (payloadD) {
    const hex = normaliseHex(payloadD.args, false);
    if (hex === undefined) ctx.reportDirective(payloadD, 'payload is not hex; not carried over');
    else {
      udp.payload = hex;
      ctx.source.at(udp, 'payload', payloadD.pos);
    }
  }
  const replyD = r.last('require_reply');
  if (!replyD) {
    // Not a diagnostic: lvsd's udp check without expect behaves the same, so nothing changes.
    ctx.note(udp, 'no require_reply: up unless an ICMP port-unreachable comes back, as in keepalived');
  } else if (replyD.args.length === 0) {
    // Any reply will do: a regular expression that matches every datagram.
    udp.expect = '/^/';
    ctx.source.at(udp, 'expect', replyD.pos);
    ctx.note(udp, 'require_reply without bytes: any reply passes (expect /^/)');
  } else {
    const hex = normaliseHex(replyD.args, true);
    if (hex === undefined) ctx.reportDirective(replyD, 'require_reply is not hex; not carried over');
    else mapUdpReply(ctx, r, udp, hex, replyD);
  }
  // keepalived reads min/max_reply_length only to judge reply bytes: without them the limits do nothing.
  for (const d of r.all('min_reply_length', 'max_reply_length'))
    if (udp.expect === undefined || udp.expect === '/^/') ctx.note(udp, `${d.keyword} at ${ctx.displayPos(d.pos)}: keepalived checks reply lengths only against require_reply bytes; not carried over`);
  if (!payloadD) ctx.note(udp, 'keepalived sent a random payload when none was set; lvsd sends an empty datagram');
  hc.udp = udp;
}
