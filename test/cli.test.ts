import { describe, expect, it } from 'vitest';
import { buildCli } from '../src/cli.js';
import { parseOptions } from '../src/run-command.js';
import type { Command } from '../src/commands/types.js';
import { testCtx } from './helpers/ctx.js';
import inspect from '../src/commands/memoir/inspect.js';
import append from '../src/commands/memoir/append.js';
import show from '../src/commands/memoir/show.js';
import repair from '../src/commands/memoir/repair.js';
import verify from '../src/commands/memoir/verify.js';
import indexCmd from '../src/commands/memoir/index-cmd.js';
import synth from '../src/commands/memoir/synth.js';
import doctor from '../src/commands/doctor.js';


/** argv -> (command module, validated options), without running anything. */
async function parse(argv: string[]): Promise<{ cmd: Command<never, unknown>; opts: Record<string, unknown>; ctx: { interactive: boolean; colorLevel: number } }> {
  let seen: { cmd: Command<never, unknown>; opts: Record<string, unknown>; ctx: { interactive: boolean; colorLevel: number } } | undefined;
  const program = buildCli(
    (g) => ({ ...testCtx(), interactive: !g.noInput, colorLevel: g.noColor ? 0 : 1 }),
    () => undefined,
    async (load, raw, ctx) => {
      const cmd = (await load()).default as unknown as Command<never, unknown>;
      const r = parseOptions(cmd as never, raw) as Record<string, unknown>;
      seen = { cmd, opts: r, ctx };
      return 0;
    },
  );
  await program.parseAsync(['node', 'kourai', ...argv]);
  if (!seen) throw new Error('no command ran');
  return seen;
}

const table: [string[], unknown, Record<string, unknown>][] = [
  [['memoir', 'inspect', '--agent', 'aidos', '--agent', 'kallos', '--split', 'shared', '--limit', '5', '--json'], inspect, { agent: ['aidos', 'kallos'], split: 'shared', limit: 5, json: true, allRevisions: false }],
  [['memoir', 'inspect', '--memoir', 'a.jsonl', '--memoir', 'dir', '--since', '2026-10-01', '--scene', 'session-1'], inspect, { memoir: ['a.jsonl', 'dir'], since: '2026-10-01T00:00:00.000Z', scene: 'session-1', limit: 50 }],
  [['memoir', 'append', '{"a":1}', '--memoir', 'm.jsonl', '--no-fsync'], append, { entry: '{"a":1}', memoir: ['m.jsonl'], fsync: false }],
  [['memoir', 'append', '--file', '-', '--memoir', 'm.jsonl'], append, { file: '-', fsync: true }],
  [['memoir', 'show', '01ABC', '--json'], show, { id: '01ABC', json: true }],
  [['memoir', 'repair', '--dry-run'], repair, { dryRun: true }],
  [['memoir', 'verify'], verify, { json: false }],
  [['memoir', 'index', '--rebuild'], indexCmd, { rebuild: true }],
  [['memoir', 'synth', '--sessions', '2', '--seed', '3'], synth, { sessions: 2, seed: 3, turns: 12, player: 'ariadne' }],
  [['memoir', 'synth', '--player', 'daedalus', '--preferences', 'early-returns,why-comments'], synth, { player: 'daedalus', preferences: 'early-returns,why-comments' }],
  [['doctor', '--json'], doctor, { json: true }],
];

describe('argv -> command and options', () => {
  for (const [argv, module, expected] of table) {
    it(`kourai ${argv.join(' ')}`, async () => {
      const { cmd, opts } = await parse(argv);
      expect(cmd).toBe(module);
      expect(opts).toMatchObject(expected);
    });
  }

  it('global --no-input and --no-color reach the context', async () => {
    const { ctx } = await parse(['--no-input', '--no-color', 'memoir', 'stats']);
    expect(ctx).toMatchObject({ interactive: false, colorLevel: 0 });
  });

  it('rejects an unknown --split value', async () => {
    await expect(parse(['memoir', 'inspect', '--split', 'public'])).rejects.toThrow(/Allowed choices are shared, private/);
  });

  it('rejects an unknown agent filter with the list of agents', async () => {
    await expect(parse(['memoir', 'inspect', '--agent', 'zeus'])).rejects.toThrow(/^--agent: unknown agent "zeus"; expected one of: hephaestus/);
  });
});
