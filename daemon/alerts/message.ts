// The e-mail alerts lvsd sends, worded as keepalived 2.2.7 words them (measured: keepalived 2.2.7 in the guest,
// delivering through OpenSMTPD to a maildir; docs/alerts.md lists every message). Pure: an alert in, the subject
// and body out; who sends, to whom and when is the mail supervisor's business (director/mail-supervisor.ts).
//
//   [<router_id>] VRRP Instance VI_1 - Entering MASTER state        => VRRP Instance is now owning VRRP VIPs <=
//   [<router_id>] Realserver [127.0.0.1]:tcp:8082 of virtual server [10.9.0.100]:tcp:80 - DOWN
//                                                                    => TCP CHECK failed on service <=
//   [<router_id>] Virtualserver [10.9.0.100]:tcp:80 - DOWN           => Lost quorum 2+0=2 <= 1 <=

/** Where a virtual or real server is, as keepalived prints it: "[10.9.0.100]:tcp:80", "FWM 7". */
export type Endpoint = { address: string; protocol: string; port: number } | { fwmark: number };

export type Alert =
  | { kind: 'vrrp'; instance: string; state: 'MASTER' | 'BACKUP' | 'FAULT' }
  | { kind: 'realServer'; virtualServer: Endpoint; realServer: Endpoint; up: boolean; check: string }
  | { kind: 'quorum'; virtualServer: Endpoint; up: boolean; quorum: number; hysteresis: number; alive: number };

export interface AlertText {
  subject: string;
  text: string;
}

/** keepalived's FMT_VS / FMT_RS: the address in brackets (IPv6 alike), then protocol and port. */
export function endpointText(e: Endpoint): string {
  return 'fwmark' in e ? `FWM ${e.fwmark}` : `[${e.address}]:${e.protocol}:${e.port}`;
}

/** keepalived names its checkers TCP, HTTP, SSL, SMTP, UDP, DNS, MISC, FILE, PING in these lines. */
const CHECK_WORD: Record<string, string> = { tcp: 'TCP', http: 'HTTP', https: 'SSL', smtp: 'SMTP', udp: 'UDP', dns: 'DNS', exec: 'MISC', agent: 'AGENT' };

export function checkWord(type: string): string {
  return CHECK_WORD[type] ?? type.toUpperCase();
}

/** The subject and body of one alert from the director named `node` (keepalived's router_id). */
export function alertText(node: string, a: Alert): AlertText {
  switch (a.kind) {
    case 'vrrp':
      return {
        subject: `[${node}] VRRP Instance ${a.instance} - Entering ${a.state} state`,
        text: `=> VRRP Instance is ${a.state === 'MASTER' ? 'now' : 'no longer'} owning VRRP VIPs <=\n`,
      };
    case 'realServer':
      return {
        subject: `[${node}] Realserver ${endpointText(a.realServer)} of virtual server ${endpointText(a.virtualServer)} - ${a.up ? 'UP' : 'DOWN'}`,
        text: `=> ${checkWord(a.check)} CHECK ${a.up ? 'succeed' : 'failed'} on service <=\n`,
      };
    case 'quorum':
      // keepalived prints "Q+H=Q+H <= alive" in both directions (the log line differs; the mail does not).
      return {
        subject: `[${node}] Virtualserver ${endpointText(a.virtualServer)} - ${a.up ? 'UP' : 'DOWN'}`,
        text: `=> ${a.up ? 'Gained' : 'Lost'} quorum ${a.quorum}+${a.hysteresis}=${a.quorum + a.hysteresis} <= ${a.alive} <=\n`,
      };
  }
}
