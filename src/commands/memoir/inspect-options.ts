import { z } from 'zod';
import { filterShape, memoirOpt } from '../options.js';

/**
 * `memoir inspect`'s options, the schema of record. Loaded only when the fast check in inspect.ts
 * does not vouch for the flags: zod is most of an inspect's start-up.
 */
export const options = z.object({
  memoir: memoirOpt,
  ...filterShape,
  limit: z.coerce.number().int().min(0).default(50),
  allRevisions: z.boolean().default(false),
  json: z.boolean().default(false),
  ndjson: z.boolean().default(false),
});

export type InspectOptions = z.output<typeof options>;
