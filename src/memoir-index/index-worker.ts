import { parentPort, workerData } from 'node:worker_threads';
import { encodeRows, fileHashes, type FileHashes, type RowBatch, type RowContent } from './index-rows.js';

/**
 * The parsing half of a bulk index build (index-pipeline.ts starts it): reads and parses a fresh
 * file into row batches while the main thread inserts the previous ones. `credits` bounds how far
 * it runs ahead (memory stays a few batches, whatever the file size). Then it hashes what it read.
 */
export interface WorkerInput {
  /** The main thread's descriptor of the file (threads share them): the very file it checked. */
  fd: number;
  untilOffset: number;
  batchEntries: number;
  /** What the batches carry (EncodeOptions.content). */
  content: RowContent;
  /** Hash the file's chunks at the end (the index records them; the lazy full-text build does not). */
  hashes: boolean;
  /** Int32Array over a SharedArrayBuffer: batches the main thread is ready to receive. */
  credits: SharedArrayBuffer;
}

export type WorkerMessage =
  | { type: 'batch'; batch: RowBatch }
  | { type: 'end'; hashes: FileHashes | null }
  | { type: 'error'; message: string; code?: string };

const input = workerData as WorkerInput;
const port = parentPort;
if (port) {
  const credits = new Int32Array(input.credits);
  const fd = input.fd;
  try {
    let end = 0;
    for (const batch of encodeRows(fd, {
      fromOffset: 0,
      fromLine: 1,
      untilOffset: input.untilOffset,
      batchEntries: input.batchEntries,
      priorOccurrences: () => 0,
      content: input.content,
    })) {
      while (Atomics.load(credits, 0) <= 0) Atomics.wait(credits, 0, 0);
      Atomics.sub(credits, 0, 1);
      end = batch.endBytes;
      // Copied, not transferred: detaching an ArrayBuffer in this thread invalidates V8's
      // "no buffer is ever detached" guarantee for the whole isolate, and every optimised function
      // that reads a typed array (the scanner, the line reader) is thrown away and re-optimised
      // with detach checks (`--trace-deopt`: 33 "marking dependent code" per 100k build).
      port.postMessage({ type: 'batch', batch } satisfies WorkerMessage);
    }
    port.postMessage({ type: 'end', hashes: input.hashes ? fileHashes(fd, end, 0) : null } satisfies WorkerMessage);
  } catch (err) {
    const e = err as Error & { code?: string };
    port.postMessage({
      type: 'error',
      message: e.message,
      ...(e.code ? { code: e.code } : {}),
    } satisfies WorkerMessage);
  }
}
