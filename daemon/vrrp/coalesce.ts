// Coalesced requests: one in flight at a time, and at most one more queued behind it, shared by everyone
// who asks meanwhile. The facade's snapshot refresh uses it: 255 instances entering BACKUP at start-up
// asked for 255 snapshots of 255 instances each (~38 MiB through the IPC pipe at once, which both
// processes' heaps and malloc kept afterwards; bench/vrrp-scale.ts measured lvsd's RSS at 238 MiB).

/**
 * Wraps `request` so that concurrent calls share answers. A caller always gets an answer asked after its
 * call: when one is in flight (it may have been answered before what the caller wants to see), the
 * caller gets the next one, asked once the current one settles.
 */
export function coalesced<T>(request: () => Promise<T>): () => Promise<T> {
  let inflight: Promise<T> | null = null;
  let queued: Promise<T> | null = null;
  const ask = (): Promise<T> => {
    if (inflight === null) {
      const p = request().finally(() => {
        inflight = null;
      });
      inflight = p;
      return p;
    }
    queued ??= inflight.then(
      () => undefined,
      () => undefined,
    ).then(() => {
      queued = null;
      return ask();
    });
    return queued;
  };
  return ask;
}
