import type { z } from 'zod';
import { optionsSchema } from '../spec-schema.js';
import { index as spec } from './commands.js';

/**
 * `memoir index`'s options, the schema of record. Loaded only when the fast check in index-cmd.ts
 * does not vouch for the flags: importing zod costs ~0.1 s of CPU, a third of a small index run.
 */
export const options = optionsSchema(spec, {});

export type IndexOptions = z.output<typeof options>;
