import { createHash } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import { openForReading } from '../file/reader.js';

/**
 * What `memoir verify` checked, remembered: the memoir's size and a CRC-32 of each 1 MiB block, in
 * the cache beside the index (`cache/verified/<key>.json`, one small file per memoir). The next
 * verify reads the memoir once more and compares the bytes the last one saw, so any change that is
 * not an append (an edit in place, even of the same length; a truncation; a replaced file) is
 * reported whether the memoir was ever indexed or not. A cache: losing it loses that comparison
 * and nothing else. CRC-32 (~1 GB/s; the pass is ~8 % of a verify's CPU) catches accidental and hand
 * edits; someone who rewrites the memoir and this cache together is not caught by it.
 */
export const FINGERPRINT_FORMAT = 'kourai.verify-fingerprint/1';
export const FINGERPRINT_BLOCK = 1 << 20;

export interface Fingerprint {
  format: typeof FINGERPRINT_FORMAT;
  path: string;
  size: number;
  block_bytes: number;
  /** CRC-32 of each block [k·block_bytes, min((k+1)·block_bytes, size)). */
  blocks: number[];
  verified_at: string;
}

export interface FingerprintCheck {
  size: number;
  blocks: number[];
  /** Where the memoir first differs from what the last verify saw (null: the same bytes, perhaps with more appended). */
  change: { offset: number; message: string } | null;
}

/** The directory of a home's fingerprints: beside the index, a cache too. */
export function fingerprintDir(home: string): string {
  return join(home, 'cache', 'verified');
}

/** Where the fingerprint of `memoir` lives in `dir` (the cache's `verified/`). */
export function fingerprintPath(dir: string, memoir: string): string {
  return join(dir, `${createHash('sha256').update(resolve(memoir)).digest('hex').slice(0, 32)}.json`);
}

/** The fingerprint stored for `memoir`, or null when there is none or it is unreadable (then nothing is compared). */
export function readFingerprint(dir: string, memoir: string): Fingerprint | null {
  let doc: Partial<Fingerprint>;
  try {
    doc = JSON.parse(readFileSync(fingerprintPath(dir, memoir), 'utf8')) as Partial<Fingerprint>;
  } catch {
    return null;
  }
  const ok =
    doc.format === FINGERPRINT_FORMAT &&
    doc.block_bytes === FINGERPRINT_BLOCK &&
    Number.isSafeInteger(doc.size) &&
    Array.isArray(doc.blocks) &&
    doc.blocks.length === Math.ceil((doc.size as number) / FINGERPRINT_BLOCK) &&
    doc.blocks.every((b) => Number.isInteger(b)) &&
    typeof doc.verified_at === 'string';
  return ok ? (doc as Fingerprint) : null;
}

/**
 * Stores a fingerprint; false when it cannot be written (a read-only home, a full disk): verify
 * still answers, it only cannot remember. No fsync: a torn file reads as none.
 */
export function writeFingerprint(dir: string, fp: Fingerprint): boolean {
  const file = fingerprintPath(dir, fp.path);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(tmp, `${JSON.stringify(fp)}\n`);
    renameSync(tmp, file);
    return true;
  } catch {
    rmSync(tmp, { force: true });
    return false;
  }
}

/** Forgets the fingerprint of `memoir` (a change was checked and accepted: `memoir index --rebuild`). */
export function forgetFingerprint(dir: string, memoir: string): void {
  rmSync(fingerprintPath(dir, memoir), { force: true });
}

/**
 * Reads `memoir` once: its block CRCs now, and the first place it differs from `previous`. `upTo`:
 * where the bytes a writer may still cut begin (a torn tail, a dead writer's batch): only the bytes
 * before it are remembered, as only those stay.
 */
export function fingerprintFile(memoir: string, previous: Fingerprint | null, upTo = Infinity): FingerprintCheck {
  const fd = openForReading(memoir);
  try {
    const size = Math.min(fstatSync(fd).size, upTo);
    const block = Buffer.allocUnsafe(FINGERPRINT_BLOCK);
    const blocks: number[] = [];
    const since = previous ? ` since \`memoir verify\` last checked it (${previous.verified_at})` : '';
    let change: FingerprintCheck['change'] =
      previous && size < previous.size
        ? {
            offset: size,
            message: `the memoir is ${previous.size - size} bytes shorter${since} (${previous.size} bytes then, ${size} now): not an append`,
          }
        : null;
    for (let at = 0; at < size; at += FINGERPRINT_BLOCK) {
      const want = Math.min(FINGERPRINT_BLOCK, size - at);
      let got = 0;
      while (got < want) {
        const n = readSync(fd, block, got, want - got, at + got);
        if (n <= 0) break;
        got += n;
      }
      const bytes = block.subarray(0, got);
      blocks.push(crc32(bytes));
      if (previous && !change && at < previous.size) {
        const k = at / FINGERPRINT_BLOCK;
        const seen = Math.min(FINGERPRINT_BLOCK, previous.size - at); // the bytes of this block the last verify saw
        const now = seen === got ? (blocks[k] as number) : crc32(bytes.subarray(0, Math.min(seen, got)));
        if (got < seen || now !== previous.blocks[k])
          change = { offset: at, message: `bytes ${at}–${at + seen} changed${since}: not an append` };
      }
    }
    return { size, blocks, change };
  } finally {
    closeSync(fd);
  }
}
