import { availableParallelism } from 'node:os';
import { basename, resolve } from 'node:path';
import { z } from 'zod';
import { GramPool } from '../../aggregation/gram-pool.js';
import { aggregateUpdates, inMemorySource, SELECTIONS, STRATEGIES, type AggregateOutcome, type StrategyConfig } from '../../aggregation/strategy.js';
import { AggregationError, type Vec } from '../../aggregation/vec.js';
import type { Ctx } from '../../context.js';
import { InvalidDataError, UsageError } from '../../errors.js';
import { layoutOf } from '../../tensor/layout.js';
import { readSafetensorsFile, writeSafetensorsFile } from '../../tensor/safetensors-file.js';
import type { NamedTensor, TensorData } from '../../tensor/tensor.js';
import { colors } from '../../output/color.js';
import { defineCommand } from '../types.js';

const num = z.coerce.number();
const options = z.object({
  updates: z.array(z.string()).min(1, 'give at least one UPDATE.safetensors'),
  strategy: z.enum(STRATEGIES),
  byzantine: z.coerce.number().int().min(0).default(0),
  trim: z.coerce.number().int().min(0).optional(),
  m: z.coerce.number().int().min(1).optional(),
  selection: z.enum(SELECTIONS).optional(),
  weights: z
    .string()
    .optional()
    .transform((s, c) => {
      if (s === undefined) return undefined;
      const w = s.split(',').map(Number);
      if (w.some((x) => !(Number.isFinite(x) && x > 0))) {
        c.addIssue({ code: 'custom', message: `weights must be positive numbers separated by commas, got "${s}"` });
        return z.NEVER;
      }
      return w;
    }),
  base: z.string().optional(),
  lambda: num.min(0).optional(),
  lr: num.positive().optional(),
  steps: z.coerce.number().int().min(0).optional(),
  solver: z.enum(['gd', 'ridge']).optional(),
  out: z.string({ error: 'give the output file with -o OUT.safetensors' }),
  dtype: z.enum(['F32', 'F64']).default('F32'),
  threads: z.coerce.number().int().min(1).optional(),
  json: z.boolean().default(false),
});

export interface AggregateResult {
  out: string;
  strategy: string;
  byzantine: number;
  inputs: string[];
  coords: number;
  tensors: number;
  used: string[];
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

function load(path: string, what: string): FileTensor[] {
  return readSafetensorsFile(path, what).tensors;
}

/**
 * `kourai council aggregate`: the council's aggregation, offline, on safetensors files (one file
 * per forge update, same tensor names and shapes). For research and benchmarks.
 */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<AggregateResult> {
    const paths = opts.updates.map((p) => resolve(ctx.cwd, p));
    const files = paths.map((p) => load(p, 'update'));
    const first = files[0] as FileTensor[];
    const layout = layoutOf(first.map((t) => ({ name: t.name, shape: t.shape })));
    const f64 = files.some((f) => f.some((t) => t.data instanceof Float64Array));
    const flatten = (tensors: FileTensor[], path: string): Vec => {
      const byName = new Map(tensors.map((t) => [t.name, t]));
      const out = f64 ? new Float64Array(layout.size) : new Float32Array(layout.size);
      for (const spec of layout.tensors) {
        const t = byName.get(spec.name);
        if (!t) throw new InvalidDataError(`${path}: no tensor "${spec.name}" (it is in ${paths[0]})`);
        if (t.shape.join(',') !== spec.shape.join(',')) throw new InvalidDataError(`${path}: tensor "${spec.name}" has shape [${t.shape.join(', ')}], ${paths[0]} has [${spec.shape.join(', ')}]`);
        out.set(t.data, spec.offset);
      }
      if (tensors.length !== layout.tensors.length) {
        const extra = tensors.find((t) => !layout.tensors.some((s) => s.name === t.name));
        throw new InvalidDataError(`${path}: tensor "${extra?.name}" is not in ${paths[0]}`);
      }
      return out;
    };
    const rows = files.map((f, i) => flatten(f, paths[i] as string));
    if (opts.weights && opts.weights.length !== rows.length) throw new UsageError(`--weights has ${opts.weights.length} values for ${rows.length} updates`);
    const base = opts.base ? flatten(load(resolve(ctx.cwd, opts.base), 'base adapter'), resolve(ctx.cwd, opts.base)) : undefined;
    const config: StrategyConfig = {
      strategy: opts.strategy,
      f: opts.byzantine,
      ...(opts.trim !== undefined ? { trim: opts.trim } : {}),
      ...(opts.m !== undefined ? { m: opts.m } : {}),
      ...(opts.selection !== undefined ? { selection: opts.selection } : {}),
      loraFair: {
        ...(opts.lambda !== undefined ? { lambda: opts.lambda } : {}),
        ...(opts.lr !== undefined ? { lr: opts.lr } : {}),
        ...(opts.steps !== undefined ? { steps: opts.steps } : {}),
        ...(opts.solver !== undefined ? { solver: opts.solver } : {}),
      },
    };
    const selecting = ['krum', 'multikrum', 'bulyan'].includes(opts.strategy) || (opts.strategy === 'lora-fair' && (opts.selection ?? (opts.byzantine > 0 ? 'multikrum' : 'none')) !== 'none');
    const threads = opts.threads ?? Math.min(availableParallelism(), 8);
    const pool = selecting && threads > 1 && rows.length * layout.size >= 4_000_000 ? await GramPool.create(threads) : null;
    const t0 = performance.now();
    let outcome: AggregateOutcome;
    try {
      outcome = aggregateUpdates(inMemorySource(rows, layout, { ...(opts.weights ? { weights: opts.weights } : {}), ...(base ? { base } : {}) }), config, { pool });
    } catch (err) {
      if (err instanceof AggregationError) {
        if (err.code === 'precondition' || err.code === 'bad_parameter') throw new UsageError(err.message, opts.byzantine > 0 ? 'lower --byzantine, or give more updates' : undefined);
        throw new InvalidDataError(err.message);
      }
      throw err;
    } finally {
      await pool?.close();
    }
    const seconds = (performance.now() - t0) / 1000;
    // The result: base + aggregate when the inputs are deltas from a base (LoRA-FAIR), else the aggregate.
    const result = new Float64Array(layout.size);
    for (let k = 0; k < result.length; k++) result[k] = (outcome.aggregate[k] as number) + (base ? (base[k] as number) : 0);
    const tensors: FileTensor[] = layout.tensors.map((t) => {
      const v = result.subarray(t.offset, t.offset + t.size);
      return { name: t.name, shape: t.shape, data: opts.dtype === 'F32' ? Float32Array.from(v) : Float64Array.from(v) };
    });
    const out = resolve(ctx.cwd, opts.out);
    writeSafetensorsFile(out, tensors, { what: 'output file', metadata: { kourai: 'council aggregate', strategy: opts.strategy, byzantine: String(opts.byzantine), inputs: String(rows.length) } });
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
    const lines = [`${c.bold(r.strategy)}${r.byzantine ? ` (f=${r.byzantine})` : ''}: ${r.used.length} of ${r.inputs.length} updates used, ${r.coords.toLocaleString('en-US')} coordinates in ${r.tensors} tensors, ${r.seconds.toFixed(2)} s`];
    if (r.non_finite.length) lines.push(c.yellow(`dropped (NaN/Inf): ${r.non_finite.map((p) => basename(p)).join(', ')}`));
    if (r.used.length < r.inputs.length) lines.push(`used: ${r.used.map((p) => basename(p)).join(', ')}`);
    for (const l of r.layers ?? []) lines.push(`  ${l.layer}: cos ${l.cos_before?.toFixed(6) ?? '-'} → ${l.cos_after?.toFixed(6) ?? '-'}`);
    lines.push(`wrote ${r.out}`);
    return lines.join('\n');
  },
});
