import { parentPort, workerData } from 'node:worker_threads';
import { READ_BUFFER_BYTES } from '../file/reader.js';
import { ScannedLine } from '../format/scan/canonical-line.js';
import { claimBlock, READ_AHEAD, unclaimedFrom } from './verify-blocks.js';
import { scanRange, type LineChunk, type ScanRange } from './verify-scan.js';

/**
 * A worker thread of `verify` (verify-threads.ts starts it): claims blocks of a memoir one at a
 * time (the main thread and the other workers claim from the same table) and posts each block's
 * chunks as it reads them. It only reads: the main thread merges the blocks in file order.
 */
export interface VerifyWorkerInput {
  /** The main thread's descriptor of the file (threads share them): the very file it opened. */
  fd: number;
  blocks: ScanRange[];
  /** Int32 per block: 0 = unclaimed, else the claiming thread's id (verify-blocks.ts). */
  owners: SharedArrayBuffer;
  /** Int32: the blocks the main thread has merged (READ_AHEAD). */
  merged: SharedArrayBuffer;
  id: number;
  lazy: boolean;
  scan: boolean;
  /** Tests: fail after posting this many chunks. */
  failAfter?: number;
}

export type VerifyWorkerMessage =
  | { type: 'chunk'; block: number; chunk: LineChunk }
  | { type: 'done' }
  | { type: 'error'; message: string; code?: string };

const input = workerData as VerifyWorkerInput;
const port = parentPort;
if (port) {
  try {
    const owners = new Int32Array(input.owners);
    let posted = 0;
    const scanned = new ScannedLine(); // one scanner state and one read buffer for every range
    const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    const merged = new Int32Array(input.merged);
    for (let from = 0; ;) {
      const upTo = Atomics.load(merged, 0);
      const k = claimBlock(owners, from, input.id, upTo + READ_AHEAD);
      if (k < 0) {
        if (!unclaimedFrom(owners, from)) break;
        Atomics.wait(merged, 0, upTo, 200); // until the main thread merges another block
        continue;
      }
      from = k + 1;
      for (const chunk of scanRange(input.fd, input.blocks[k] as ScanRange, {
        lazy: input.lazy,
        scan: input.scan,
        scanned,
        buffer,
        freshChunks: true,
      })) {
        // Copied, not transferred: the first ArrayBuffer detached in a thread throws away every
        // optimized function there that reads a typed array (V8's detaching protector), the
        // scanner included, and the recompiled code checks for detachment on every access.
        if (posted++ === input.failAfter) throw new Error('planted failure (test)');
        port.postMessage({ type: 'chunk', block: k, chunk } satisfies VerifyWorkerMessage);
      }
    }
    port.postMessage({ type: 'done' } satisfies VerifyWorkerMessage);
  } catch (err) {
    const e = err as Error & { code?: string };
    port.postMessage({
      type: 'error',
      message: e.message,
      ...(e.code ? { code: e.code } : {}),
    } satisfies VerifyWorkerMessage);
  }
}
