import { describe, expect, it } from 'vitest';
import { buildCli } from '../src/cli.js';
import aggregate from '../src/commands/council/aggregate.js';
import forgeAdd from '../src/commands/council/forge-add.js';
import rounds from '../src/commands/council/rounds.js';
import serve from '../src/commands/council/serve.js';
import trust from '../src/commands/council/trust.js';
import type { Command } from '../src/commands/types.js';
import { parseOptions } from '../src/run-command.js';
import { testCtx } from './helpers/ctx.js';

/** argv -> (command module, validated options), without running anything (as test/cli.test.ts). */
async function parse(argv: string[]): Promise<{ cmd: Command<never, unknown>; opts: Record<string, unknown> }> {
  let seen: { cmd: Command<never, unknown>; opts: Record<string, unknown> } | undefined;
  const program = buildCli(
    () => testCtx(),
    () => undefined,
    async (load, raw) => {
      const cmd = (await load()).default as unknown as Command<never, unknown>;
      seen = { cmd, opts: parseOptions(cmd as never, raw) as Record<string, unknown> };
      return 0;
    },
  );
  await program.parseAsync(['node', 'kourai', ...argv]);
  if (!seen) throw new Error('no command ran');
  return seen;
}

const table: [string[], unknown, Record<string, unknown>][] = [
  [
    ['council', 'serve', '--port', '0', '--base-fingerprint', 'a', '--base-fingerprint', 'b', '--strategy', 'bulyan', '--byzantine', '2', '--min-forges', '11', '--round-deadline', '30m', '--data-dir', 'd'],
    serve,
    { port: '0', baseFingerprint: ['a', 'b'], strategy: 'bulyan', byzantine: '2', minForges: '11', roundDeadline: '30m', dataDir: 'd', json: false },
  ],
  [['council', 'serve', '--lora-fair-steps', '50', '--trust-threshold', '0.5', '--json'], serve, { loraFairSteps: '50', trustThreshold: '0.5', json: true, baseFingerprint: [] }],
  [['council', 'forge', 'add', 'athens', '--json'], forgeAdd, { name: 'athens', json: true }],
  [['council', 'rounds', '--limit', '5'], rounds, { limit: 5, json: false }],
  [['council', 'trust', '--json', '--config', 'c.json'], trust, { json: true, config: 'c.json' }],
  [
    ['council', 'aggregate', '--strategy', 'multikrum', '--byzantine', '4', 'a.safetensors', 'b.safetensors', '-o', 'out.safetensors', '--m', '3'],
    aggregate,
    { strategy: 'multikrum', byzantine: 4, updates: ['a.safetensors', 'b.safetensors'], out: 'out.safetensors', m: 3, dtype: 'F32' },
  ],
  [['council', 'aggregate', '--strategy', 'lora-fair', 'a', '-o', 'o', '--weights', '1,2.5', '--solver', 'ridge'], aggregate, { weights: [1, 2.5], solver: 'ridge' }],
];

describe('argv -> council command and options', () => {
  for (const [argv, module, expected] of table) {
    it(`kourai ${argv.join(' ')}`, async () => {
      const { cmd, opts } = await parse(argv);
      expect(cmd).toBe(module);
      expect(opts).toMatchObject(expected);
    });
  }

  it('rejects an unknown strategy and a missing -o', async () => {
    await expect(parse(['council', 'aggregate', '--strategy', 'mean', 'a', '-o', 'x'])).rejects.toThrow(/Allowed choices are fedavg, median, trimmed-mean, krum, multikrum, bulyan, lora-fair/);
    await expect(parse(['council', 'aggregate', '--strategy', 'krum', 'a'])).rejects.toThrow(/required option '-o, --out <file>' not specified/);
    await expect(parse(['council', 'aggregate', '--strategy', 'krum', 'a', '-o', 'x', '--weights', '1,-1'])).rejects.toThrow(/^--weights: weights must be positive numbers/);
  });
});
