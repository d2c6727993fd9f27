import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { ConflictError, fsError } from '../errors.js';

/**
 * An advisory lock file beside the memoir (`memoir.jsonl.lock`) so kourai writers take turns.
 * Python hosts do not take it; they are safe because every writer appends whole lines with one
 * O_APPEND write. A lock left by a dead process on this host is taken over.
 */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export interface Lock {
  release(): void;
}

export function acquireLock(target: string, opts: { waitMs?: number; pollMs?: number } = {}): Lock {
  const path = `${target}.lock`;
  const deadline = Date.now() + (opts.waitMs ?? 5000);
  for (;;) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }));
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            unlinkSync(path);
          } catch {
            // already gone: nothing to release
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw fsError(err, 'memoir lock', path);
    }
    const holder = readHolder(path);
    if (holder && holder.host === hostname() && !isAlive(holder.pid)) {
      try {
        unlinkSync(path); // stale: its process is gone
      } catch {
        // someone else removed it first
      }
      continue;
    }
    if (Date.now() >= deadline) {
      const who = holder ? `pid ${holder.pid} on ${holder.host} since ${holder.since}` : 'another process';
      throw new ConflictError(`memoir is being written by ${who}: ${target}`, `retry, or remove ${path} if that process is gone`);
    }
    sleepSync(opts.pollMs ?? 25);
  }
}

function readHolder(path: string): { pid: number; host: string; since: string } | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; host?: unknown; since?: unknown };
    if (typeof v.pid === 'number' && typeof v.host === 'string') return { pid: v.pid, host: v.host, since: String(v.since) };
  } catch {
    // being written right now, or garbage
  }
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
