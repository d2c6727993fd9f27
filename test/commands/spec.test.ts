import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UNSURE } from '../../src/commands/fast-flags.js';
import { buildCli } from '../../src/cli.js';
import { optionsSchema } from '../../src/commands/spec-schema.js';
import { fastOptions, flagKey, type CommandSpec } from '../../src/commands/spec.js';

/** The registry (commands/spec.ts): a flag is declared once; what commander, zod and the fast side make of it agree. */
const program = buildCli(
  () => {
    throw new Error('not run');
  },
  () => undefined,
);

function walk(c: Command, out: Command[] = []): Command[] {
  out.push(c);
  for (const s of c.commands) walk(s, out);
  return out;
}

describe('the command registry', () => {
  it('every flag is stored under the key flagKey names (the key the zod schemas and fast checks read)', () => {
    const options = walk(program).flatMap((c) => c.options);
    expect(options.length).toBeGreaterThan(200);
    for (const o of options) expect([o.flags, flagKey(o.flags)]).toEqual([o.flags, o.attributeName()]);
  });

  const spec = {
    name: 'probe',
    description: 'a probe',
    args: [
      { name: '<id>', help: 'an id' },
      { name: '[more...]', help: 'more' },
    ],
    flags: [
      { flags: '--list <x>', help: 'a list', repeat: true },
      { flags: '--pick <p>', help: 'a choice', choices: ['a', 'b'] },
      { flags: '--by <p>', help: 'a choice with a default', choices: ['scene', 'session'], default: 'scene' },
      { flags: '--name <n>', help: 'a string' },
      { flags: '--dry-run', help: 'a switch' },
      { flags: '--no-fsync', help: 'a negated switch' },
      { flags: '-o, --out <file>', help: 'required', required: true },
    ],
  } as const satisfies CommandSpec;

  it('a declaration alone gives defaults as commander does, and zod and the fast side read it alike', () => {
    const schema = optionsSchema(spec, {});
    const fast = fastOptions(spec, {});
    const raw = { id: 'x', out: 'o.json' };
    const expected = {
      id: 'x',
      more: [],
      list: [],
      pick: undefined,
      by: 'scene',
      name: undefined,
      dryRun: false,
      fsync: true,
      out: 'o.json',
    };
    expect(schema.parse(raw)).toEqual(expected);
    expect(fast(raw)).toEqual(expected);
    // What the declaration refuses, both refuse (the fast side leaves it to zod, which words the error).
    for (const bad of [{ id: 'x' }, { out: 'o' }, { ...raw, pick: 'c' }, { ...raw, list: 'notalist' }]) {
      expect(schema.safeParse(bad).success).toBe(false);
      expect(fast(bad)).toBeUndefined();
    }
  });

  it('own checks replace the derived reading of their key, on both sides', () => {
    const schema = optionsSchema(spec, { name: z.string().transform((v) => v.toUpperCase()) });
    const fast = fastOptions(spec, { name: (v) => (typeof v === 'string' ? v.toUpperCase() : UNSURE) });
    const raw = { id: 'x', out: 'o', name: 'ok' };
    expect(schema.parse(raw).name).toBe('OK');
    expect(fast(raw)?.name).toBe('OK');
    expect(fast({ id: 'x', out: 'o' })).toBeUndefined();
  });
});
