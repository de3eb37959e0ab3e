// Builds the probe for one target from its check options: resolves connectIp/connectPort/bindTo,
// validates and compiles the type's options. Errors name the target and the field.
import { isIP } from 'node:net';
import { HealthOptionError, type CheckOptions, type Endpoint } from '../options.js';
import { fail, OK_VERDICT } from '../types.js';
import { agentProbe, withAgent } from './agent.js';
import { dnsProbe } from './dns.js';
import { execProbe } from './exec.js';
import { fileProbe } from './file.js';
import { httpProbe, prepareHttp } from './http.js';
import type { Probe } from './probe.js';
import { smtpProbe } from './smtp.js';
import { tcpProbe } from './tcp.js';
import { udpProbe } from './udp.js';

export type { Probe } from './probe.js';

export function resolveEndpoint(id: string, address: string, port: number, o: CheckOptions): Endpoint {
  let host = o.connectIp ?? address;
  const family = isIP(host);
  if (family === 0) throw new HealthOptionError(id, o.connectIp !== undefined ? 'connectIp' : 'address', `not an IP address: ${JSON.stringify(host)}`);
  const p = o.connectPort ?? port;
  if (!Number.isInteger(p) || p < 0 || p > 65535) throw new HealthOptionError(id, 'connectPort', `bad port ${p}`);
  if (o.bindInterface !== undefined) {
    // Node cannot SO_BINDTODEVICE; the interface only scopes IPv6 link-local addresses.
    if (family !== 6 || !host.toLowerCase().startsWith('fe80:')) {
      throw new HealthOptionError(id, 'bindInterface', 'only scopes IPv6 link-local (fe80::/10) addresses; use bindTo for a source address');
    }
    host = `${host.split('%')[0] ?? host}%${o.bindInterface}`;
  }
  if (o.bindTo !== undefined && isIP(o.bindTo) !== family) {
    throw new HealthOptionError(id, 'bindTo', `${o.bindTo} is not an IPv${family} address like the target ${host}`);
  }
  const ep: Endpoint = { host, port: p, family: family === 6 ? 6 : 4 };
  if (o.bindTo !== undefined) ep.localAddress = o.bindTo;
  if (o.bindPort !== undefined) ep.localPort = o.bindPort;
  return ep;
}

const alwaysUp: Probe = () => Promise.resolve(OK_VERDICT);
/** The ping check's JavaScript side: the native engine runs it, and the monitor refuses it without one. */
const pingWithoutEngine: Probe = () => Promise.resolve(fail('error', 'ping checks run on the native probe engine only'));

export function buildProbe(id: string, address: string, port: number, o: CheckOptions): Probe {
  const main = buildCheckProbe(id, address, port, o);
  if (o.agent === undefined || o.type === 'agent' || o.type === 'none') return main;
  // The agent beside another check: the same address (connectIp applies), its own port.
  const agentPort = o.agent.port;
  if (agentPort === undefined) throw new HealthOptionError(id, 'agent.port', 'required beside another check (the agent listens on its own port)');
  return withAgent(main, buildCheckProbe(id, address, agentPort, { ...o, type: 'agent' }, true));
}

/** `beside`: an agent next to another check, which keeps its last word when silent. */
function buildCheckProbe(id: string, address: string, port: number, o: CheckOptions, beside = false): Probe {
  const ep = resolveEndpoint(id, address, port, o);
  const section = o.type === 'https' ? 'http' : o.type;
  try {
    switch (o.type) {
      case 'none':
        return alwaysUp;
      case 'tcp':
        return tcpProbe(ep, o.timeoutMs);
      case 'http':
      case 'https':
        return httpProbe(ep, prepareHttp(ep, o.http ?? {}, o.type === 'https'), o.timeoutMs);
      case 'udp':
        return udpProbe(ep, o.udp ?? {}, o.timeoutMs);
      case 'dns':
        if (o.dns === undefined) throw new Error('name: required');
        return dnsProbe(ep, o.dns, o.timeoutMs);
      case 'smtp':
        return smtpProbe(ep, o.smtp ?? {}, o.timeoutMs);
      case 'ping':
        if (o.bindInterface !== undefined) throw new HealthOptionError(id, 'bindInterface', 'not supported by ping checks (an interface-scoped link-local target)');
        return pingWithoutEngine;
      case 'file':
        if (o.file === undefined) throw new Error('path: required');
        return fileProbe(o.file);
      case 'exec':
        if (o.exec === undefined) throw new Error('command: required');
        return execProbe(ep, o.exec, o.timeoutMs);
      case 'agent':
        return agentProbe(o.agent?.port === undefined ? ep : { ...ep, port: o.agent.port }, o.agent ?? {}, o.timeoutMs, beside);
    }
  } catch (e) {
    if (e instanceof HealthOptionError) throw e;
    const m = /^([\w.]+): (.*)$/s.exec((e as Error).message);
    throw new HealthOptionError(id, m?.[1] !== undefined ? `${section}.${m[1]}` : section, m?.[2] ?? (e as Error).message);
  }
}
