import { availableParallelism } from 'node:os';
import { existsSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { z } from 'zod';
import { GramPool } from '../../aggregation/gram-pool.js';
import {
  aggregateUpdates,
  inMemorySource,
  SELECTIONS,
  STRATEGIES,
  type AggregateOutcome,
  type StrategyConfig,
} from '../../aggregation/strategy.js';
import { AggregationError, type Vec } from '../../aggregation/vec.js';
import type { Ctx } from '../../context.js';
import { refusalOf } from '../../aggregation/guard.js';
import { ConflictError, InvalidDataError, UsageError } from '../../errors.js';
import { layoutOf } from '../../tensor/layout.js';
import { readSafetensorsFile, writeSafetensorsFile } from '../../tensor/safetensors-file.js';
import { l2Norm, type NamedTensor, type TensorData } from '../../tensor/tensor.js';
import { colors } from '../../output/color.js';
import { optionsSchema } from '../spec-schema.js';
import { defineCommand } from '../types.js';
import { aggregate as spec } from './commands.js';

const num = z.coerce.number();
/** The same names as `kourai council serve` (and its config keys), where the two share a setting. */
const options = optionsSchema(spec, {
  updates: z.array(z.string()).min(1, 'give at least one UPDATE.safetensors'),
  strategy: z.enum(STRATEGIES),
  byzantine: z.coerce.number().int().min(0).default(0),
  trim: z.coerce.number().int().min(0).optional(),
  multikrumM: z.coerce.number().int().min(1).optional(),
  selection: z.enum(SELECTIONS).optional(),
  weights: z.enum(['uniform', 'counts']).default('uniform'),
  weightValues: z
    .string()
    .optional()
    .transform((s, c) => {
      if (s === undefined) return undefined;
      const w = s.split(',').map(Number);
      if (w.some((x) => !(Number.isFinite(x) && x > 0))) {
        c.addIssue({
          code: 'custom',
          message: `--weight-values must be positive numbers separated by commas, got "${s}"`,
        });
        return z.NEVER;
      }
      return w;
    }),
  loraFairLambda: num.min(0).optional(),
  loraFairLr: num.positive().optional(),
  loraFairSteps: z.coerce.number().int().min(0).optional(),
  out: z.string({ error: 'give the output file with -o OUT.safetensors' }),
  dtype: z.enum(['F32', 'F64']).default('F32'),
  threads: z.coerce.number().int().min(1).optional(),
});

export interface AggregateResult {
  out: string;
  strategy: string;
  byzantine: number;
  inputs: string[];
  coords: number;
  tensors: number;
  used: string[];
  /** Groups of identical updates the selecting rule counted once. */
  echoes: string[][];
  non_finite: string[];
  scores: Record<string, number | null> | null;
  distance_to_aggregate: Record<string, number | null>;
  selection: string | null;
  m: number | null;
  theta: number | null;
  beta: number | null;
  trim: number | null;
  layers: AggregateOutcome['layers'] | null;
  unpaired: string[] | null;
  seconds: number;
}

type FileTensor = NamedTensor<TensorData>;

/** Whether two paths name the same file (also through links), when the second exists. */
function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/** `--weights counts`: the (noised) sample count a file records as `__metadata__.weight`. */
function countWeight(metadata: Record<string, string>, path: string): number {
  const w = Number(metadata.weight);
  if (metadata.weight === undefined || !(Number.isFinite(w) && w > 0))
    throw new InvalidDataError(
      `${path}: --weights counts needs a positive "weight" in the file's __metadata__ (found ${JSON.stringify(metadata.weight ?? null)})`,
    );
  return w;
}

/**
 * `kourai council aggregate`: the council's aggregation, offline, on safetensors files (one file
 * per forge update, same tensor names and shapes). For research and benchmarks. The output is
 * written atomically, never over an input, and over an existing file only with --force.
 */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<AggregateResult> {
    const paths = opts.updates.map((p) => resolve(ctx.cwd, p));
    const out = resolve(ctx.cwd, opts.out);
    const basePath = opts.base === undefined ? undefined : resolve(ctx.cwd, opts.base);
    const input = [...paths, ...(basePath ? [basePath] : [])].find((p) => sameFile(out, p));
    if (input)
      throw new UsageError(`-o ${opts.out} is one of the inputs (${input}); write the aggregate to another file`);
    if (!opts.force && existsSync(out))
      throw new ConflictError(`output file already exists: ${out}`, 'pass --force to replace it, or choose another -o');
    if (opts.weightValues && opts.weights === 'counts')
      throw new UsageError('give either --weights counts or --weight-values, not both');
    const contents = paths.map((p) => readSafetensorsFile(p, 'update'));
    const files = contents.map((c) => c.tensors);
    const first = files[0] as FileTensor[];
    const layout = layoutOf(first.map((t) => ({ name: t.name, shape: t.shape })));
    const f64 = files.some((f) => f.some((t) => t.data instanceof Float64Array));
    const flatten = (tensors: FileTensor[], path: string): Vec => {
      const byName = new Map(tensors.map((t) => [t.name, t]));
      const out = f64 ? new Float64Array(layout.size) : new Float32Array(layout.size);
      for (const spec of layout.tensors) {
        const t = byName.get(spec.name);
        if (!t) throw new InvalidDataError(`${path}: no tensor "${spec.name}" (it is in ${paths[0]})`);
        if (t.shape.join(',') !== spec.shape.join(','))
          throw new InvalidDataError(
            `${path}: tensor "${spec.name}" has shape [${t.shape.join(', ')}], ${paths[0]} has [${spec.shape.join(', ')}]`,
          );
        out.set(t.data, spec.offset);
      }
      if (tensors.length !== layout.tensors.length) {
        const extra = tensors.find((t) => !layout.tensors.some((s) => s.name === t.name));
        throw new InvalidDataError(`${path}: tensor "${extra?.name}" is not in ${paths[0]}`);
      }
      return out;
    };
    const rows = files.map((f, i) => flatten(f, paths[i] as string));
    if (opts.weightValues && opts.weightValues.length !== rows.length)
      throw new UsageError(`--weight-values has ${opts.weightValues.length} values for ${rows.length} updates`);
    const weights =
      opts.weightValues ??
      (opts.weights === 'counts' ? contents.map((c, i) => countWeight(c.metadata, paths[i] as string)) : undefined);
    const base = basePath ? flatten(readSafetensorsFile(basePath, 'base adapter').tensors, basePath) : undefined;
    const config: StrategyConfig = {
      strategy: opts.strategy,
      f: opts.byzantine,
      ...(opts.trim !== undefined ? { trim: opts.trim } : {}),
      ...(opts.multikrumM !== undefined ? { m: opts.multikrumM } : {}),
      ...(opts.selection !== undefined ? { selection: opts.selection } : {}),
      loraFair: {
        ...(opts.loraFairLambda !== undefined ? { lambda: opts.loraFairLambda } : {}),
        ...(opts.loraFairLr !== undefined ? { lr: opts.loraFairLr } : {}),
        ...(opts.loraFairSteps !== undefined ? { steps: opts.loraFairSteps } : {}),
        ...(opts.loraFairSolver !== undefined ? { solver: opts.loraFairSolver } : {}),
      },
    };
    const selecting =
      ['krum', 'multikrum', 'bulyan'].includes(opts.strategy) ||
      (opts.strategy === 'lora-fair' && (opts.selection ?? (opts.byzantine > 0 ? 'multikrum' : 'none')) !== 'none');
    const threads = opts.threads ?? Math.min(availableParallelism(), 8);
    const pool =
      selecting && threads > 1 && rows.length * layout.size >= 4_000_000 ? await GramPool.create(threads) : null;
    const t0 = performance.now();
    let outcome: AggregateOutcome;
    try {
      outcome = aggregateUpdates(
        inMemorySource(rows, layout, { ...(weights ? { weights } : {}), ...(base ? { base } : {}) }),
        config,
        { pool },
      );
    } catch (err) {
      if (err instanceof AggregationError) {
        if (err.code === 'precondition' || err.code === 'bad_parameter')
          throw new UsageError(err.message, opts.byzantine > 0 ? 'lower --byzantine, or give more updates' : undefined);
        throw new InvalidDataError(err.message);
      }
      throw err;
    } finally {
      await pool?.close();
    }
    const seconds = (performance.now() - t0) / 1000;
    // The council's own guard: nothing its inputs do not justify is written.
    const refusal = refusalOf(
      outcome.aggregate,
      rows.map((r) => l2Norm([r])),
      outcome,
    );
    if (refusal) throw new InvalidDataError(`aggregate refused: ${refusal}; nothing was written`);
    // The result: base + aggregate when the inputs are deltas from a base (LoRA-FAIR), else the aggregate.
    const result = new Float64Array(layout.size);
    for (let k = 0; k < result.length; k++)
      result[k] = (outcome.aggregate[k] as number) + (base ? (base[k] as number) : 0);
    const tensors: FileTensor[] = layout.tensors.map((t) => {
      const v = result.subarray(t.offset, t.offset + t.size);
      return { name: t.name, shape: t.shape, data: opts.dtype === 'F32' ? Float32Array.from(v) : Float64Array.from(v) };
    });
    if (opts.dtype === 'F32' && tensors.some((t) => !t.data.every(Number.isFinite)))
      throw new InvalidDataError(
        'aggregate refused: the result is not finite in float32 (use --dtype F64); nothing was written',
      );
    writeSafetensorsFile(out, tensors, {
      what: 'output file',
      overwrite: opts.force,
      existsHint: 'pass --force to replace it, or choose another -o',
      metadata: {
        kourai: 'council aggregate',
        strategy: opts.strategy,
        byzantine: String(opts.byzantine),
        inputs: String(rows.length),
      },
    });
    const name = (i: number): string => paths[i] as string;
    const fin = (x: number | undefined): number | null => (x !== undefined && Number.isFinite(x) ? x : null);
    return {
      out,
      strategy: opts.strategy,
      byzantine: opts.byzantine,
      inputs: paths,
      coords: layout.size,
      tensors: layout.tensors.length,
      used: outcome.used.map(name),
      echoes: (outcome.echoes ?? []).map((g) => g.map(name)),
      non_finite: outcome.nonFinite.map(name),
      scores: outcome.scores ? Object.fromEntries(outcome.scores.map((s, i) => [name(i), fin(s)])) : null,
      distance_to_aggregate: Object.fromEntries(outcome.distanceToAggregate.map((d, i) => [name(i), fin(d)])),
      selection: outcome.selection ?? null,
      m: outcome.m ?? null,
      theta: outcome.theta ?? null,
      beta: outcome.beta ?? null,
      trim: outcome.trim ?? null,
      layers: outcome.layers ?? null,
      unpaired: outcome.unpaired ?? null,
      seconds,
    };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const lines = [
      `${c.bold(r.strategy)}${r.byzantine ? ` (f=${r.byzantine})` : ''}: ${r.used.length} of ${r.inputs.length} updates used, ${r.coords.toLocaleString('en-US')} coordinates in ${r.tensors} tensors, ${r.seconds.toFixed(2)} s`,
    ];
    if (r.non_finite.length)
      lines.push(c.yellow(`dropped (NaN/Inf): ${r.non_finite.map((p) => basename(p)).join(', ')}`));
    for (const g of r.echoes)
      lines.push(c.yellow(`${g.length} identical updates counted once: ${g.map((p) => basename(p)).join(', ')}`));
    if (r.used.length < r.inputs.length) lines.push(`used: ${r.used.map((p) => basename(p)).join(', ')}`);
    for (const l of r.layers ?? [])
      lines.push(`  ${l.layer}: cos ${l.cos_before?.toFixed(6) ?? '-'} → ${l.cos_after?.toFixed(6) ?? '-'}`);
    lines.push(`wrote ${r.out}`);
    return lines.join('\n');
  },
});
