import { z } from 'zod';
import { memoirOpt } from '../options.js';

/**
 * `memoir verify`'s options, the schema of record. Loaded only when the fast check in verify.ts
 * does not vouch for the flags: zod is a third of a verify's start-up.
 */
export const options = z.object({ memoir: memoirOpt, json: z.boolean().default(false) });

export type VerifyOptions = z.output<typeof options>;
