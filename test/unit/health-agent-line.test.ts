// The agent line parser and its fold: every form haproxy's agent-check defines, in any order and with
// every separator, and garbage refused with an error that names the agent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  agentEffect, AgentLineError, applyAgentReply, INITIAL_AGENT_STATE, parseAgentLine, scaledWeight, type AgentState,
} from '../../daemon/health/checkers/agent-line.js';

const PEER = '10.0.1.11:9999';
const parse = (line: string) => parseAgentLine(line, PEER);

test('agent line: each word alone', () => {
  assert.deepEqual(parse('75%\n'), { reason: '', words: ['75%'], percent: 75 });
  assert.deepEqual(parse('0%'), { reason: '', words: ['0%'], percent: 0 });
  assert.equal(parse('150%').percent, 100, 'capped at 100 %');
  for (const w of ['up', 'UP', 'Up']) assert.equal(parse(w).operational, 'up');
  for (const w of ['down', 'stopped', 'fail', 'FAIL']) assert.equal(parse(w).operational, 'down');
  for (const w of ['ready', 'drain', 'maint'] as const) assert.equal(parse(w).admin, w);
  assert.equal(parse('maxconn:30').maxconn, 30);
});

test('agent line: several words, any order, spaces tabs and commas, CR LF, a #reason', () => {
  assert.deepEqual(parse('up 50%\r\n'), { reason: '', words: ['up', '50%'], operational: 'up', percent: 50 });
  assert.deepEqual(parse('50%,ready\tup'), { reason: '', words: ['50%', 'ready', 'up'], operational: 'up', admin: 'ready', percent: 50 });
  assert.deepEqual(parse('down #disk full, 98%\n'), { reason: 'disk full, 98%', words: ['down'], operational: 'down' });
  assert.deepEqual(parse(' drain , 10% # going away '), { reason: 'going away', words: ['drain', '10%'], admin: 'drain', percent: 10 });
  assert.deepEqual(parse('up up'), { reason: '', words: ['up', 'up'], operational: 'up' }, 'a repeated word is fine');
});

test('agent line: garbage is refused with the peer named', () => {
  const cases: [string, RegExp][] = [
    ['', /^agent 10\.0\.1\.11:9999: empty line$/],
    ['\r\n', /empty line/],
    ['# only a comment', /only a comment, no state or weight/],
    ['HTTP/1.1 400 Bad Request', /unknown word "HTTP\/1\.1"/],
    ['75', /unknown word "75"/],
    ['-5%', /unknown word "-5%"/],
    ['7.5%', /unknown word "7\.5%"/],
    ['up down', /contradictory states/],
    ['drain maint', /contradictory states/],
    ['maxconn:x', /unknown word "maxconn:x"/],
    ['up\x00', /not an ASCII text line/],
    ['up é', /not an ASCII text line/],
    ['x'.repeat(600), /longer than 512 bytes/],
  ];
  for (const [line, re] of cases) {
    assert.throws(() => parse(line), (e: unknown) => e instanceof AgentLineError && e.peer === PEER && e.message.startsWith(`agent ${PEER}: `) && re.test(e.message), JSON.stringify(line));
  }
});

test('agent state: admin state and percentage stick, the operational word does not', () => {
  const fold = (...lines: string[]): AgentState => lines.reduce((s, l) => applyAgentReply(s, parse(l)), INITIAL_AGENT_STATE);
  assert.deepEqual(agentEffect(INITIAL_AGENT_STATE), { out: false, percent: undefined, why: 'agent: up' });
  assert.deepEqual(agentEffect(fold('75%')), { out: false, percent: 75, why: 'agent: 75%' });
  assert.deepEqual(agentEffect(fold('75%', 'up')), { out: false, percent: 75, why: 'agent: 75%' }, 'percentage sticks');
  assert.deepEqual(agentEffect(fold('75%', 'drain')), { out: false, percent: 0, why: 'agent: drain' }, 'drain is weight 0, not down');
  assert.deepEqual(agentEffect(fold('75%', 'drain', '40%')), { out: false, percent: 0, why: 'agent: drain' }, 'drain sticks over a new percentage');
  assert.deepEqual(agentEffect(fold('75%', 'drain', 'ready')), { out: false, percent: 75, why: 'agent: 75%' }, 'ready ends drain');
  assert.deepEqual(agentEffect(fold('maint #upgrade')), { out: true, why: 'agent: maint (upgrade)' });
  assert.deepEqual(agentEffect(fold('maint', 'up')), { out: true, why: 'agent: maint' }, 'maint sticks until ready');
  assert.deepEqual(agentEffect(fold('maint', 'ready')), { out: false, percent: undefined, why: 'agent: up' });
  assert.deepEqual(agentEffect(fold('down #oom')), { out: true, why: 'agent: down (oom)' });
  assert.deepEqual(agentEffect(fold('down', '60%')), { out: false, percent: 60, why: 'agent: 60%' }, 'an answer without down is up again');
});

test('agent weight: a percentage of the configured weight, never 0 unless asked', () => {
  assert.equal(scaledWeight(100, undefined), 100);
  assert.equal(scaledWeight(100, 75), 75);
  assert.equal(scaledWeight(3, 50), 2, 'rounded');
  assert.equal(scaledWeight(1, 1), 1, 'a tiny percentage keeps the server in rotation');
  assert.equal(scaledWeight(100, 0), 0);
  assert.equal(scaledWeight(0, 50), 0);
});
