import { describe, expect, it } from 'vitest';
import { buildCli } from '../src/cli.js';
import aggregate from '../src/commands/council/aggregate.js';
import forgeAdd from '../src/commands/council/forge-add.js';
import forgeList from '../src/commands/council/forge-list.js';
import forgeRevoke from '../src/commands/council/forge-revoke.js';
import forgeRotate from '../src/commands/council/forge-rotate.js';
import layoutReset from '../src/commands/council/layout-reset.js';
import layoutShow from '../src/commands/council/layout-show.js';
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
    ['council', 'aggregate', '--strategy', 'multikrum', '--byzantine', '4', 'a.safetensors', 'b.safetensors', '-o', 'out.safetensors', '--multikrum-m', '3'],
    aggregate,
    { strategy: 'multikrum', byzantine: 4, updates: ['a.safetensors', 'b.safetensors'], out: 'out.safetensors', multikrumM: 3, dtype: 'F32', force: false, weights: 'uniform' },
  ],
  [
    ['council', 'aggregate', '--strategy', 'lora-fair', 'a', '-o', 'o', '--weight-values', '1,2.5', '--lora-fair-solver', 'ridge', '--lora-fair-lambda', '0.1', '--lora-fair-lr', '0.2', '--lora-fair-steps', '7', '--force'],
    aggregate,
    { weightValues: [1, 2.5], loraFairSolver: 'ridge', loraFairLambda: 0.1, loraFairLr: 0.2, loraFairSteps: 7, force: true },
  ],
  [['council', 'aggregate', '--strategy', 'fedavg', 'a', '-o', 'o', '--weights', 'counts'], aggregate, { weights: 'counts' }],
  [
    ['council', 'serve', '--clip-norm', '0.5..1', '--noise-multiplier', '8', '--layouts', 'l.json', '--max-uploads-per-forge', '3', '--upload-grace', '5s', '--upload-rate', '64KiB'],
    serve,
    { clipNorm: '0.5..1', noiseMultiplier: '8', layouts: 'l.json', maxUploadsPerForge: '3', uploadGrace: '5s', uploadRate: '64KiB' },
  ],
  [['council', 'forge', 'list', '--json'], forgeList, { json: true }],
  [['council', 'forge', 'revoke', 'athens'], forgeRevoke, { name: 'athens', json: false }],
  [['council', 'forge', 'rotate', 'athens', '--data-dir', 'd'], forgeRotate, { name: 'athens', dataDir: 'd' }],
  [['council', 'layout', 'show'], layoutShow, { json: false }],
  [['council', 'layout', 'show', 'metis', '--layouts', 'l.json', '--json'], layoutShow, { agent: 'metis', layouts: 'l.json', json: true }],
  [['council', 'layout', 'reset', 'aidos', '--config', 'c.json'], layoutReset, { agent: 'aidos', config: 'c.json' }],
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
    await expect(parse(['council', 'aggregate', '--strategy', 'krum', 'a', '-o', 'x', '--weight-values', '1,-1'])).rejects.toThrow(/--weight-values must be positive numbers/);
    // The old offline-only names are gone: the same flags as `council serve`.
    for (const old of [['--m', '3'], ['--lambda', '0.1'], ['--lr', '0.1'], ['--steps', '3'], ['--solver', 'gd'], ['--weights', '1,2']]) {
      await expect(parse(['council', 'aggregate', '--strategy', 'krum', 'a', '-o', 'x', ...old])).rejects.toThrow();
    }
  });
});
