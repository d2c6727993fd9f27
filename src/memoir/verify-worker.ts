import { parentPort, workerData } from 'node:worker_threads';
import { scanRange, type LineChunk, type ScanRange } from './verify-scan.js';

/**
 * One byte range of a memoir read in a worker thread for `verify` (verify-threads.ts starts it):
 * posts the range's chunks as it reads them, their columns transferred (not copied). It only
 * reads: the main thread merges the chunks in file order.
 */
export interface VerifyWorkerInput {
  /** The main thread's descriptor of the file (threads share them): the very file it opened. */
  fd: number;
  range: ScanRange;
  lazy: boolean;
  scan: boolean;
}

export type VerifyWorkerMessage = { type: 'chunk'; chunk: LineChunk } | { type: 'error'; message: string; code?: string };

const input = workerData as VerifyWorkerInput;
const port = parentPort;
if (port) {
  try {
    for (const chunk of scanRange(input.fd, input.range, { lazy: input.lazy, scan: input.scan, freshChunks: true })) {
      port.postMessage({ type: 'chunk', chunk } satisfies VerifyWorkerMessage, [chunk.line.buffer, chunk.offset.buffer, chunk.length.buffer, chunk.idHash.buffer, chunk.pyHash.buffer] as ArrayBuffer[]);
    }
  } catch (err) {
    const e = err as Error & { code?: string };
    port.postMessage({ type: 'error', message: e.message, ...(e.code ? { code: e.code } : {}) } satisfies VerifyWorkerMessage);
  }
}
