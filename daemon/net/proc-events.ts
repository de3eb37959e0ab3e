// A socket on the kernel's process events connector (proc-connector.ts has the bytes). The kernel has the
// connector in the initial network namespace only: elsewhere the subscription is refused (ECONNREFUSED,
// keepalived 2.2.7 logs "Failed to set/clear process event listen - errno 111") and no event comes.
// The package's own files, not its index: the index loads every family it knows (nl80211, WireGuard: ~110 ms
// of CPU at start as an ES import); these load only what lvsd uses.
import { RawNetlinkSocket } from 'netlink/dist/raw.js';
import { CN_IDX_PROC, decodeProcEvents, encodeListen, NETLINK_CONNECTOR, type ProcEvent } from './proc-connector.js';

export interface ProcEventHandlers {
  event(e: ProcEvent): void;
  /** The subscription failed, or events were lost (ENOBUFS: the receive buffer overflowed). */
  error(e: Error & { code?: string }): void;
}

export class ProcEvents {
  private readonly sock: RawNetlinkSocket;

  /** `recvBufferSize`: keepalived's process_monitor_rcv_bufs (a burst of exits fills a small buffer). */
  constructor(private readonly on: ProcEventHandlers, recvBufferSize = 1 << 20) {
    this.sock = new RawNetlinkSocket(NETLINK_CONNECTOR, { recvBufferSize, sendBufferSize: 1 << 16 });
    this.sock.addMembership(CN_IDX_PROC);
    this.sock.on('message', (buf) => {
      let events: ProcEvent[];
      try {
        events = decodeProcEvents(buf);
      } catch (e) {
        on.error(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      for (const ev of events) {
        if (ev.type === 'ack' && ev.errno !== 0) on.error(Object.assign(new Error(`process events subscription refused: errno ${ev.errno}`), { code: 'EREFUSED' }));
        else on.event(ev);
      }
    });
    this.sock.on('error', (e) => {
      on.error(e);
    });
  }

  /** Asks the kernel to send process events (to every subscriber of CN_IDX_PROC). */
  listen(): void {
    this.sock.send(encodeListen(true, this.sock.address().port), {}, (e) => {
      if (e !== undefined) this.on.error(e);
    });
  }

  close(): void {
    try {
      // The kernel counts listeners: say we stop, or it keeps building events for nobody.
      this.sock.send(encodeListen(false, this.sock.address().port), {}, () => {
        this.sock.close();
      });
    } catch {
      this.sock.close();
    }
  }

  unref(): void {
    this.sock.unref();
  }
}
