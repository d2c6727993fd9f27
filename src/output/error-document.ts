import type { z } from 'zod';
import { ExitCode, KouraiError } from '../errors.js';
import type { ErrorDocumentSchema } from './error-schema.js';

/**
 * The JSON error document: what stdout carries when a command run with --json (or --ndjson)
 * fails, commander's usage errors included. One line, so it also ends an NDJSON stream.
 *   {"error":{"code":"usage","message":"…","hint":"…"|null,"exit_code":2}}
 * The schema is in error-schema.ts (zod is not loaded on the error path).
 */
export type ErrorDocument = z.infer<typeof ErrorDocumentSchema>;

export function errorDocument(err: unknown): ErrorDocument {
  if (err instanceof KouraiError)
    return { error: { code: err.code, message: err.message, hint: err.hint ?? null, exit_code: err.exitCode } };
  return {
    error: {
      code: 'internal',
      message: `unexpected error: ${(err as Error | undefined)?.message ?? String(err)}`,
      hint: 'this is a bug in kourai: please report it with the command you ran and the output on stderr',
      exit_code: ExitCode.failure,
    },
  };
}
