import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { fsError, InvalidDataError, UsageError } from '../../errors.js';
import { TensorError } from '../../tensor/errors.js';
import { tensorFromJson, TensorJsonSchema } from '../../tensor/json.js';
import type { NamedTensor } from '../../tensor/tensor.js';
import { colors } from '../../output/color.js';
import { readMembership } from '../../federation/round/membership.js';
import { localAnchors } from '../../federation/round/ledger-anchors.js';
import { releaseJson, releaseToSafetensors, type CouncilRelease } from '../../privacy/release.js';
import { PrivacyGate } from '../../privacy/round-gate.js';
import { writeFileAtomic } from '../../runtime/atomic-write.js';
import { defineCommand } from '../types.js';
import { budgetFlags } from '../options.js';
import { delta as fmtDelta, epsilon as fmtEps } from '../../format.js';
import { privacyConfigFor } from '../../privacy/privacy-config.js';
import { optionsSchema } from '../spec-schema.js';
import { release as spec } from './commands.js';

const options = optionsSchema(spec, {
  agent: z.string({ error: 'required: the agent that speaks' }).min(1),
  round: z.string({ error: 'required: the round id' }).min(1),
  file: z.string({ error: 'required: the delta file (JSON {"tensors": [...]})' }).min(1),
  baseFingerprint: z.string().min(1).optional(),
  ...budgetFlags,
});

/** The tensor JSON shape (base64 data), or, for hand-written files, the values as a plain array. */
const TensorIn = z.union([
  TensorJsonSchema,
  z
    .object({
      name: z.string().min(1),
      shape: z.array(z.number().int().nonnegative()),
      dtype: z.literal('F32').optional(),
      data: z.array(z.number()),
    })
    .strict(),
]);
const DeltaFile = z.object({ tensors: z.array(TensorIn).min(1) });

export interface ReleaseResult {
  release_id: number;
  reused: boolean;
  agent: string;
  round: string;
  epsilon_agent: number;
  epsilon_forge: number;
  delta: number;
  /** Where the release document was written, or null when it is in `release`. */
  out: string | null;
  /** How it was written: the JSON document, or the same release as a safetensors body. */
  out_format: 'json' | 'safetensors' | null;
  /** Exactly what may leave the forge (omitted when written to --out). */
  release: CouncilRelease | null;
}

function readDelta(path: string): NamedTensor[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw fsError(err, 'delta file', path);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new InvalidDataError(`delta file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = DeltaFile.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidDataError(
      `delta file ${path}: ${issue?.path.join('.') || 'document'}: ${issue?.message ?? 'invalid'}`,
      'expected {"tensors": [{"name", "shape", "dtype": "F32", "data": base64}] or "data" as an array of numbers',
    );
  }
  try {
    return parsed.data.tensors.map((t) =>
      Array.isArray(t.data)
        ? { name: t.name, shape: t.shape, data: Float32Array.from(t.data) }
        : tensorFromJson({ ...t, data: t.data, dtype: 'F32' }),
    );
  } catch (err) {
    if (err instanceof TensorError) throw new InvalidDataError(`delta file ${path}: ${err.message}`);
    throw err;
  }
}

/**
 * Clips and noises one agent's council delta, spending its budget (ledger row first), and
 * writes exactly what may leave. For hosts and for testing the pipeline; the federation round
 * calls PrivacyGate directly.
 */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<ReleaseResult> {
    const { config } = privacyConfigFor(ctx, opts);
    const home = kouraiHome(ctx);
    const path = resolve(ctx.cwd, opts.file);
    const outPath = opts.out ? resolve(ctx.cwd, opts.out) : null;
    if (outPath === path) throw new UsageError('--out must not overwrite the delta file');
    const baseFingerprint = opts.baseFingerprint ?? readMembership(home)?.base_fingerprint;
    if (!baseFingerprint)
      throw new UsageError(
        '--base-fingerprint: required: the fingerprint of the base model the delta is over',
        'pass --base-fingerprint sha256:…, or join a council first (kourai federate join)',
      );
    const delta = readDelta(path);
    const gate = PrivacyGate.open({
      home,
      config,
      random: ctx.secureRandom,
      now: ctx.now,
      anchors: localAnchors(home),
    });
    try {
      const out = gate.recordRelease({ round: opts.round, agent: opts.agent.toLowerCase(), delta, baseFingerprint });
      const outFormat = outPath === null ? null : outPath.endsWith('.safetensors') ? 'safetensors' : 'json';
      if (outPath !== null) {
        // Exactly the bytes the council client sends (JSON text, or the safetensors body).
        try {
          writeFileAtomic(
            outPath,
            outFormat === 'safetensors' ? releaseToSafetensors(out.release) : releaseJson(out.release),
          );
        } catch (err) {
          throw fsError(err, 'release file', outPath);
        }
      }
      return {
        release_id: out.releaseId,
        reused: out.reused,
        agent: out.release.agent,
        round: out.release.round,
        epsilon_agent: out.epsilonAgent,
        epsilon_forge: out.epsilonForge,
        delta: config.delta,
        out: outPath,
        out_format: outFormat,
        release: outPath ? null : out.release,
      };
    } finally {
      gate.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const head = `${r.reused ? c.yellow('already released (same noise, nothing more spent)') : c.green('released')}: ${r.agent}, round ${r.round} — ε ${r.agent} ${fmtEps(r.epsilon_agent)}, forge ${fmtEps(r.epsilon_forge)} at δ = ${fmtDelta(r.delta)}`;
    if (r.out) return `${head}\nwritten to ${r.out}`;
    return `${head}\n${c.dim('the release document is stored: run the same command with --out FILE or --json to get it (same noise, nothing more spent)')}`;
  },
});
