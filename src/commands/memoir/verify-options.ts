import type { z } from 'zod';
import { optionsSchema } from '../spec-schema.js';
import { verify as spec } from './commands.js';

/**
 * `memoir verify`'s options, the schema of record. Loaded only when the fast check in verify.ts
 * does not vouch for the flags: zod is a third of a verify's start-up.
 */
export const options = optionsSchema(spec, {});

export type VerifyOptions = z.output<typeof options>;
