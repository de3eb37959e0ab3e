// Quorum per virtual server with keepalived's hysteresis. Pure.
// keepalived: the service is "up" while the summed weight of live real servers is at least `quorum`;
// once down it comes back only at quorum + hysteresis, and once up it goes down only below
// quorum - hysteresis. Below quorum the sorry server takes over.

export interface QuorumOptions {
  /** Minimum total weight of live real servers (keepalived default 1). */
  quorum: number;
  /** Tolerance in weight units around the quorum (keepalived default 0). */
  hysteresis: number;
}

/** Quorum state at start: no history, so no hysteresis band. */
export function initialQuorum(aliveWeight: number, opts: QuorumOptions): boolean {
  return aliveWeight >= opts.quorum;
}

/** Next quorum state given the current one and the live weight. */
export function nextQuorum(current: boolean, aliveWeight: number, opts: QuorumOptions): boolean {
  if (current) return aliveWeight >= opts.quorum - opts.hysteresis;
  return aliveWeight >= opts.quorum + opts.hysteresis;
}
