// The agent's answer (haproxy's agent-check protocol): one ASCII line of words separated by spaces,
// tabs or commas, in any order, optionally ended by CR and/or LF, and an optional `#` reason that
// runs to the end of the line. Pure: a line in, a reply (or an AgentLineError naming the peer) out,
// and a fold of replies into the agent's standing state.
//
//   75%                  weight: 75 % of the configured weight (sticks until the next percentage)
//   up                   operational state: the agent says the server works
//   down stopped fail    operational state: the server must leave rotation
//   ready                administrative state: back from drain or maint
//   drain                administrative state: weight 0 (established connections continue)
//   maint                administrative state: out of rotation
//   maxconn:N            accepted and ignored (IPVS has no per-check connection limit to set)

export type AgentOperational = 'up' | 'down';
export type AgentAdmin = 'ready' | 'drain' | 'maint';

export interface AgentReply {
  /** Absent when the line named no operational word. */
  operational?: AgentOperational;
  admin?: AgentAdmin;
  /** 0..100 (larger values are accepted and capped, as a weight cannot exceed 100 %). */
  percent?: number;
  maxconn?: number;
  /** The text after `#`, trimmed; '' when absent. */
  reason: string;
  /** The words as sent, for events and logs. */
  words: string[];
}

/** The agent's standing state: what its replies so far add up to. */
export interface AgentState {
  operational: AgentOperational;
  admin: AgentAdmin;
  /** undefined = no percentage seen yet: the configured weight. */
  percent: number | undefined;
  reason: string;
}

export const INITIAL_AGENT_STATE: AgentState = Object.freeze({ operational: 'up', admin: 'ready', percent: undefined, reason: '' });

export class AgentLineError extends Error {
  constructor(
    readonly peer: string,
    detail: string,
  ) {
    super(`agent ${peer}: ${detail}`);
    this.name = 'AgentLineError';
  }
}

/** An agent answer is one short line; anything longer is not an agent. */
export const MAX_AGENT_LINE = 512;

const OPERATIONAL: Readonly<Record<string, AgentOperational>> = { up: 'up', down: 'down', stopped: 'down', fail: 'down' };
const ADMIN: Readonly<Record<string, AgentAdmin>> = { ready: 'ready', drain: 'drain', maint: 'maint' };

function show(s: string): string {
  return JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s);
}

/** Parses one agent line. `peer` ("10.0.1.11:9999") names the agent in every error. */
export function parseAgentLine(line: string, peer: string): AgentReply {
  const text = line.replace(/[\r\n]+$/, '');
  if (text.length > MAX_AGENT_LINE) throw new AgentLineError(peer, `line longer than ${MAX_AGENT_LINE} bytes`);
  if (/[\x00-\x08\x0a-\x1f\x7f-\uffff]/.test(text)) throw new AgentLineError(peer, `not an ASCII text line: ${show(text)}`);
  const hash = text.indexOf('#');
  const body = hash >= 0 ? text.slice(0, hash) : text;
  const reason = hash >= 0 ? text.slice(hash + 1).trim() : '';
  const words = body.split(/[ \t,]+/).filter((w) => w !== '');
  if (words.length === 0) throw new AgentLineError(peer, hash >= 0 ? `only a comment, no state or weight: ${show(text)}` : 'empty line');
  const reply: AgentReply = { reason, words };
  for (const raw of words) {
    const w = raw.toLowerCase();
    const pct = /^(\d{1,6})%$/.exec(w);
    if (pct !== null) {
      reply.percent = Math.min(100, Number(pct[1]));
      continue;
    }
    const mc = /^maxconn:(\d{1,9})$/.exec(w);
    if (mc !== null) {
      reply.maxconn = Number(mc[1]);
      continue;
    }
    const op = OPERATIONAL[w];
    if (op !== undefined) {
      if (reply.operational !== undefined && reply.operational !== op) throw new AgentLineError(peer, `contradictory states in ${show(text)}`);
      reply.operational = op;
      continue;
    }
    const admin = ADMIN[w];
    if (admin !== undefined) {
      if (reply.admin !== undefined && reply.admin !== admin) throw new AgentLineError(peer, `contradictory states in ${show(text)}`);
      reply.admin = admin;
      continue;
    }
    throw new AgentLineError(peer, `unknown word ${show(raw)} in ${show(text)} (expected N%, up, down, stopped, fail, ready, drain, maint, maxconn:N, #reason)`);
  }
  return reply;
}

/**
 * Folds a reply into the standing state. The administrative state and the percentage stick until the
 * agent changes them (haproxy's semantics); a reply without an operational word means "up": the agent
 * answered and did not say the server is down.
 */
export function applyAgentReply(s: AgentState, r: AgentReply): AgentState {
  return {
    operational: r.operational ?? 'up',
    admin: r.admin ?? s.admin,
    percent: r.percent ?? s.percent,
    reason: r.reason,
  };
}

/** What the state means for the real server: out of rotation, or in at a percentage of its weight. */
export type AgentEffect = { out: true; why: string } | { out: false; percent: number | undefined; why: string };

export function agentEffect(s: AgentState): AgentEffect {
  const because = s.reason === '' ? '' : ` (${s.reason})`;
  if (s.admin === 'maint') return { out: true, why: `agent: maint${because}` };
  if (s.operational === 'down') return { out: true, why: `agent: down${because}` };
  if (s.admin === 'drain') return { out: false, percent: 0, why: `agent: drain${because}` };
  return { out: false, percent: s.percent, why: `agent: ${s.percent === undefined ? 'up' : `${s.percent}%`}${because}` };
}

/** The weight a percentage gives: rounded, and never 0 unless the agent asked for 0 % (or drain). */
export function scaledWeight(configured: number, percent: number | undefined): number {
  if (percent === undefined) return configured;
  if (percent === 0 || configured === 0) return 0;
  return Math.max(1, Math.round((configured * percent) / 100));
}
