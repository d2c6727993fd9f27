import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_EXPERIMENT, experimentId } from '../../src/simulation/experiment.js';
import { codeDigest, runDefinition, type RunDefinition } from '../../src/simulation/run-definition.js';
import { removeDir, tempDir } from '../helpers/ctx.js';

/**
 * The simulation's cache (finished cells under $KOURAI_HOME/simulations/<experiment id>) can only be
 * hit by a run that would compute the same numbers: the id is a digest of the run's configuration and
 * of everything else that defines a run — nothing bumped by hand.
 */
const DEF: RunDefinition = {
  protocol: 2,
  release_format: 'kourai.council-release/3',
  public_init: 'kourai.public-init/1',
  base: 'sha256:base',
  code: 'a'.repeat(64),
  v8: '11.3.244.8-node.33',
};

describe('the experiment id: a change of anything that defines a run misses the cache', () => {
  it('the same experiment and definition: the same id (so a resumed or parallel run shares its cells)', () => {
    expect(experimentId(DEFAULT_EXPERIMENT, DEF)).toBe(experimentId({ ...DEFAULT_EXPERIMENT }, { ...DEF }));
    expect(experimentId(DEFAULT_EXPERIMENT, DEF)).toMatch(/^[0-9a-f]{16}$/);
  });

  it.each([
    ['the protocol version', { protocol: 3 }],
    ['the release format', { release_format: 'kourai.council-release/4' }],
    ['the public initialisation scheme', { public_init: 'kourai.public-init/2' }],
    ['the base model fingerprint', { base: 'sha256:other' }],
    ['the code that runs a cell (aggregation, trainer, council, privacy, simulation …)', { code: 'b'.repeat(64) }],
    ['the JavaScript engine (its Math functions)', { v8: '12.4.254.21-node.33' }],
  ] as const)('%s', (_what, change) => {
    expect(experimentId(DEFAULT_EXPERIMENT, { ...DEF, ...change })).not.toBe(experimentId(DEFAULT_EXPERIMENT, DEF));
  });

  it.each([
    ['rounds', { rounds: 5 }],
    ['ε of the grid', { epsilon: 8 }],
    ['forges', { forges: 12 }],
    ['local epochs', { localEpochs: 4 }],
    ['the clip', { clipNorm: 0.5 }],
    ['held-out pairs', { heldOut: 100 }],
  ] as const)('the run configuration: %s', (_what, change) => {
    expect(experimentId({ ...DEFAULT_EXPERIMENT, ...change }, DEF)).not.toBe(experimentId(DEFAULT_EXPERIMENT, DEF));
  });

  it('which cells a command asks for does not change it (seeds run as separate processes share finished cells)', () => {
    expect(
      experimentId(
        { ...DEFAULT_EXPERIMENT, seeds: [2], strategies: ['fedavg'], attacks: ['none'], epsilons: [1] },
        DEF,
      ),
    ).toBe(experimentId(DEFAULT_EXPERIMENT, DEF));
  });
});

describe('the code digest', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) removeDir(dir);
    dir = undefined;
  });

  function tree(files: Record<string, string>): string {
    const root = tempDir('kourai-code-');
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(join(root, p, '..'), { recursive: true });
      writeFileSync(join(root, p), text);
    }
    return root;
  }
  const FILES = {
    'errors.js': 'export const a = 1;',
    'aggregation/fedavg.js': 'export function fedavg() {}',
    'train/trainer.js': 'export function train() {}',
    'commands/federate/simulate.js': 'command',
    'ui/screen.js': 'screen',
    'output/table.js': 'table',
    'simulation/report/html.js': 'report',
    'train/trainer.js.map': '{}',
    'train/trainer.d.ts': 'export {}',
  };

  it('changes with any module a run executes: an edit, a new file, a renamed file', () => {
    dir = tree(FILES);
    const d0 = codeDigest(dir, '.js');
    expect(d0).toMatch(/^[0-9a-f]{64}$/);
    expect(codeDigest(dir, '.js')).toBe(d0);
    writeFileSync(join(dir, 'aggregation/fedavg.js'), 'export function fedavg() { return 1; }');
    const d1 = codeDigest(dir, '.js');
    expect(d1).not.toBe(d0);
    writeFileSync(join(dir, 'train/lora.js'), 'export {}');
    const d2 = codeDigest(dir, '.js');
    expect(d2).not.toBe(d1);
    removeDir(dir);
    const { 'train/trainer.js': moved, ...rest } = FILES;
    dir = tree({ ...rest, 'train/trainer2.js': moved });
    expect(codeDigest(dir, '.js')).not.toBe(d0);
  });

  it('not with presentation (commands, screens, output, the report) or build by-products (.map, .d.ts)', () => {
    dir = tree(FILES);
    const d0 = codeDigest(dir, '.js');
    for (const p of [
      'commands/federate/simulate.js',
      'ui/screen.js',
      'output/table.js',
      'simulation/report/html.js',
      'train/trainer.js.map',
      'train/trainer.d.ts',
    ]) {
      writeFileSync(join(dir, p), 'changed');
      expect(codeDigest(dir, '.js'), p).toBe(d0);
    }
  });

  it('this kourai’s definition: protocol v2, the built-in base, a digest of its own code', () => {
    const d = runDefinition();
    expect(d).toMatchObject({
      protocol: 2,
      release_format: 'kourai.council-release/3',
      public_init: 'kourai.public-init/1',
      base: 'sha256:ffac9b5ac585620c119985be313c92f1b978ea83cd711ceb241cd4900b5d50e5',
    });
    expect(d.code).toMatch(/^[0-9a-f]{64}$/);
    expect(d.v8).toBe(process.versions.v8);
    expect(runDefinition()).toEqual(d);
  });
});
