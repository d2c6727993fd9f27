import { z } from 'zod';
import { filterChecks } from '../options.js';
import { optionsSchema } from '../spec-schema.js';
import { inspect as spec } from './commands.js';

/**
 * `memoir inspect`'s options, the schema of record. Loaded only when the fast check in inspect.ts
 * does not vouch for the flags: zod is most of an inspect's start-up.
 */
export const options = optionsSchema(spec, {
  ...filterChecks,
  limit: z.coerce.number().int().min(0).default(50),
});

export type InspectOptions = z.output<typeof options>;
