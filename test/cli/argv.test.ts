import { describe, expect, it } from 'vitest';
import { buildCli } from '../../src/cli.js';
import affinity from '../../src/commands/affinity.js';
import aggregate from '../../src/commands/council/aggregate.js';
import forgeAdd from '../../src/commands/council/forge-add.js';
import forgeList from '../../src/commands/council/forge-list.js';
import forgeRevoke from '../../src/commands/council/forge-revoke.js';
import forgeRotate from '../../src/commands/council/forge-rotate.js';
import layoutReset from '../../src/commands/council/layout-reset.js';
import layoutShow from '../../src/commands/council/layout-show.js';
import rounds from '../../src/commands/council/rounds.js';
import serve from '../../src/commands/council/serve.js';
import trust from '../../src/commands/council/trust.js';
import doctor from '../../src/commands/doctor.js';
import consent from '../../src/commands/federate/consent.js';
import feedback from '../../src/commands/feedback.js';
import append from '../../src/commands/memoir/append.js';
import buffer from '../../src/commands/memoir/buffer.js';
import episodes from '../../src/commands/memoir/episodes.js';
import indexCmd from '../../src/commands/memoir/index-cmd.js';
import inspect from '../../src/commands/memoir/inspect.js';
import repair from '../../src/commands/memoir/repair.js';
import replay from '../../src/commands/memoir/replay.js';
import search from '../../src/commands/memoir/search.js';
import show from '../../src/commands/memoir/show.js';
import supersede from '../../src/commands/memoir/supersede.js';
import synth from '../../src/commands/memoir/synth.js';
import verify from '../../src/commands/memoir/verify.js';
import epsilon from '../../src/commands/privacy/epsilon.js';
import ledger from '../../src/commands/privacy/ledger.js';
import release from '../../src/commands/privacy/release.js';
import sigma from '../../src/commands/privacy/sigma.js';
import type { Command } from '../../src/commands/types.js';
import whisper from '../../src/commands/whisper.js';
import { UsageError } from '../../src/errors.js';
import { resolveOptions } from '../../src/run-command.js';
import { testCtx } from '../helpers/ctx.js';

/**
 * The one table of argv -> (command module, validated options), for every command, through the
 * real commander tree and each command's own schema, without running anything. Refusals: the
 * one-line usage error each bad argv gets (commander's own errors included).
 */
interface Parsed {
  cmd: Command<never, unknown>;
  opts: Record<string, unknown>;
  globals: { noInput: boolean; noColor: boolean; quiet: boolean };
}

async function parse(argv: string[]): Promise<Parsed> {
  let seen: Parsed | undefined;
  let globals: Parsed['globals'] = { noInput: false, noColor: false, quiet: false };
  const program = buildCli(
    (g) => {
      globals = g;
      return testCtx();
    },
    () => undefined,
    async (load, raw) => {
      const cmd = (await load()).default as unknown as Command<never, unknown>;
      seen = { cmd, opts: (await resolveOptions(cmd as never, raw)) as Record<string, unknown>, globals };
      return 0;
    },
  );
  await program.parseAsync(['node', 'kourai', ...argv]);
  if (!seen) throw new Error('no command ran');
  return seen;
}

const table: [string[], unknown, Record<string, unknown>][] = [
  // memoir
  [
    ['memoir', 'inspect', '--agent', 'aidos', '--agent', 'kallos', '--split', 'shared', '--limit', '5', '--json'],
    inspect,
    { agent: ['aidos', 'kallos'], split: 'shared', limit: 5, json: true, allRevisions: false },
  ],
  [
    ['memoir', 'inspect', '--memoir', 'a.jsonl', '--memoir', 'dir', '--since', '2026-10-01', '--scene', 'session-1'],
    inspect,
    { memoir: ['a.jsonl', 'dir'], since: '2026-10-01T00:00:00.000Z', scene: 'session-1', limit: 50 },
  ],
  [['memoir', 'inspect', '--text', 'naming', '--ndjson'], inspect, { text: 'naming', ndjson: true, json: false }],
  [
    ['memoir', 'append', '{"a":1}', '--memoir', 'm.jsonl', '--no-fsync'],
    append,
    { entry: '{"a":1}', memoir: ['m.jsonl'], fsync: false },
  ],
  [['memoir', 'append', '--file', '-', '--memoir', 'm.jsonl'], append, { file: '-', fsync: true }],
  [['memoir', 'show', '01ABC', '--json'], show, { id: '01ABC', json: true, history: false }],
  [['memoir', 'show', '01ABC', '--history'], show, { id: '01ABC', history: true }],
  [['memoir', 'repair', '--dry-run'], repair, { dryRun: true }],
  [['memoir', 'verify'], verify, { json: false, memoir: [] }],
  [['memoir', 'index', '--rebuild'], indexCmd, { rebuild: true }],
  [
    ['memoir', 'synth', '--sessions', '2', '--seed', '3'],
    synth,
    { sessions: 2, seed: 3, turns: 12, player: 'ariadne', project: 'sample-forge', force: false },
  ],
  [['memoir', 'synth', '--out', 'big.jsonl', '--entries', '1000'], synth, { out: 'big.jsonl', entries: 1000 }],
  [
    ['memoir', 'synth', '--player', 'daedalus', '--preferences', 'early-returns,why-comments'],
    synth,
    { player: 'daedalus', preferences: 'early-returns,why-comments' },
  ],
  [
    ['memoir', 'replay', '--agent', 'techne', '--agent', 'cupid', '--at', '01M3'],
    replay,
    { agent: ['techne', 'cupid'], at: '01M3', json: false, ndjson: false },
  ],
  [['memoir', 'replay', '--ndjson'], replay, { ndjson: true }],
  [['memoir', 'replay', '--json'], replay, { json: true }],
  [
    ['memoir', 'supersede', '01ABC', '{"agent":"metis"}', '--reason', 'typo', '--no-fsync'],
    supersede,
    { id: '01ABC', patch: '{"agent":"metis"}', reason: 'typo', fsync: false },
  ],
  [
    ['memoir', 'search', 'naming', 'style', '--limit', '3', '--agent', 'kallos'],
    search,
    { query: 'naming style', limit: 3, agent: ['kallos'], allRevisions: false },
  ],
  [['memoir', 'episodes', '--by', 'session', '--write'], episodes, { by: 'session', write: true, fsync: true }],
  [['memoir', 'episodes'], episodes, { by: 'scene', write: false }],
  [
    ['memoir', 'buffer', '--max', '7', '--dry-run', '--split', 'shared'],
    buffer,
    { max: 7, dryRun: true, split: 'shared' },
  ],
  // feedback, affinity
  [
    [
      'feedback',
      '--memoir',
      'm',
      '--agent',
      'techne',
      '--scene',
      'S',
      '--proposed',
      'x',
      '--rating',
      '4',
      '--kind',
      'accepted',
      '--comment',
      'ok',
      '--json',
    ],
    feedback,
    {
      memoir: ['m'],
      agent: 'techne',
      scene: 'S',
      proposed: 'x',
      rating: 4,
      kind: 'accepted',
      comment: 'ok',
      json: true,
      force: false,
      check: false,
    },
  ],
  [
    [
      'feedback',
      '--agent',
      'techne',
      '--scene',
      'S',
      '--proposed-file',
      'p',
      '--revised-file',
      'q',
      '--min-tier',
      'trusted',
      '--cooldown',
      '3',
      '--check',
    ],
    feedback,
    { proposedFile: 'p', revisedFile: 'q', minTier: 'trusted', cooldown: 3, check: true },
  ],
  [['affinity', '--agent', 'techne', '--json'], affinity, { agent: ['techne'], json: true, memoir: [] }],
  // privacy, whisper, consent
  [['privacy', 'epsilon', '--sigma', '2', '--json'], epsilon, { sigma: 2, sampleRate: 1, steps: 1, delta: 1e-5 }],
  [
    ['privacy', 'epsilon', '--sigma', '1.5', '--sample-rate', '0.25', '--steps', '40', '--delta', '1e-6'],
    epsilon,
    { sigma: 1.5, sampleRate: 0.25, steps: 40, delta: 1e-6 },
  ],
  [['privacy', 'sigma', '--epsilon', '3', '--steps', '5'], sigma, { epsilon: 3, sampleRate: 1, steps: 5, delta: 1e-5 }],
  [['privacy', 'ledger', '--agent', 'aidos', '--json'], ledger, { agent: ['aidos'], json: true }],
  [
    ['privacy', 'release', '--agent', 'aidos', '--round', '7', '--file', 'd.json', '--out', 'r.json'],
    release,
    { agent: 'aidos', round: '7', file: 'd.json', out: 'r.json' },
  ],
  [
    [
      'whisper',
      '--noise-multiplier',
      '3',
      '--clip-norm',
      '0.5',
      '--forge-epsilon',
      '4',
      '--agent-epsilon',
      '2',
      '--delta',
      '1e-6',
      '--round',
      '12',
    ],
    whisper,
    { noiseMultiplier: 3, clipNorm: 0.5, forgeEpsilon: 4, agentEpsilon: 2, delta: 1e-6, round: '12' },
  ],
  [
    ['federate', 'consent', '--allow', 'aidos,metis', '--allow', 'kallos', '--deny', 'techne', '--json'],
    consent,
    { allow: ['aidos,metis', 'kallos'], deny: ['techne'], show: false, json: true },
  ],
  [['federate', 'consent', '--show'], consent, { show: true }],
  // council
  [
    [
      'council',
      'serve',
      '--port',
      '0',
      '--base-fingerprint',
      'a',
      '--base-fingerprint',
      'b',
      '--strategy',
      'bulyan',
      '--byzantine',
      '2',
      '--min-forges',
      '11',
      '--round-deadline',
      '30m',
      '--data-dir',
      'd',
    ],
    serve,
    {
      port: '0',
      baseFingerprint: ['a', 'b'],
      strategy: 'bulyan',
      byzantine: '2',
      minForges: '11',
      roundDeadline: '30m',
      dataDir: 'd',
      json: false,
    },
  ],
  [
    ['council', 'serve', '--lora-fair-steps', '50', '--trust-threshold', '0.5', '--ndjson'],
    serve,
    { loraFairSteps: '50', trustThreshold: '0.5', ndjson: true, baseFingerprint: [] },
  ],
  [['council', 'forge', 'add', 'athens', '--json'], forgeAdd, { name: 'athens', json: true }],
  [['council', 'rounds', '--limit', '5'], rounds, { limit: 5, json: false }],
  [['council', 'trust', '--json', '--config', 'c.json'], trust, { json: true, config: 'c.json' }],
  [
    [
      'council',
      'aggregate',
      '--strategy',
      'multikrum',
      '--byzantine',
      '4',
      'a.safetensors',
      'b.safetensors',
      '-o',
      'out.safetensors',
      '--multikrum-m',
      '3',
    ],
    aggregate,
    {
      strategy: 'multikrum',
      byzantine: 4,
      updates: ['a.safetensors', 'b.safetensors'],
      out: 'out.safetensors',
      multikrumM: 3,
      dtype: 'F32',
      force: false,
      weights: 'uniform',
    },
  ],
  [
    [
      'council',
      'aggregate',
      '--strategy',
      'lora-fair',
      'a',
      '-o',
      'o',
      '--weight-values',
      '1,2.5',
      '--lora-fair-solver',
      'ridge',
      '--lora-fair-lambda',
      '0.1',
      '--lora-fair-lr',
      '0.2',
      '--lora-fair-steps',
      '7',
      '--force',
    ],
    aggregate,
    {
      weightValues: [1, 2.5],
      loraFairSolver: 'ridge',
      loraFairLambda: 0.1,
      loraFairLr: 0.2,
      loraFairSteps: 7,
      force: true,
    },
  ],
  [
    ['council', 'aggregate', '--strategy', 'fedavg', 'a', '-o', 'o', '--weights', 'counts'],
    aggregate,
    { weights: 'counts' },
  ],
  [
    [
      'council',
      'serve',
      '--clip-norm',
      '0.5..1',
      '--noise-multiplier',
      '8',
      '--layouts',
      'l.json',
      '--max-uploads-per-forge',
      '3',
      '--upload-grace',
      '5s',
      '--upload-rate',
      '64KiB',
    ],
    serve,
    {
      clipNorm: '0.5..1',
      noiseMultiplier: '8',
      layouts: 'l.json',
      maxUploadsPerForge: '3',
      uploadGrace: '5s',
      uploadRate: '64KiB',
    },
  ],
  [['council', 'forge', 'list', '--json'], forgeList, { json: true }],
  [['council', 'forge', 'revoke', 'athens'], forgeRevoke, { name: 'athens', json: false }],
  [['council', 'forge', 'rotate', 'athens', '--data-dir', 'd'], forgeRotate, { name: 'athens', dataDir: 'd' }],
  [['council', 'layout', 'show'], layoutShow, { json: false }],
  [
    ['council', 'layout', 'show', 'metis', '--layouts', 'l.json', '--json'],
    layoutShow,
    { agent: 'metis', layouts: 'l.json', json: true },
  ],
  [['council', 'layout', 'reset', 'aidos', '--config', 'c.json'], layoutReset, { agent: 'aidos', config: 'c.json' }],
  [['doctor', '--json'], doctor, { json: true }],
];

describe('argv -> command and options', () => {
  it.each(table)('kourai %j', async (argv, module, expected) => {
    const { cmd, opts } = await parse(argv);
    expect(cmd).toBe(module);
    expect(opts).toMatchObject(expected);
  });

  it('global flags reach the context before or after the subcommand', async () => {
    expect((await parse(['--no-input', '--no-color', 'memoir', 'stats'])).globals).toEqual({
      noInput: true,
      noColor: true,
      quiet: false,
    });
    expect((await parse(['memoir', 'replay', '--no-input', '--agent', 'cupid'])).globals).toEqual({
      noInput: true,
      noColor: false,
      quiet: false,
    });
    expect((await parse(['affinity', '--no-color', '-q'])).globals).toEqual({
      noInput: false,
      noColor: true,
      quiet: true,
    });
    expect((await parse(['--quiet', 'memoir', 'synth'])).globals.quiet).toBe(true);
  });
});

it('council aggregate: the old offline-only names are gone (the same flags as `council serve`)', async () => {
  for (const old of [
    ['--m', '3'],
    ['--lambda', '0.1'],
    ['--lr', '0.1'],
    ['--steps', '3'],
    ['--solver', 'gd'],
    ['--weights', '1,2'],
  ]) {
    await expect(parse(['council', 'aggregate', '--strategy', 'krum', 'a', '-o', 'x', ...old])).rejects.toThrow();
  }
});

describe('refused argv: one plain line naming the flag (usage error, exit 2)', () => {
  it.each([
    // commander's own errors
    [
      ['memoir', 'inspect', '--split', 'public'],
      /^option '--split <split>' argument 'public' is invalid\. Allowed choices are shared, private\.$/,
    ],
    [['memoir', 'inspect', '--bogus'], /^unknown option '--bogus'$/],
    [['memoir', 'buffer', '--dry-run'], /^required option '--max <n>' not specified$/],
    [['memoir', 'supersede', 'X', '{}'], /^required option '--reason <text>' not specified$/],
    [['memoir', 'episodes', '--by', 'week'], /argument 'week' is invalid/],
    [['memoir', 'search'], /^missing required argument 'query'$/],
    [
      ['council', 'aggregate', '--strategy', 'mean', 'a', '-o', 'x'],
      /Allowed choices are fedavg, median, trimmed-mean, krum, multikrum, bulyan, lora-fair/,
    ],
    [['council', 'aggregate', '--strategy', 'krum', 'a'], /required option '-o, --out <file>' not specified/],
    [
      ['feedback', '--agent', 'techne', '--scene', 'S', '--proposed', 'x', '--rating', '4', '--kind', 'liked'],
      /argument 'liked' is invalid/,
    ],
    // the command's schema
    [['memoir', 'inspect', '--agent', 'zeus'], /^--agent: unknown agent "zeus"; expected one of: hephaestus/],
    [['memoir', 'replay', '--agent', 'zeus'], /^--agent: unknown agent "zeus"/],
    [
      ['memoir', 'inspect', '--agent', 'Techne'],
      /^--agent: unknown agent "Techne" \(did you mean "techne"\?\); expected one of/,
    ],
    [['adapters', 'list', '--agent', 'Kallos'], /^--agent: unknown agent "Kallos" \(did you mean "kallos"\?\)/],
    [['memoir', 'inspect', '--limit', 'abc'], /^--limit: "abc" is not a number$/],
    [['memoir', 'inspect', '--limit', '-1'], /^--limit: must be 0 or more, not "-1"$/],
    [['memoir', 'inspect', '--since', 'yesterday'], /^--since: "yesterday" is not a date or time \(use ISO 8601/],
    [['memoir', 'buffer', '--max', '-3'], /^--max: must be 0 or more, not "-3"$/],
    [['memoir', 'search', 'x', '--limit', '2.5'], /^--limit: "2.5" is not a whole number$/],
    [
      ['feedback', '--agent', 'techne', '--scene', 'S', '--proposed', 'x', '--rating', '9', '--kind', 'accepted'],
      /^--rating: "9" is not a rating/,
    ],
    [
      ['feedback', '--agent', 'techne', '--scene', 'S', '--proposed', 'x', '--cooldown', 'abc', '--check'],
      /^--cooldown: "abc" is not a number$/,
    ],
    [
      ['feedback', '--agent', 'techne', '--scene', 'S', '--proposed', 'x', '--min-tier', 'bestie', '--check'],
      /^--min-tier: expected one of: stranger, familiar, trusted, bonded$/,
    ],
    [['privacy', 'epsilon', '--sigma', '-1'], /^--sigma: σ must be greater than 0$/],
    [['privacy', 'epsilon', '--sigma', '1e400'], /^--sigma: "1e400" is out of range \(give a finite number\)$/],
    [
      ['privacy', 'epsilon', '--sigma', '1', '--sample-rate', '0'],
      /^--sample-rate: the sample rate must be in \(0, 1\]/,
    ],
    [['privacy', 'release', '--agent', 'aidos', '--round', '1'], /^--file: required/],
    [
      ['council', 'aggregate', '--strategy', 'krum', 'a', '-o', 'x', '--weight-values', '1,-1'],
      /^--weight-values: .*must be positive numbers/,
    ],
  ])('kourai %j', async (argv, message) => {
    const err = await parse(argv).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message).toMatch(message);
    expect((err as UsageError).message).not.toMatch(/\n|Invalid input|expected number, received/);
  });
});
