// The worker side of parseConfigOffThread (parse-off-thread.ts): parses and validates each text it is
// sent, as loadConfigText does on the main thread, and posts the result back (structured clone).
import { parentPort } from 'node:worker_threads';
import { loadConfigText } from './load.js';

parentPort?.on('message', (m: { id: number; text: string; file: string }) => {
  parentPort?.postMessage({ id: m.id, result: loadConfigText(m.text, m.file) });
});
