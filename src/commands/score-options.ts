import { z } from 'zod';
import { AgentSchema } from '../memoir/format/schema.js';
import { optionsSchema } from './spec-schema.js';
import { scoreCommand as spec } from './top-level.js';

/**
 * `kourai score`'s options, the schema of record. Loaded only when the fast check in score.ts
 * does not vouch for the flags (or for a request's `lean`): zod is most of a score's start-up.
 */
export const lean = z.coerce
  .number({ error: 'must be a number from 0 (personal) to 1 (federated)' })
  .min(0, { error: 'must be ≥ 0 (personal)' })
  .max(1, { error: 'must be ≤ 1 (federated)' });

/** `--use`: commander refuses other values; the default is the schema's, so the help shows none. */
export const use = z.enum(['both', 'bond', 'council'], { error: 'must be both, bond or council' }).default('both');

export const options = optionsSchema(spec, { agent: AgentSchema, use, lean: lean.optional() });

export type ScoreOptions = z.output<typeof options>;
