// Prometheus metrics, fed from the two sources operators see elsewhere too: the snapshot (read at scrape
// time, so /metrics never disagrees with the panel) and the event stream (for things a snapshot cannot
// count: every transition, every health check result and its latency, every reload).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { VRRP_STATES, type DirectorEvent, type DirectorSnapshot, type RateCounters } from '../director/snapshot.js';

export interface MetricsSource {
  snapshot(): DirectorSnapshot;
  subscribe(fn: (e: DirectorEvent) => void): () => void;
}

/** A registry of its own (not prom-client's global one) so several servers can live in one process. */
export function createMetrics(source: MetricsSource, opts: { processMetrics?: boolean } = {}): { registry: Registry; close: () => void } {
  const registry = new Registry();
  const registers = [registry];
  if (opts.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'lvsd_' });

  // Several gauges read the same snapshot in one scrape: take it once per scrape.
  let cached: { at: number; snap: DirectorSnapshot } | null = null;
  const snap = (): DirectorSnapshot => {
    const now = Date.now();
    if (cached === null || now - cached.at > 250) cached = { at: now, snap: source.snapshot() };
    return cached.snap;
  };

  new Gauge({
    name: 'lvsd_vrrp_state',
    help: 'VRRP instance state: 1 for the current state, 0 for the others',
    labelNames: ['instance', 'state'],
    registers,
    collect() {
      this.reset();
      for (const i of snap().vrrp) for (const s of VRRP_STATES) this.set({ instance: i.name, state: s }, i.state === s ? 1 : 0);
    },
  });
  new Gauge({
    name: 'lvsd_vrrp_priority',
    help: 'VRRP priority: base (configured) and effective (after tracking and operator failover)',
    labelNames: ['instance', 'kind'],
    registers,
    collect() {
      this.reset();
      for (const i of snap().vrrp) {
        this.set({ instance: i.name, kind: 'base' }, i.basePriority);
        this.set({ instance: i.name, kind: 'effective' }, i.effectivePriority);
      }
    },
  });
  new Gauge({
    name: 'lvsd_bgp_session_up',
    help: 'BGP sessions of the speaker lvsd drives (BIRD): 1 while Established, else 0',
    labelNames: ['session'],
    registers,
    collect() {
      this.reset();
      for (const x of snap().bgp?.sessions ?? []) this.set({ session: x.name }, x.info.startsWith('Established') ? 1 : 0);
    },
  });
  new Gauge({
    name: 'lvsd_bgp_announced',
    help: 'Prefixes of bgp.announce: 1 while this director announces it; withdrawn_by_operator 1 while an operator holds it withdrawn',
    labelNames: ['prefix', 'kind'],
    registers,
    collect() {
      this.reset();
      for (const a of snap().bgp?.announcements ?? []) {
        this.set({ prefix: a.prefix, kind: 'announced' }, a.announced ? 1 : 0);
        this.set({ prefix: a.prefix, kind: 'withdrawn_by_operator' }, a.withdrawnBy === null ? 0 : 1);
      }
    },
  });
  const transitions = new Counter({
    name: 'lvsd_vrrp_transitions_total',
    help: 'VRRP state transitions seen since lvsd started, by new state',
    labelNames: ['instance', 'to'],
    registers,
  });
  new Counter({
    name: 'lvsd_vrrp_adverts_sent_total',
    help: 'VRRP adverts sent',
    labelNames: ['instance'],
    registers,
    collect() {
      this.reset();
      for (const i of snap().vrrp) this.inc({ instance: i.name }, i.adverts.sent);
    },
  });
  new Counter({
    name: 'lvsd_vrrp_adverts_received_total',
    help: 'VRRP adverts received and accepted',
    labelNames: ['instance'],
    registers,
    collect() {
      this.reset();
      for (const i of snap().vrrp) this.inc({ instance: i.name }, i.adverts.received);
    },
  });
  new Counter({
    name: 'lvsd_vrrp_adverts_dropped_total',
    help: 'VRRP adverts dropped, by reason',
    labelNames: ['instance', 'reason'],
    registers,
    collect() {
      this.reset();
      for (const i of snap().vrrp) for (const [reason, n] of Object.entries(i.adverts.dropped)) this.inc({ instance: i.name, reason }, n);
    },
  });

  const checks = new Counter({
    name: 'lvsd_health_checks_total',
    help: 'Health check results, by outcome',
    labelNames: ['service', 'real_server', 'result'],
    registers,
  });
  const latency = new Histogram({
    name: 'lvsd_health_check_duration_seconds',
    help: 'Health check latency',
    labelNames: ['service'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  new Gauge({
    name: 'lvsd_real_server_up',
    help: 'Real server health: 1 up, 0 down, -1 unknown',
    labelNames: ['service', 'real_server'],
    registers,
    collect() {
      this.reset();
      for (const s of snap().virtualServices) {
        for (const r of s.realServers) this.set({ service: s.id, real_server: r.id }, r.health.status === 'up' ? 1 : r.health.status === 'down' ? 0 : -1);
      }
    },
  });
  new Gauge({
    name: 'lvsd_real_server_weight',
    help: 'Real server weight: configured, and effective in the dataplane (-1 when out of the table)',
    labelNames: ['service', 'real_server', 'kind'],
    registers,
    collect() {
      this.reset();
      for (const s of snap().virtualServices) {
        for (const r of s.realServers) {
          this.set({ service: s.id, real_server: r.id, kind: 'configured' }, r.weight.configured);
          this.set({ service: s.id, real_server: r.id, kind: 'effective' }, r.weight.effective ?? -1);
        }
      }
    },
  });
  new Gauge({
    name: 'lvsd_real_server_connections',
    help: 'Connections to a real server, active and inactive',
    labelNames: ['service', 'real_server', 'state'],
    registers,
    collect() {
      this.reset();
      for (const s of snap().virtualServices) {
        for (const r of s.realServers) {
          this.set({ service: s.id, real_server: r.id, state: 'active' }, r.connections.active);
          this.set({ service: s.id, real_server: r.id, state: 'inactive' }, r.connections.inactive);
        }
      }
    },
  });
  new Gauge({
    name: 'lvsd_service_quorum_up',
    help: 'Virtual server quorum: 1 met, 0 lost',
    labelNames: ['service'],
    registers,
    collect() {
      this.reset();
      for (const s of snap().virtualServices) this.set({ service: s.id }, s.quorum.up ? 1 : 0);
    },
  });
  const totals: [string, keyof RateCounters, string][] = [
    ['lvsd_service_connections_total', 'conns', 'Connections scheduled by the dataplane'],
    ['lvsd_service_in_packets_total', 'inPackets', 'Packets in'],
    ['lvsd_service_out_packets_total', 'outPackets', 'Packets out'],
    ['lvsd_service_in_bytes_total', 'inBytes', 'Bytes in'],
    ['lvsd_service_out_bytes_total', 'outBytes', 'Bytes out'],
  ];
  for (const [name, key, help] of totals) {
    new Counter({
      name,
      help: `${help} (dataplane counters)`,
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        for (const s of snap().virtualServices) if (s.counters) this.inc({ service: s.id }, s.counters[key]);
      },
    });
  }
  new Gauge({
    name: 'lvsd_service_rate',
    help: 'Dataplane rate estimates per second: cps, inPps, outPps, inBps, outBps',
    labelNames: ['service', 'rate'],
    registers,
    collect() {
      this.reset();
      for (const s of snap().virtualServices) {
        if (!s.counters) continue;
        for (const k of ['cps', 'inPps', 'outPps', 'inBps', 'outBps'] as const) this.set({ service: s.id, rate: k }, s.counters[k]);
      }
    },
  });
  // Per real server: the dataplane's own counters where it keeps them per destination (IPVS, userspace;
  // nftables counts per service only, so these series are absent there), and the last health check's
  // latency. One series per configured real server and counter: bounded by the config, not by traffic.
  const rsTotals: [string, keyof RateCounters, string][] = [
    ['lvsd_real_server_connections_total', 'conns', 'Connections scheduled to the real server'],
    ['lvsd_real_server_in_packets_total', 'inPackets', 'Packets in, to the real server'],
    ['lvsd_real_server_out_packets_total', 'outPackets', 'Packets out, from the real server'],
    ['lvsd_real_server_in_bytes_total', 'inBytes', 'Bytes in, to the real server'],
    ['lvsd_real_server_out_bytes_total', 'outBytes', 'Bytes out, from the real server'],
  ];
  for (const [name, key, help] of rsTotals) {
    new Counter({
      name,
      help: `${help} (dataplane counters)`,
      labelNames: ['service', 'real_server'],
      registers,
      collect() {
        this.reset();
        for (const s of snap().virtualServices) for (const r of s.realServers) if (r.counters) this.inc({ service: s.id, real_server: r.id }, r.counters[key]);
      },
    });
  }
  new Gauge({
    name: 'lvsd_real_server_check_latency_seconds',
    help: 'Latency of the last health check of the real server',
    labelNames: ['service', 'real_server'],
    registers,
    collect() {
      this.reset();
      for (const s of snap().virtualServices) {
        for (const r of s.realServers) if (r.health.lastCheck !== null) this.set({ service: s.id, real_server: r.id }, r.health.lastCheck.latencyMs / 1000);
      }
    },
  });
  new Gauge({
    name: 'lvsd_dataplane_info',
    help: 'The dataplane in use (value 1)',
    labelNames: ['kind'],
    registers,
    collect() {
      this.reset();
      this.set({ kind: snap().dataplane.kind }, 1);
    },
  });
  new Counter({
    name: 'lvsd_config_reloads_total',
    help: 'Config reloads (SIGHUP, apply, rollback) since start',
    registers,
    collect() {
      this.reset();
      this.inc(snap().config.reloads);
    },
  });
  const reloadResults = new Counter({
    name: 'lvsd_config_reload_results_total',
    help: 'Config reload outcomes seen since the API started',
    labelNames: ['result'],
    registers,
  });
  new Gauge({
    name: 'lvsd_config_last_reload_success',
    help: '1 when the last reload succeeded (or none happened), 0 when it failed',
    registers,
    collect() {
      this.set(snap().config.lastReload?.ok === false ? 0 : 1);
    },
  });
  const mails = new Counter({
    name: 'lvsd_alert_mails_total',
    help: 'E-mail alerts since the API started, by outcome: sent, failed (the SMTP server refused or did not answer), dropped (the queue was full)',
    labelNames: ['outcome'],
    registers,
  });
  for (const outcome of ['sent', 'failed', 'dropped']) mails.inc({ outcome }, 0);

  const unsubscribe = source.subscribe((e) => {
    switch (e.type) {
      case 'vrrp.transition':
        transitions.inc({ instance: e.instance, to: e.to });
        break;
      case 'health.result':
        checks.inc({ service: e.service, real_server: e.realServer, result: e.ok ? 'ok' : 'fail' });
        latency.observe({ service: e.service }, e.latencyMs / 1000);
        break;
      case 'config.reload':
        reloadResults.inc({ result: e.ok ? 'ok' : 'error' });
        break;
      case 'alert.mail':
        mails.inc({ outcome: e.outcome });
        break;
      default:
        break;
    }
  });
  return { registry, close: unsubscribe };
}
