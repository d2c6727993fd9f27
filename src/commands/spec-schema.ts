import { z } from 'zod';
import { kindsOf, type CommandSpec, type Kind, type SpecValues } from './spec.js';

/**
 * A command's zod schema (the schema of record) derived from its declaration (spec.ts): each key
 * is read as declared (a list, one of its choices, a string, a switch, an argument), and `own`
 * adds the validation a declaration cannot say (numbers, ranges, agent names, wording). A key in
 * `own` that the command does not declare is a type error, so a flag is named in one place.
 */
export function optionsSchema<C extends CommandSpec, S extends { [K in keyof SpecValues<C>]?: z.ZodType }>(
  spec: C,
  own: S,
): z.ZodType<{ [K in keyof SpecValues<C>]: K extends keyof S ? z.output<S[K]> : SpecValues<C>[K] }> {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, k] of kindsOf(spec)) shape[key] = (own as Record<string, z.ZodType | undefined>)[key] ?? zodOf(k);
  return z.object(shape) as never;
}

function zodOf(k: Kind): z.ZodType {
  switch (k.kind) {
    case 'list':
    case 'args':
      return z.array(z.string()).default([]);
    case 'choice': {
      const e = z.enum(k.choices as [string, ...string[]]);
      return k.default !== undefined ? e.default(k.default) : k.required ? e : e.optional();
    }
    case 'string':
      return k.default !== undefined ? z.string().default(k.default) : k.required ? z.string() : z.string().optional();
    case 'switch':
      return z.boolean().default(k.default);
    case 'arg':
      return k.required ? z.string() : z.string().optional();
  }
}
