// The agent check (haproxy's agent-check): connect to a small agent on the real server, optionally
// send a line, and read the one line it answers ("75%", "drain", "down #disk full", …). The agent's
// standing state (percentage, drain/maint) sticks between answers, so the probe keeps it.
//
// Alone (`type: agent`) the agent is the health check: no answer is a failure. Beside another check
// (`agent: { port }`), the other check decides up/down and the agent only adds its weight and its
// down/maint: an agent that does not answer keeps its last word (haproxy treats a silent agent so),
// while one that answers garbage fails the check with the reason, naming the agent.
import { fail, type CheckVerdict } from '../types.js';
import type { AgentCheckOptions, Endpoint } from '../options.js';
import { agentEffect, AgentLineError, applyAgentReply, INITIAL_AGENT_STATE, MAX_AGENT_LINE, parseAgentLine, type AgentState } from './agent-line.js';
import type { Probe } from './probe.js';
import { tcpExchange } from './stream.js';

function peerOf(ep: Endpoint): string {
  return ep.family === 6 ? `[${ep.host}]:${ep.port}` : `${ep.host}:${ep.port}`;
}

function effectVerdict(s: AgentState, note: string): CheckVerdict {
  const e = agentEffect(s);
  if (e.out) return fail('agent', e.why + note);
  return e.percent === undefined ? { ok: true, reason: 'ok', detail: e.why + note } : { ok: true, reason: 'ok', detail: e.why + note, weightPercent: e.percent };
}

/** `failOpen`: an agent that cannot be reached keeps its last word instead of failing the check. */
export function agentProbe(ep: Endpoint, o: AgentCheckOptions, timeoutMs: number, failOpen: boolean): Probe {
  const send = o.send === undefined ? Buffer.alloc(0) : Buffer.from(o.send.endsWith('\n') ? o.send : `${o.send}\n`, 'latin1');
  if (send.length > MAX_AGENT_LINE) throw new Error(`send: longer than ${MAX_AGENT_LINE} bytes`);
  const peer = peerOf(ep);
  const timedOut = fail('timeout', `agent ${peer}: no answer in ${timeoutMs} ms`);
  let state: AgentState = INITIAL_AGENT_STATE;
  return async (signal) => {
    const seen = { answered: false };
    const judge = (received: Buffer, ended: boolean): CheckVerdict | null => {
      const nl = received.indexOf(0x0a);
      if (nl < 0 && !ended) return null;
      const line = received.toString('latin1', 0, nl < 0 ? received.length : nl);
      if (line.trim() === '' && nl < 0) return fail('protocol', `agent ${peer}: closed the connection without a line`);
      try {
        state = applyAgentReply(state, parseAgentLine(line, peer));
      } catch (e) {
        if (e instanceof AgentLineError) return fail('protocol', e.message);
        throw e;
      }
      seen.answered = true;
      return effectVerdict(state, '');
    };
    const v = await tcpExchange(ep, { payload: send, judge, maxBytes: MAX_AGENT_LINE + 2, tooLong: fail('protocol', `agent ${peer}: answer longer than ${MAX_AGENT_LINE + 2} bytes`), timedOut }, signal);
    if (v.ok || seen.answered || v.reason === 'protocol' || !failOpen) return v;
    return effectVerdict(state, `; agent ${peer} silent (${v.detail}): last answer kept`);
  };
}

/** The main check decides up/down; when it passes, the agent's verdict (weight, down/maint) stands. */
export function withAgent(main: Probe, agent: Probe): Probe {
  return async (signal) => {
    const [m, a] = await Promise.all([main(signal), agent(signal)]);
    if (!m.ok) return m;
    return a.ok ? { ...a, detail: m.detail === 'ok' ? a.detail : `${m.detail}; ${a.detail}` } : a;
  };
}
