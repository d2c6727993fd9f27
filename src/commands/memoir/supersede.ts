import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Ctx } from '../../context.js';
import { IntegrityError, InvalidDataError, UsageError, fsError } from '../../errors.js';
import { appendLines, prepareEntries } from '../../memoir/file/append.js';
import { encodeEntry } from '../../memoir/format/encode.js';
import { ulidGenerator } from '../../memoir/format/entry-id.js';
import { UNREAD, unreadOf, type Unread } from '../../memoir/format/unread.js';
import { buildRevision } from '../../memoir/derive/supersede.js';
import { colors } from '../../output/color.js';
import { loadRevisionGraph } from '../../memoir-index/revision-queries.js';
import { defineCommand } from '../types.js';
import { findEntryRow, rowOf } from './lookup.js';
import { loadRow, openIndexed } from './shared.js';
import { note, warn } from '../../output/notice.js';
import { optionsSchema } from '../spec-schema.js';
import { supersede as spec } from './commands.js';

const options = optionsSchema(spec, {
  id: z.string().min(1),
  reason: z.string({ error: 'is required: say why the entry is corrected' }).min(1, { error: 'must not be empty' }),
});

export interface SupersedeResult {
  /** The id given on the command line. */
  requested: string;
  /** The id the revision replaces: the newest revision of the chain `requested` belongs to. */
  supersedes: string;
  entry_id: string;
  memoir: string;
  entry_type: string;
  reason: string;
  shared: boolean;
  changed: string[];
  /** Why the revision is more private than the correction asked, or null. */
  narrowed: string | null;
  /** Top-level keys of the entry that no model declares: left out of the revision, as pydantic leaves them out, one warning each. */
  ignored: string[];
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

async function readPatch(opts: { patch?: string | undefined; file?: string | undefined }, ctx: Ctx): Promise<unknown> {
  if ((opts.patch === undefined) === (opts.file === undefined)) {
    throw new UsageError(
      'give the correction as one JSON argument or with --file F (not both, not neither)',
      `e.g. kourai memoir supersede ID '{"agent_proposed":"…"}' --reason "typo"`,
    );
  }
  let text: string;
  let origin: string;
  if (opts.patch !== undefined) {
    text = opts.patch;
    origin = 'the correction argument';
  } else if (opts.file === '-') {
    text = await readAll(ctx.stdin);
    origin = 'stdin';
  } else {
    const f = opts.file as string;
    try {
      text = readFileSync(resolve(ctx.cwd, f), 'utf8');
    } catch (err) {
      throw fsError(err, '--file', f);
    }
    origin = f;
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InvalidDataError(`${origin}: malformed JSON: ${(err as Error).message}`, 'nothing was written');
  }
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<SupersedeResult> {
    const patch = await readPatch(opts, ctx);
    const { index, fileIds } = await openIndexed(ctx, opts.memoir, { quiet: opts.json });
    let built;
    let target;
    let originalShareable: boolean;
    try {
      const row = findEntryRow(index, fileIds, opts.id);
      const graph = loadRevisionGraph(index, fileIds);
      const res = graph.resolve(row.entry_id);
      if (res.cycle) {
        throw new IntegrityError(
          `the revision chain of ${row.entry_id} loops (${res.path.join(' -> ')}); it cannot be corrected until the cycle is resolved`,
          'see `kourai memoir verify`',
        );
      }
      target = res.head === row.entry_id ? row : rowOf(index, fileIds, res.head);
      if (!target)
        throw new IntegrityError(
          `the newest revision of ${row.entry_id}, ${res.head}, is no longer in the index`,
          'run `kourai memoir index --rebuild`',
        );
      if (res.head !== row.entry_id && !opts.json) {
        note(ctx, `${row.entry_id} was already corrected; the correction applies to its newest revision, ${res.head}`);
      }
      const original = loadRow(target);
      originalShareable = graph.has(target.entry_id)
        ? graph.effectiveShareable(target.entry_id)
        : target.shareable === 1;
      built = buildRevision({ original, originalShareable, patch, reason: opts.reason });
    } finally {
      index.close();
    }
    const ids = ulidGenerator(() => ctx.now().getTime(), ctx.secureRandom);
    const [prepared] = prepareEntries([{ value: built.input, where: 'the correction' }], ids, ctx.now);
    if (!prepared) throw new InvalidDataError('the correction produced no entry');
    const entry = prepared.entry;
    // the original's unread extension values stay, beside any the correction itself gave
    const patched = unreadOf(prepared.entry);
    if (built.unread !== undefined)
      (entry as { [UNREAD]?: Unread })[UNREAD] = new Map([...built.unread, ...(patched ?? [])]);
    for (const u of prepared.unread ?? []) warn(ctx, u.replace(/^the correction: /, ''));
    for (const u of built.ignored) warn(ctx, u);
    appendLines(target.path, [encodeEntry(entry)], { fsync: opts.fsync, now: ctx.now });
    const narrowed = built.narrowed ?? prepared.narrowed?.replace(/^the correction: /, '') ?? null;
    if (narrowed && !opts.json) note(ctx, narrowed);
    return {
      requested: opts.id,
      supersedes: target.entry_id,
      entry_id: entry.entry_id,
      memoir: target.path,
      entry_type: entry.entry_type ?? target.entry_type,
      reason: opts.reason.trim(),
      shared: entry.split.shared_eligible && !entry.split.private_only,
      changed: built.changed,
      narrowed,
      ignored: built.ignored,
    };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    return [
      `${c.bold(r.entry_id)} supersedes ${r.supersedes} (${r.changed.join(', ')} changed; ${r.shared ? c.green('shared') : c.yellow('private')})`,
      `${c.dim('reason')}  ${r.reason}`,
      `${c.dim('memoir')}  ${r.memoir}`,
      c.dim(
        `reads of ${r.supersedes} now resolve to ${r.entry_id}; see the chain with \`kourai memoir show ${r.entry_id} --history\``,
      ),
    ].join('\n');
  },
});
