import { z } from 'zod';
import { AGENTS } from '../memoir/format/agents.js';
import { ENTRY_TYPES, SOURCES } from '../memoir/format/sources.js';

/**
 * Validation more than one command group shares: the entry filters, numeric flags and the privacy
 * settings flags. The flags themselves are declared once, in the groups' commands.ts (spec.ts);
 * a command's schema derives from that declaration and adds these checks (spec-schema.ts).
 */

/** `--memoir PATH` (repeatable): memoir files or directories; none means every memoir under the home. */
export const memoirOpt = z.array(z.string()).default([]);

const listOf = <T extends readonly [string, ...string[]]>(values: T, flag: string) =>
  z
    .array(z.string())
    .default([])
    .transform((xs, ctx) => {
      for (const x of xs) {
        if (!(values as readonly string[]).includes(x)) {
          const meant = (values as readonly string[]).includes(x.toLowerCase())
            ? ` (did you mean "${x.toLowerCase()}"?)`
            : '';
          ctx.addIssue({
            code: 'custom',
            message: `unknown ${flag.replace('--', '')} "${x}"${meant}; expected one of: ${values.join(', ')}`,
          });
          return z.NEVER;
        }
      }
      return xs;
    });

const time = () =>
  z
    .string()
    .optional()
    .transform((s, ctx) => {
      if (s === undefined) return undefined;
      const d = new Date(s);
      if (Number.isNaN(d.getTime())) {
        ctx.addIssue({
          code: 'custom',
          message: `"${s}" is not a date or time (use ISO 8601, e.g. 2026-11-22 or 2026-11-22T10:00:00Z)`,
        });
        return z.NEVER;
      }
      return d.toISOString();
    });

/** `--agent A` (repeatable): agent names, lower case as in the memoir. */
export const agentListOpt = listOf(AGENTS as unknown as readonly [string, ...string[]], '--agent');

/** Filter flags shared by inspect, search, buffer, replay and affinity. */
export const filterShape = {
  agent: agentListOpt,
  source: listOf(SOURCES, '--source'),
  type: listOf(ENTRY_TYPES, '--type'),
  split: z.enum(['shared', 'private']).optional(),
  scene: z.string().optional(),
  since: time(),
  until: time(),
  text: z.string().optional(),
};

/** The filter flags whose values are checked beyond their declaration (spec.ts FILTER_FLAGS). */
export const filterChecks = {
  agent: filterShape.agent,
  source: filterShape.source,
  type: filterShape.type,
  since: filterShape.since,
  until: filterShape.until,
};

export { toFilter } from './filter.js';

const toNumber = (v: unknown): unknown =>
  v === undefined || v === null ? undefined : typeof v === 'string' && v.trim() === '' ? NaN : Number(v);

/** A numeric flag: commander hands over strings; `required: what` when missing, plain messages otherwise. */
export function numberFlag<T extends z.ZodType>(what: string, refine: (n: z.ZodNumber) => T) {
  return z.preprocess(
    toNumber,
    refine(z.number({ error: (iss) => (iss.input === undefined ? `required: ${what}` : undefined) })),
  );
}

export const sigmaFlag = numberFlag('the noise multiplier σ', (n) => n.positive({ error: 'σ must be greater than 0' }));
export const deltaFlag = numberFlag('δ', (n) =>
  n.gt(0, { error: 'δ must be strictly between 0 and 1' }).lt(1, { error: 'δ must be strictly between 0 and 1' }),
);
export const sampleRateFlag = numberFlag('the sample rate q', (n) =>
  n
    .gt(0, { error: 'the sample rate must be in (0, 1]' })
    .max(1, { error: 'the sample rate must be in (0, 1] (1 for a federation round)' }),
);
export const stepsFlag = numberFlag('the number of steps (rounds)', (n) =>
  n.int({ error: 'must be a whole number' }).min(1, { error: 'at least 1 step' }).max(1e9),
);
export const epsilonFlag = numberFlag('the target ε', (n) => n.positive({ error: 'ε must be greater than 0' }));

/** Optional budget/mechanism overrides, checked (with the flag's name) by resolvePrivacyConfig. */
const optionalNumber = numberFlag('a number', (n) => n).optional();
export const budgetFlags = {
  forgeEpsilon: optionalNumber,
  agentEpsilon: optionalNumber,
  delta: optionalNumber,
  noiseMultiplier: optionalNumber,
  clipNorm: optionalNumber,
};
