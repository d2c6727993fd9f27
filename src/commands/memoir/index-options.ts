import { z } from 'zod';
import { memoirOpt } from '../options.js';

/**
 * `memoir index`'s options, the schema of record. Loaded only when the fast check in index-cmd.ts
 * does not vouch for the flags: importing zod costs ~0.1 s of CPU, a third of a small index run.
 */
export const options = z.object({
  memoir: memoirOpt,
  rebuild: z.boolean().default(false),
  fullText: z.boolean().default(false),
  json: z.boolean().default(false),
});

export type IndexOptions = z.output<typeof options>;
