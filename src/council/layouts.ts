import { z } from 'zod';
import { FEDERATING_AGENTS, type FederatingAgent } from '../memoir/format/agents.js';
import { adapterLayout } from '../train/adapter-layout.js';
import { builtinBaseSpec, embeddingsBaseSpec, type BaseSpec } from '../train/base-spec.js';
import { layoutOf, type Layout } from '../tensor/layout.js';
import type { TensorSpec } from '../tensor/tensor.js';

/**
 * Which adapter layout (tensor names and shapes, in order) the council accepts for each agent.
 * The council's configuration decides — never the first forge to send an update — because the
 * layout follows from the base model the council serves and the LoRA settings.
 *
 * Configuration (`layouts` in council.json, or `--layouts FILE` holding the same JSON):
 *
 *   explicit:  { "metis": [{"name": "…lora_A.weight", "shape": [8, 16384]}, …], "*": [...] }
 *              ("*" applies to every federating agent not named)
 *   derived:   { "derive": { "base": "builtin", "rank": 8 } }
 *              or { "derive": { "base": { "embeddings": { "model": "…", "dim": 768 } }, "rank": 8 } }
 *              the layouts the trainer's `adapterLayout(baseSpec, agent, rank)` gives, so a council
 *              and its forges cannot disagree (see deriveLayouts).
 */
export const TensorSpecSchema = z
  .object({
    name: z.string().min(1).max(512),
    shape: z
      .array(
        z
          .number()
          .int()
          .min(1)
          .max(2 ** 31),
      )
      .min(1)
      .max(8),
  })
  .strict();

export const DeriveSchema = z
  .object({
    /** "builtin": the trainer's built-in base model; or an embeddings base { "embeddings": { "model", "dim" } }. */
    base: z.union([
      z.literal('builtin'),
      z.object({ embeddings: z.object({ model: z.string().min(1), dim: z.number().int().min(1) }).strict() }).strict(),
    ]),
    rank: z.number().int().min(1).max(1024),
  })
  .strict();
export type LayoutDerivation = z.infer<typeof DeriveSchema>;

export const LayoutsConfigSchema = z.union([
  z.object({ derive: DeriveSchema }).strict(),
  z
    .record(z.string(), z.array(TensorSpecSchema).min(1).max(4096))
    .refine((r) => Object.keys(r).every((k) => k === '*' || (FEDERATING_AGENTS as readonly string[]).includes(k)), {
      message: `keys must be federating agents (${FEDERATING_AGENTS.join(', ')}) or "*"`,
    })
    .refine((r) => Object.values(r).every((specs) => new Set(specs.map((s) => s.name)).size === specs.length), {
      message: 'a tensor name appears twice in one layout',
    }),
]);
export type LayoutsConfig = z.infer<typeof LayoutsConfigSchema>;

/** The configured layout of every agent the council accepts (agents without one are refused). */
export function configuredLayouts(config: LayoutsConfig | null): Map<FederatingAgent, Layout> {
  const out = new Map<FederatingAgent, Layout>();
  if (!config) return out;
  const derivation = derivationOf(config);
  const specs = derivation ? deriveLayouts(derivation) : explicitLayouts(config as Record<string, TensorSpec[]>);
  for (const agent of FEDERATING_AGENTS) {
    const s = specs[agent];
    if (s) out.set(agent, layoutOf(s));
  }
  return out;
}

function explicitLayouts(r: Record<string, TensorSpec[]>): Partial<Record<FederatingAgent, TensorSpec[]>> {
  const out: Partial<Record<FederatingAgent, TensorSpec[]>> = {};
  for (const agent of FEDERATING_AGENTS) {
    const s = r[agent] ?? r['*'];
    if (s) out[agent] = s;
  }
  return out;
}

/** The derivation a layouts configuration asks for, or null for explicit layouts. */
export function derivationOf(config: LayoutsConfig | null): LayoutDerivation | null {
  return config && 'derive' in config && !Array.isArray(config.derive) ? (config.derive as LayoutDerivation) : null;
}

/** The base-model specification a derivation names (the trainer's published specs). */
export function derivedBaseSpec(d: LayoutDerivation): BaseSpec {
  return d.base === 'builtin' ? builtinBaseSpec() : embeddingsBaseSpec(d.base.embeddings.model, d.base.embeddings.dim);
}

/**
 * Layouts derived from a base-model specification with the trainer's own
 * `adapterLayout(baseSpec, agent, rank)` (src/train/adapter-layout.ts): the names and shapes forges
 * train and send, so council and forges cannot disagree.
 */
export function deriveLayouts(d: LayoutDerivation): Partial<Record<FederatingAgent, TensorSpec[]>> {
  const spec = derivedBaseSpec(d);
  return Object.fromEntries(FEDERATING_AGENTS.map((agent) => [agent, adapterLayout(spec, agent, d.rank)]));
}

/** "metis: 4 tensors, 28 coordinates (layers.0.q_proj.lora_A.weight [2, 8], …)" */
export function describeLayout(l: Layout): string {
  const names = l.tensors.slice(0, 2).map((t) => `${t.name} [${t.shape.join(', ')}]`);
  return `${l.tensors.length} tensor${l.tensors.length === 1 ? '' : 's'}, ${l.size} coordinates (${names.join(', ')}${l.tensors.length > 2 ? ', …' : ''})`;
}
