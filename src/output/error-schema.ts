import { z } from 'zod';

/** The documented JSON error document (README, "Exit codes"). A change here is a breaking change. */
export const ErrorDocumentSchema = z.strictObject({
  error: z.strictObject({
    /** Stable machine code: usage, environment, budget_exhausted, invalid_data, not_found, conflict, integrity, network, cancelled, failure, internal. */
    code: z.string().regex(/^[a-z_]+$/),
    /** One line, as on stderr after `kourai: `. */
    message: z
      .string()
      .min(1)
      .regex(/^[^\n]*$/),
    hint: z.string().nullable(),
    exit_code: z.number().int().min(1).max(255),
  }),
});
