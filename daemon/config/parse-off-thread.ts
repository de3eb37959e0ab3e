// A large config parsed and validated on a worker thread, so the API (and the health checks, the VRRP
// socket, every other route) keep answering while it is checked: a 1 MiB config takes ~0.6 s of CPU, most of it
// in the YAML parser. Small texts are parsed inline: a round trip to the worker costs more than they do.
// The worker starts on first use and is unref'd (it never keeps the daemon alive); if it cannot start or
// dies, the text is parsed inline, so the answer is the same either way.
import { Worker } from 'node:worker_threads';
import { loadConfigText, type LoadResult } from './load.js';

/** Below this many UTF-16 units (~32 KiB) a text is parsed on the calling thread. */
export const INLINE_BELOW = 32 * 1024;

let worker: Worker | undefined;
let nextId = 1;
const pending = new Map<number, { resolve: (r: LoadResult) => void; text: string; file: string }>();

/** The worker `dead` died (an error, then its exit: called twice): its pending texts are parsed inline. */
function fallBack(dead: Worker): void {
  if (worker === dead) worker = undefined; // not a newer worker started in between

  for (const [id, p] of pending) {
    pending.delete(id);
    p.resolve(loadConfigText(p.text, p.file));
  }
}

function started(): Worker | undefined {
  if (worker !== undefined) return worker;
  try {
    // A heap of its own, bounded: past it the worker dies and the text is parsed inline (fallBack).
    const w = new Worker(new URL('./parse-worker.js', import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: 1024 } });
    w.unref();
    w.on('message', (m: { id: number; result: LoadResult }) => {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (pending.size === 0) w.unref();
      p?.resolve(m.result);
    });
    w.on('error', () => { fallBack(w); });
    w.on('exit', () => { fallBack(w); });
    worker = w;
  } catch {
    return undefined;
  }
  return worker;
}

/** loadConfigText, off the calling thread for a large text. The result is the same as inline. */
export function parseConfigOffThread(text: string, file: string): Promise<LoadResult> {
  const w = text.length < INLINE_BELOW ? undefined : started();
  if (w === undefined) return Promise.resolve(loadConfigText(text, file));
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, { resolve, text, file });
    w.ref(); // an answer is awaited: the process stays up for it
    w.postMessage({ id, text, file });
  });
}
