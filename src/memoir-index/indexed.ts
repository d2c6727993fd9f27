import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { kouraiHome, type Ctx } from '../context.js';
import { fsError } from '../errors.js';
import { resolveMemoirs } from '../memoir/file/discover.js';
import { loadEntryAt, loadEntryLineAt } from '../memoir/file/reader.js';
import type { MemoirEntry } from '../memoir/format/schema.js';
import { checkpoint } from '../runtime/cancel.js';
import { collector } from '../runtime/gc.js';
import { openDb } from '../store/db.js';
import { assertIndexWritable } from './index-file.js';
import { INDEX_MIGRATIONS } from './index-migrations.js';
import { indexPath, MemoirIndex, openIndexForBuild, type EntryRow, type FileUpdate } from './memoir-index.js';
import { MemoirQueries } from './memoir-queries.js';

/** The memoirs a command reads, their index brought up to date, and the index's file ids for them. */
export interface IndexedMemoirs {
  index: MemoirIndex;
  paths: string[];
  updates: FileUpdate[];
  fileIds: number[];
  /** Lines of these memoirs that are not valid entries (skipped by every read; `memoir verify` lists them). */
  invalidLines: number;
}

/** What the caller shows while the index is brought up to date (src/output/index-feedback.ts). */
export interface IndexFeedback {
  /** Bytes read so far of all the memoirs (`what`: 'indexing', or 'full-text index' for its lazy build). */
  progress?(done: number, total: number, what?: string): void;
  finish?(): void;
  /** Another process is building the first index: this one waits for it (shown even with --json: it can last). */
  waiting?(text: string): void;
  /** Something happened to the index file itself (moved aside, used read-only or in memory). */
  note?(text: string): void;
  /** A file changed other than by an append: the index was rebuilt for it. */
  integrity?(update: FileUpdate): void;
  /** Some lines of these memoirs are not valid entries and are skipped. */
  skipped?(invalidLines: number, memoirs: number): void;
  /** A memoir ends in a torn final fragment (bytes after its last newline), which is not read. */
  torn?(path: string, bytes: number): void;
}

/**
 * Resolves `--memoir` (or discovers every memoir under the home), brings the index up to date —
 * incrementally, or from scratch with `rebuild` — and returns it open: the caller closes
 * `index`. Ctrl-C (ctx.signal) is seen between files and between batches of a file; what was
 * indexed by then is committed and consistent (the index is a cache, resumed next time).
 */
export async function openIndexed(
  ctx: Pick<Ctx, 'env' | 'cwd' | 'now' | 'signal'>,
  memoirs: readonly string[],
  opts: {
    rebuild?: boolean;
    feedback?: IndexFeedback;
    readOnly?: boolean;
    mustWrite?: boolean;
    fullText?: boolean;
  } = {},
): Promise<IndexedMemoirs> {
  const home = kouraiHome(ctx);
  const paths = resolveMemoirs(memoirs, home, ctx.cwd);
  const sizes = paths.map((p) => {
    try {
      return statSync(p).size;
    } catch (err) {
      throw fsError(err, 'memoir', p);
    }
  });
  const total = sizes.reduce((a, b) => a + b, 0);
  const cp = checkpoint(ctx.signal, {
    what: opts.rebuild
      ? 'index rebuild cancelled: the index is as it was'
      : 'indexing cancelled: what was indexed so far is kept',
  });
  const feedback = opts.feedback ?? {};
  if (opts.mustWrite) assertIndexWritable(indexPath(home));
  const index =
    opts.readOnly && !canUseIndexFile(home)
      ? memoryIndex()
      : await openIndexForBuild(home, {
          now: ctx.now,
          signal: ctx.signal,
          onWait: (holder) =>
            feedback.waiting?.(
              `waiting for ${holder}, which is building the memoir index ${indexPath(home)} (Ctrl-C to stop)`,
            ),
        });
  try {
    for (const n of index.notes) feedback.note?.(n);
    const notesBefore = index.notes.length;
    const gc = collector();
    let batches = 0;
    // Each checkpoint is a consistent point of the build: Ctrl-C there leaves the index usable.
    const updates = await index.build(paths, {
      now: ctx.now,
      rebuild: opts.rebuild ?? false,
      checkpoint: async (done) => {
        feedback.progress?.(done, total);
        if (++batches % 10 === 0) gc(); // bounded memory on big index builds
        await cp();
      },
    });
    if (opts.fullText) await buildFullText(ctx, index, fileIds(updates), feedback);
    return settle(index, paths, updates, feedback, notesBefore);
  } catch (err) {
    index.close();
    throw err;
  }
}

/**
 * Brings `paths` up to date in an index the caller opened, synchronously, and tells `feedback`
 * what openIndexed tells it: for a caller that builds its views inside a synchronous getter (the
 * simulation's forges). The caller closes the index.
 */
export function updateIndexed(
  index: MemoirIndex,
  paths: readonly string[],
  feedback: IndexFeedback = {},
): IndexedMemoirs {
  const notesBefore = index.notes.length;
  return settle(index, [...paths], index.update(paths), feedback, notesBefore);
}

const fileIds = (updates: readonly FileUpdate[]): number[] => updates.map((u) => u.fileId);

/** What an update of these memoirs says to the caller, once their rows are in the index. */
function settle(
  index: MemoirIndex,
  paths: string[],
  updates: FileUpdate[],
  feedback: IndexFeedback,
  notesBefore: number,
): IndexedMemoirs {
  const ids = fileIds(updates);
  feedback.finish?.();
  for (const n of index.notes.slice(notesBefore)) feedback.note?.(n);
  for (const u of updates) if (u.integrity) feedback.integrity?.(u);
  const invalidLines = new MemoirQueries(index).invalidLines(ids);
  if (invalidLines > 0) feedback.skipped?.(invalidLines, ids.length);
  for (const u of updates) if (u.tornTailBytes > 0) feedback.torn?.(u.path, u.tornTailBytes);
  return { index, paths, updates, fileIds: ids, invalidLines };
}

/**
 * Text queries need the full-text rows a bulk load leaves out (store/fts-build.ts): built here,
 * before the query, with progress, and cancellable (the file being built is rolled back whole).
 */
async function buildFullText(
  ctx: Pick<Ctx, 'signal'>,
  index: MemoirIndex,
  fileIds: readonly number[],
  feedback: IndexFeedback,
): Promise<void> {
  const missing = index.withoutFullText(fileIds);
  if (missing.length === 0) return;
  const total = missing.reduce((s, f) => s + f.bytes, 0);
  const cp = checkpoint(ctx.signal, {
    what: 'building the full-text index cancelled: the index is as it was before it',
  });
  await index.buildFullText(
    missing.map((f) => f.fileId),
    {
      checkpoint: async (done) => {
        feedback.progress?.(done, total, 'full-text index');
        await cp();
      },
    },
  );
}

/**
 * What the replay screen needs to search a memoir whose full-text index a bulk load left unbuilt
 * (fts-build.ts): the command hands the screen a builder; the screen's input hook runs it on the
 * first text query, shows its progress, and aborts it on Esc or Ctrl-C. A build stopped half way
 * writes nothing (each memoir's full-text rows are one transaction).
 */
export interface TextIndexBuilder {
  /** Bytes of memoir to read before text search works. */
  readonly bytes: number;
  /** Builds it; `onProgress` gets bytes read so far. Rejects with CancelledError once `signal` fires. */
  build(onProgress: (done: number, total: number) => void, signal: AbortSignal): Promise<void>;
}

/**
 * The lazy full-text build of these files as a screen runs it (the replay screen's first search):
 * null when it is built. `build` can be called again after a cancelled or failed run; `settled`
 * resolves once no build is running (the caller awaits it before closing the index, so a build
 * stopped by Esc or Ctrl-C has rolled back before the connection closes).
 */
export function fullTextBuilder(
  index: MemoirIndex,
  fileIds: readonly number[],
): (TextIndexBuilder & { settled(): Promise<void> }) | null {
  const bytes = index.withoutFullText(fileIds).reduce((s, f) => s + f.bytes, 0);
  if (bytes === 0) return null;
  let running: Promise<void> = Promise.resolve();
  return {
    bytes,
    build(onProgress, signal) {
      const run = buildFullText({ signal }, index, fileIds, { progress: onProgress });
      running = run.then(
        () => undefined,
        () => undefined,
      );
      return run;
    },
    settled: () => running,
  };
}

/**
 * Read-only commands (whisper) use the index file only when it exists and can be written: on a
 * fresh home they create nothing, and on a read-only home they still work, indexing in memory.
 */
function canUseIndexFile(home: string): boolean {
  const file = indexPath(home);
  if (!existsSync(file)) return false;
  try {
    accessSync(file, constants.W_OK);
    accessSync(dirname(file), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** An index that lives and dies with the process (nothing is written to the home). */
function memoryIndex(): MemoirIndex {
  return new MemoirIndex(openDb(':memory:', INDEX_MIGRATIONS));
}

/** The index file opened read-only (doctor), or null when it does not exist: nothing is created. */
export function openIndexReadOnly(home: string): MemoirIndex | null {
  const file = indexPath(home);
  if (!existsSync(file)) return null;
  return new MemoirIndex(openDb(file, INDEX_MIGRATIONS, { readonly: true }));
}

/** An indexed entry read back from its memoir (the index knows where every entry is). */
export function loadRow(row: EntryRow): MemoirEntry {
  return loadEntryAt(row.path, row.offset, row.length, row.entry_id);
}

/** The same, with the entry's line exactly as its memoir holds it (without its line ending). */
export function loadRowLine(row: EntryRow): { entry: MemoirEntry; line: string } {
  return loadEntryLineAt(row.path, row.offset, row.length, row.entry_id);
}

/**
 * Sets the index connection's page cache (in KiB). Readers that stream the index once (training
 * views) use a small one: the 64 MB the index allows for building it would make memory follow
 * the memoir rather than the buffer.
 */
export function limitPageCache(index: MemoirIndex, kib: number): void {
  index.db.pragma(`cache_size = -${Math.max(0, Math.floor(kib))}`);
}
