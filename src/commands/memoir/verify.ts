import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { kouraiHome, type Ctx } from '../../context.js';
import { CancelledError, EnvironmentError } from '../../errors.js';
import { resolveMemoirs } from '../../memoir/file/discover.js';
import { unfinishedWrite } from '../../memoir/file/journal-status.js';
import { verifyMemoirs, type Problem } from '../../memoir/verify/verify.js';
import {
  fingerprintDir,
  fingerprintFile,
  FINGERPRINT_BLOCK,
  FINGERPRINT_FORMAT,
  readFingerprint,
  writeFingerprint,
} from '../../memoir/verify/fingerprint.js';
import { colors } from '../../output/color.js';
import { progress } from '../../output/progress.js';
import { collectWhenGrown } from '../../runtime/gc.js';
import type { MemoirIndex } from '../../memoir-index/memoir-index.js';
import { fastOptions } from '../spec.js';
import { verify as spec } from './commands.js';
import { defineCommand, type LazyOptions } from '../types.js';
import type { options as OptionsSchema } from './verify-options.js';
import { note, warn } from '../../output/notice.js';
import { plural } from '../../format.js';

/** verify-options.ts without zod (test/commands/fast-options.test.ts holds the two together). */
export const fastVerifyOptions = fastOptions(spec, {});

const options: LazyOptions<typeof OptionsSchema> = {
  fast: fastVerifyOptions,
  schema: async () => (await import('./verify-options.js')).options,
};

export interface VerifyResult {
  ok: boolean;
  memoirs: number;
  entries: number;
  errors: number;
  warnings: number;
  problems: Problem[];
}

/**
 * Where the home's index lives: store/memoir-index.ts `indexPath` (a test holds them equal), not
 * imported because that module loads SQLite, which a home without an index never needs.
 */
export const indexFileOf = (home: string): string => join(home, 'cache', 'index.db');

/**
 * Compares the memoir with what the last verify saw, and remembers what this one saw: a change that
 * is not an append is a problem (unless the index already reported it), and is kept unremembered,
 * so it is reported until it is acknowledged like the index's (`memoir index --rebuild`).
 */
function remember(dir: string, path: string, now: Date, found: readonly Problem[]): Problem[] {
  const cut = found
    .filter((p) => (p.kind === 'torn_tail' || p.kind === 'uncommitted_batch') && p.offset !== null)
    .map((p) => p.offset as number);
  const previous = readFingerprint(dir, path);
  const check = fingerprintFile(path, previous, Math.min(Infinity, ...cut));
  if (check.change) {
    if (found.some((p) => p.kind === 'not_append')) return [];
    return [
      {
        path,
        line: null,
        offset: check.change.offset,
        kind: 'not_append',
        severity: 'error',
        message: check.change.message,
        fix: acknowledge(path),
      },
    ];
  }
  writeFingerprint(dir, {
    format: FINGERPRINT_FORMAT,
    path: resolve(path),
    size: check.size,
    block_bytes: FINGERPRINT_BLOCK,
    blocks: check.blocks,
    verified_at: now.toISOString(),
  });
  return [];
}

/** `KOURAI_VERIFY_THREADS`: threads that read each memoir over 8 MiB (default: one per idle core for memoirs of 256 MiB or more, else one; 1 = the main thread alone). */
export function verifyThreads(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env.KOURAI_VERIFY_THREADS;
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 64)
    throw new EnvironmentError(
      `KOURAI_VERIFY_THREADS=${raw}: not a whole number from 1 to 64`,
      'unset it for the default (one thread per idle core on memoirs of 256 MiB or more)',
    );
  return n;
}

const acknowledge = (path: string): string => `kourai memoir index --rebuild --memoir ${path}`;

/**
 * What the index says about a file it has seen: a change that is not an append (every indexed
 * byte re-hashed), and earlier such changes not acknowledged yet. Both are cleared by rebuilding
 * the file's index once the change has been checked.
 */
async function indexedProblems(
  index: MemoirIndex,
  path: string,
  pause: (done: number) => Promise<void>,
): Promise<Problem[]> {
  const out: Problem[] = [];
  const now = await index.checkIndexedBytes(path, pause);
  if (now)
    out.push({
      path,
      line: null,
      offset: now.offset,
      kind: 'not_append',
      severity: 'error',
      message: now.message,
      fix: acknowledge(path),
    });
  for (const ev of index.integrityEvents([path])) {
    out.push({
      path,
      line: null,
      offset: null,
      kind: 'not_append',
      severity: 'error',
      message: `${ev.what} (detected ${ev.detected_at}; re-indexed as it is now)`,
      fix: acknowledge(path),
    });
  }
  return out;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<VerifyResult> {
    const home = kouraiHome(ctx);
    const threads = verifyThreads(ctx.env);
    const paths = resolveMemoirs(opts.memoir, home, ctx.cwd);
    // Nothing was ever indexed in a home without an index: verify reads the memoirs alone, and neither
    // creates the index nor loads SQLite (a fifth of its start-up).
    const index = existsSync(indexFileOf(home))
      ? (await import('../../memoir-index/memoir-index.js')).openIndex(home, { now: ctx.now })
      : undefined;
    for (const text of index?.notes ?? []) if (!opts.json) note(ctx, text);
    const problems: Problem[] = [];
    let entries = 0;
    // Keeps a 1M-entry verify well under 200 MB (V8 lets short-lived garbage pile up before its first major GC).
    const collect = collectWhenGrown(16 << 20);
    const pause = async (): Promise<void> => {
      await new Promise((r) => setImmediate(r));
      if (ctx.signal.aborted) throw new CancelledError('verify cancelled');
      collect();
    };
    try {
      const sizes = paths.map((p) => statSync(p).size);
      const indexed = paths.map((p) => index?.file(p)?.indexed_bytes ?? 0);
      const total = sizes.reduce((a, b) => a + b, 0) + indexed.reduce((a, b) => a + b, 0);
      const bar = progress(ctx.stderr, { label: 'verifying', total, unit: 'B', quiet: opts.json });
      let done = 0;
      const before: Problem[][] = [];
      for (const [i, p] of paths.entries()) {
        const here = index
          ? await indexedProblems(index, p, async (b) => {
              bar.update(done + b);
              await pause();
            })
          : [];
        done += indexed[i] ?? 0;
        const pending = unfinishedWrite(p);
        if (pending)
          here.push({
            path: p,
            line: null,
            offset: pending.offset,
            kind: 'uncommitted_batch',
            severity: 'error',
            message: pending.message,
            fix: `kourai memoir repair --memoir ${p}`,
          });
        before.push(here);
      }
      const starts = sizes.map((_, i) => done + sizes.slice(0, i).reduce((a, b) => a + b, 0));
      let warned = false;
      const onWorkerFailure = (err: Error): void => {
        if (!warned)
          warn(
            ctx,
            `a verify worker thread failed (${err.message.split('\n')[0]}); its part of the memoir is read on the main thread`,
          );
        warned = true;
      };
      const v = await verifyMemoirs(paths, {
        onProgress: (i, b) => bar.update((starts[i] ?? 0) + b),
        checkpoint: pause,
        onWorkerFailure,
        ...(threads !== undefined ? { threads } : {}),
      });
      const remembered = fingerprintDir(home);
      for (const [i, f] of v.files.entries()) {
        const found = [...(before[i] ?? []), ...f.problems];
        problems.push(...found, ...remember(remembered, f.path, ctx.now(), found));
        entries += f.entries;
      }
      problems.push(...v.crossFile);
      bar.finish();
    } finally {
      index?.close();
    }
    const errors = problems.filter((p) => p.severity === 'error').length;
    return { ok: errors === 0, memoirs: paths.length, entries, errors, warnings: problems.length - errors, problems };
  },
  exitCode: (r) => (r.ok ? 0 : 1),
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const lines = r.problems.map((p) => {
      const where = p.line !== null ? `${p.path}:${p.line}` : p.path;
      const tag = p.severity === 'error' ? c.red(p.kind) : c.yellow(p.kind);
      return `${where}: ${tag}: ${p.message}${p.fix ? c.dim(`  (fix: ${p.fix})`) : ''}`;
    });
    const summary = r.ok
      ? c.green(
          `ok: ${r.entries} ${plural(r.entries, 'entry', 'entries')} in ${r.memoirs} ${plural(r.memoirs, 'memoir')}${r.warnings ? `, ${r.warnings} ${plural(r.warnings, 'warning')}` : ''}`,
        )
      : c.red(
          `${r.errors} ${plural(r.errors, 'problem')} in ${r.memoirs} ${plural(r.memoirs, 'memoir')} (${r.entries} valid ${plural(r.entries, 'entry', 'entries')})`,
        );
    return [...lines, summary].join('\n');
  },
});
