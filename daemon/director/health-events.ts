// The health monitor's events as the director publishes them. The monitor logs each transition itself (once);
// here they become DirectorEvents for the API, the panel and /metrics, and every one asks for a new table.
import type { HealthMonitor } from '../health/monitor.js';
import { parseTargetKey } from '../state/target-key.js';
import type { DirectorEventInput } from './snapshot.js';

export function publishHealth(monitor: HealthMonitor, emit: (e: DirectorEventInput) => void, changed: (serviceId: string) => void): void {
  monitor.on('transition', (e) => {
    const { service, realServer = '' } = parseTargetKey(e.id);
    emit({ type: 'health.change', service, realServer, status: e.to, reason: `${e.reason}: ${e.detail}` });
    changed(service);
  });
  monitor.on('weight', (e) => {
    const { service, realServer = '' } = parseTargetKey(e.id);
    emit({ type: 'health.weight', service, realServer, weight: e.weight, previous: e.previous, reason: e.detail });
    changed(service);
  });
  monitor.on('quorum', (e) => {
    emit({ type: 'quorum.change', service: e.service, up: e.up, aliveWeight: e.aliveWeight });
    changed(e.service);
  });
}
