// The alerts section: its cross-field rules (semantic) and its normalised form, in one file like bgp.ts.
// The per-object overrides name VRRP instances and virtual servers; a name that matches nothing is an error
// (a typo must not silently turn an instance's mail off), and they are stored by instance name and virtual
// server id so the mail supervisor decides with one lookup.
import { parseDuration } from './formats.js';
import type { Issue } from './errors.js';
import type { ConfigFile } from './schema.js';
import type { AlertsConfig } from './types.js';
import type { VirtualServerRef } from './bgp.js';

type AlertsFile = NonNullable<ConfigFile['alerts']>;

const findVs = (services: readonly VirtualServerRef[], ref: string): VirtualServerRef | undefined => services.find((s) => s.id === ref || s.name === ref);

export function checkAlerts(alerts: AlertsFile, instances: readonly string[], services: readonly VirtualServerRef[]): Issue[] {
  const email = alerts.email;
  if (email === undefined) return [];
  const errors: Issue[] = [];
  for (const name of Object.keys(email.instances ?? {})) {
    if (!instances.includes(name)) errors.push({ path: ['alerts', 'email', 'instances', name], message: `unknown VRRP instance "${name}"`, at: 'key' });
  }
  for (const ref of Object.keys(email.virtualServers ?? {})) {
    if (findVs(services, ref) === undefined) {
      errors.push({ path: ['alerts', 'email', 'virtualServers', ref], message: `unknown virtual server "${ref}" (an id such as tcp:192.0.2.10:443, or a name)`, at: 'key' });
    }
  }
  return errors;
}

export function alertsConfig(alerts: AlertsFile, services: readonly VirtualServerRef[]): AlertsConfig {
  const e = alerts.email;
  if (e === undefined) return {};
  const virtualServers: Record<string, boolean> = {};
  for (const [ref, on] of Object.entries(e.virtualServers ?? {})) {
    const vs = findVs(services, ref);
    if (vs !== undefined) virtualServers[vs.id] = on;
  }
  return {
    email: {
      to: [...e.to],
      from: e.from,
      server: { host: e.smtpServer, port: e.smtpPort ?? 25 },
      connectTimeoutMs: e.connectTimeout === undefined ? 30_000 : (parseDuration(e.connectTimeout) ?? 30_000),
      ...(e.helo === undefined ? {} : { helo: e.helo }),
      vrrp: e.vrrp ?? true,
      realServers: e.realServers ?? true,
      quorum: e.quorum ?? true,
      instances: { ...e.instances },
      virtualServers,
      queueSize: e.queueSize ?? 64,
    },
  };
}
