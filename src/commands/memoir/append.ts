import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { keepRawContexts } from '../../memoir/format/py-object.js';
import type { Ctx } from '../../context.js';
import { InvalidDataError, UsageError, fsError } from '../../errors.js';
import { appendBatch, prepareBatch, type InputItem } from '../../memoir/file/append.js';
import { oneMemoir } from '../../memoir/file/discover.js';
import { ulidGenerator } from '../../memoir/format/entry-id.js';
import { firstInvalidUtf8 } from '../../memoir/format/utf8.js';
import { defineCommand } from '../types.js';
import { note, warn } from '../../output/notice.js';
import { optionsSchema } from '../spec-schema.js';
import { append as spec } from './commands.js';

const options = optionsSchema(spec, {
  json: z.boolean().optional(),
});

export interface AppendResult {
  memoir: string;
  written: number;
  entries: { entry_id: string; scene_id: string; agent: string; source: string; entry_type: string; shared: boolean }[];
  narrowed: string[];
  /** Extension values kourai cannot read: written as given (or replaced: id, time, type), one warning each. */
  unread: string[];
  /** Top-level keys no model declares: left out, as pydantic leaves them out, one warning each. */
  ignored: string[];
  quarantined: { offset: number; length: number; file: string } | null;
}

/** Splits input text into entries: a JSON object, a JSON array, or NDJSON. */
export function parseInputText(text: string, origin: string): InputItem[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  if (trimmed.startsWith('[')) {
    let arr: unknown;
    try {
      arr = JSON.parse(trimmed);
      keepRawContexts(trimmed, arr);
    } catch (err) {
      throw new InvalidDataError(`${origin}: malformed JSON array: ${(err as Error).message}`, 'nothing was written');
    }
    return (arr as unknown[]).map((value, i) => ({ value, where: `${origin} item ${i + 1}` }));
  }
  const lines = text.split('\n');
  if (lines.filter((l) => l.trim() !== '').length > 1) {
    const items: InputItem[] = [];
    lines.forEach((l, i) => {
      if (l.trim() === '') return;
      try {
        const value: unknown = JSON.parse(l);
        keepRawContexts(l, value);
        items.push({ value, where: `${origin} line ${i + 1}` });
      } catch (err) {
        throw new InvalidDataError(
          `${origin} line ${i + 1}: malformed JSON: ${(err as Error).message}`,
          'nothing was written',
        );
      }
    });
    return items;
  }
  try {
    const value: unknown = JSON.parse(trimmed);
    keepRawContexts(trimmed, value);
    return [{ value, where: origin }];
  } catch (err) {
    throw new InvalidDataError(`${origin}: malformed JSON: ${(err as Error).message}`, 'nothing was written');
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks);
}

/**
 * Input bytes as text, refusing invalid UTF-8 (decoding would silently turn it into U+FFFD):
 * the error names the line and the byte within it.
 */
export function decodeInput(bytes: Buffer, origin: string): string {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  const bad = firstInvalidUtf8(bytes);
  const lineStart = bad > 0 ? bytes.lastIndexOf(10, bad - 1) + 1 : 0;
  let line = 1;
  for (let i = bytes.indexOf(10); i >= 0 && i < bad; i = bytes.indexOf(10, i + 1)) line++;
  throw new InvalidDataError(
    `${origin} line ${line}: invalid UTF-8 at byte ${bad - lineStart} of the line`,
    'nothing was written; entries must be UTF-8 text',
  );
}

/** The memoir file an append goes to: `--memoir FILE`, or `--memoir DIR` meaning DIR/memoir.jsonl (created if missing). */
export function appendTarget(memoir: readonly string[], cwd: string): string {
  return oneMemoir(memoir, cwd, {
    command: 'memoir append',
    needs: ' (the memoir file, or its forge directory)',
    mustExist: false,
  });
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<AppendResult> {
    const target = appendTarget(opts.memoir, ctx.cwd);
    let items: InputItem[];
    if (opts.entry !== undefined && opts.file !== undefined)
      throw new UsageError('give one entry argument or --file, not both');
    if (opts.entry !== undefined) items = parseInputText(opts.entry, 'argument');
    else if (opts.file !== undefined && opts.file !== '-') {
      let bytes: Buffer;
      try {
        bytes = readFileSync(resolve(ctx.cwd, opts.file));
      } catch (err) {
        throw fsError(err, '--file', opts.file);
      }
      items = parseInputText(decodeInput(bytes, opts.file), opts.file);
    } else {
      if (opts.file === undefined && ctx.stdin.isTTY) {
        throw new UsageError('no entries given', 'pass an entry as a JSON argument, --file F, or pipe NDJSON on stdin');
      }
      items = parseInputText(decodeInput(await readAll(ctx.stdin), 'stdin'), 'stdin');
    }
    if (items.length === 0) throw new UsageError('no entries given (the input was empty)');
    const ids = ulidGenerator(() => ctx.now().getTime(), ctx.secureRandom);
    const batch = prepareBatch(items, ids, ctx.now);
    const report = appendBatch(target, batch, { fsync: opts.fsync, now: ctx.now });
    for (const n of batch.narrowed) note(ctx, n);
    for (const u of batch.unread) warn(ctx, u);
    for (const u of batch.ignored) warn(ctx, u);
    if (report.quarantined) {
      warn(
        ctx,
        `a torn fragment of ${report.quarantined.length} bytes at the end of ${target} was moved to ${target}.quarantine.jsonl before appending`,
      );
    }
    return {
      memoir: target,
      written: report.count,
      entries: batch.entries.map((e) => ({
        entry_id: e.entry_id,
        scene_id: e.scene_id,
        agent: e.agent,
        source: e.source,
        entry_type: e.entry_type ?? 'pipeline_turn',
        shared: e.split.shared_eligible,
      })),
      narrowed: batch.narrowed,
      unread: batch.unread,
      ignored: batch.ignored,
      quarantined: report.quarantined
        ? { offset: report.quarantined.offset, length: report.quarantined.length, file: `${target}.quarantine.jsonl` }
        : null,
    };
  },
  render(r) {
    const lines = r.entries.map(
      (e) => `${e.entry_id}  ${e.scene_id}  ${e.agent}/${e.source}  ${e.shared ? 'shared' : 'private'}`,
    );
    return `appended ${r.written} entr${r.written === 1 ? 'y' : 'ies'} to ${r.memoir}\n${lines.join('\n')}`;
  },
});
