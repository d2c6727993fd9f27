import { z } from 'zod';
import { AgentSchema } from '../memoir/format/schema.js';

/**
 * `kourai score`'s options, the schema of record. Loaded only when the fast check in score.ts
 * does not vouch for the flags (or for a request's `lean`): zod is most of a score's start-up.
 */
export const lean = z.coerce
  .number({ error: 'must be a number from 0 (personal) to 1 (federated)' })
  .min(0, { error: 'must be ≥ 0 (personal)' })
  .max(1, { error: 'must be ≤ 1 (federated)' });

export const options = z.object({
  agent: AgentSchema,
  candidates: z.array(z.string()).default([]),
  file: z.string().optional(),
  stdin: z.boolean().default(false),
  taskType: z.string().optional(),
  prompt: z.string().optional(),
  promptFile: z.string().optional(),
  use: z.enum(['both', 'bond', 'council'], { error: 'must be both, bond or council' }).default('both'),
  lean: lean.optional(),
  json: z.boolean().default(false),
});

export type ScoreOptions = z.output<typeof options>;
