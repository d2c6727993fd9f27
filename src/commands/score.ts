import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { kouraiHome, type Ctx } from '../context.js';
import { CancelledError, fsError, InvalidDataError, KouraiError, UsageError } from '../errors.js';
import { AGENTS } from '../memoir/format/agents.js';
import { appliedText } from '../output/applied-text.js';
import { colors } from '../output/color.js';
import { writeNdjson } from '../output/json.js';
import { oneLine, renderTable } from '../output/table.js';
import { Scorer, type ScoreResult } from '../train/scorer.js';
import { number, oneOf, UNSURE, type Maybe } from './fast-flags.js';
import { fastOptions } from './spec.js';
import { scoreCommand as spec } from './top-level.js';
import type { options as OptionsSchema, ScoreOptions as Options } from './score-options.js';
import { defineCommand, type LazyOptions } from './types.js';

const agents: ReadonlySet<string> = new Set(AGENTS);

/** score-options.ts without zod, for the usual flags (test/commands/fast-options.test.ts holds the two together). */
export const fastScoreOptions: (raw: Readonly<Record<string, unknown>>) => Options | undefined = fastOptions(spec, {
  agent: (v) => (typeof v === 'string' && agents.has(v) ? (v as Options['agent']) : UNSURE),
  use: (v) => oneOf(v, ['both', 'bond', 'council'] as const, 'both') as Maybe<Options['use']>,
  lean: (v) => (v === undefined ? undefined : fastLean(v)),
});

const fastLean = (v: unknown): number | typeof UNSURE => number(v, { min: 0, max: 1 });

const options: LazyOptions<typeof OptionsSchema> = {
  fast: fastScoreOptions,
  schema: async () => (await import('./score-options.js')).options,
};

export interface ScoreStreamSummary {
  lines: number;
  errors: number;
}

/** The prompt the candidates answer: --prompt TEXT or --prompt-file PATH (not both). */
function promptOf(opts: Options, cwd: string): string | null {
  if (opts.prompt !== undefined && opts.promptFile !== undefined)
    throw new UsageError('give the prompt one way: --prompt TEXT or --prompt-file PATH');
  if (opts.prompt !== undefined) return opts.prompt;
  if (opts.promptFile === undefined) return null;
  const path = resolve(cwd, opts.promptFile);
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw fsError(err, 'prompt file', path);
  }
}

/** A JSON file of candidates: ["…", "…"] or {"candidates": [...], "task_type": "…", "prompt": "…"}. */
async function readCandidateFile(
  path: string,
  cwd: string,
): Promise<{ candidates: string[]; taskType: string | null; prompt?: string | null }> {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : resolve(cwd, path), 'utf8');
  } catch (err) {
    throw fsError(err, 'candidates file', path);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new InvalidDataError(`candidates file ${path} is not JSON: expected ["…", "…"] or {"candidates": [...]}`);
  }
  return await parseRequest(doc, `candidates file ${path}`);
}

async function parseRequest(
  doc: unknown,
  where: string,
): Promise<{ candidates: string[]; taskType: string | null; prompt?: string | null; lean?: number; id?: unknown }> {
  const o = Array.isArray(doc)
    ? { candidates: doc }
    : (doc as { candidates?: unknown; task_type?: unknown; prompt?: unknown; lean?: unknown; id?: unknown } | null);
  if (!o || typeof o !== 'object' || !Array.isArray(o.candidates) || !o.candidates.every((c) => typeof c === 'string'))
    throw new InvalidDataError(`${where}: expected {"candidates": ["…", …]} (strings)`);
  if (o.candidates.length === 0) throw new InvalidDataError(`${where}: no candidates`);
  if (o.task_type !== undefined && o.task_type !== null && typeof o.task_type !== 'string')
    throw new InvalidDataError(`${where}: task_type must be a string`);
  if (o.prompt !== undefined && o.prompt !== null && typeof o.prompt !== 'string')
    throw new InvalidDataError(`${where}: prompt must be a string`);
  let l: number | undefined;
  if (o.lean !== undefined) {
    const fast = fastLean(o.lean);
    if (fast !== UNSURE) l = fast;
    else {
      const p = (await import('./score-options.js')).lean.safeParse(o.lean);
      if (!p.success) throw new InvalidDataError(`${where}: lean must be a number from 0 (personal) to 1 (federated)`);
      l = p.data;
    }
  }
  return {
    candidates: o.candidates as string[],
    taskType: (o.task_type as string | undefined) ?? null,
    ...(typeof o.prompt === 'string' ? { prompt: o.prompt } : {}),
    ...(l !== undefined ? { lean: l } : {}),
    ...(o.id !== undefined ? { id: o.id } : {}),
  };
}

/**
 * NDJSON in, NDJSON out: one ranking per input line, written as soon as it is computed, for hosts
 * that keep the process open. A bad line answers with {"id", "error"} and the stream goes on.
 */
async function stream(scorer: Scorer, ctx: Ctx, prompt: string | null): Promise<ScoreStreamSummary> {
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: ctx.stdin, crlfDelay: Infinity });
  const onAbort = (): void => rl.close();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  let lines = 0;
  let errors = 0;
  try {
    for await (const line of rl) {
      if (line.trim() === '') continue;
      lines++;
      let id: unknown = null;
      try {
        let doc: unknown;
        try {
          doc = JSON.parse(line);
        } catch {
          throw new InvalidDataError(`line ${lines}: not JSON`);
        }
        const req = await parseRequest(doc, `line ${lines}`);
        id = req.id ?? null;
        const r = await scorer.rank(req.candidates, {
          taskType: req.taskType,
          prompt: req.prompt ?? prompt,
          ...(req.lean !== undefined ? { lean: req.lean } : {}),
        });
        writeNdjson(ctx.stdout, { id, ...r });
      } catch (err) {
        if (!(err instanceof KouraiError)) throw err;
        errors++;
        writeNdjson(ctx.stdout, { id, error: { code: err.code, message: err.message, exit_code: err.exitCode } });
      }
    }
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
  if (ctx.signal.aborted) throw new CancelledError();
  return { lines, errors };
}

export default defineCommand({
  options,
  streams: (o: Options) => o.stdin,
  async run(opts, ctx): Promise<ScoreResult | ScoreStreamSummary> {
    const sources = [opts.candidates.length > 0, opts.file !== undefined, opts.stdin].filter(Boolean).length;
    if (sources === 0)
      throw new UsageError('no candidates: give them as arguments, --file FILE, or NDJSON lines with --stdin');
    if (sources > 1) throw new UsageError('give candidates one way: as arguments, --file or --stdin');
    const prompt = promptOf(opts, ctx.cwd);
    const scorer = await Scorer.open({
      home: kouraiHome(ctx),
      env: ctx.env,
      signal: ctx.signal,
      agent: opts.agent,
      use: opts.use,
      ...(opts.lean !== undefined ? { lean: opts.lean } : {}),
    });
    try {
      if (opts.stdin) return await stream(scorer, ctx, prompt);
      const req =
        opts.file !== undefined
          ? await readCandidateFile(opts.file, ctx.cwd)
          : { candidates: opts.candidates, taskType: null };
      return await scorer.rank(req.candidates, {
        taskType: opts.taskType ?? req.taskType,
        prompt: prompt ?? req.prompt ?? null,
      });
    } finally {
      scorer.close();
    }
  },
  render(r, ctx) {
    if (!('ranking' in r)) return '';
    const c = colors(ctx.colorLevel);
    const width = Math.max(20, (ctx.stdout.columns ?? 100) - 30);
    const table = renderTable(r.ranking, [
      { header: 'RANK', get: (x) => String(r.ranking.indexOf(x) + 1), align: 'right' },
      { header: 'SCORE', get: (x) => x.score.toFixed(3), align: 'right' },
      { header: 'P', get: (x) => x.p.toFixed(2), align: 'right' },
      { header: 'CANDIDATE', get: (x) => `${c.dim(`#${x.index + 1}`)} ${oneLine(x.text, width)}` },
    ]);
    return `${table}${c.dim(appliedText(r.agent, r.applied))}`;
  },
});
