import { ESLint } from 'eslint';
import { join } from 'node:path';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { layerBlocks } from '../../eslint.layers.js';
import { ROOT } from '../helpers/bin.js';

/**
 * The layer rules `npm run lint` applies (eslint.layers.js), checked on sample code: each rule
 * fires where the house style forbids the import or the statement, and stays quiet where it is
 * allowed. (The real tree passing them is `npm run lint` itself.)
 */
const eslint = new ESLint({
  cwd: ROOT,
  overrideConfigFile: true,
  overrideConfig: [
    {
      files: ['**/*.ts', '**/*.tsx'],
      languageOptions: { parser: tseslint.parser },
      plugins: { '@typescript-eslint': tseslint.plugin },
    },
    ...layerBlocks(ROOT),
  ],
});

async function problems(file: string, code: string): Promise<string[]> {
  const [r] = await eslint.lintText(code, { filePath: join(ROOT, file) });
  return (r?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

describe('the floors: a module imports from its own floor or below', () => {
  it.each([
    ['src/memoir/x.ts', "import { colors } from '../output/color.js';", /higher floor/],
    ['src/memoir/x.ts', "import { x } from '../commands/options.js';", /higher floor/],
    ['src/privacy/x.ts', "import { Box } from '../ui/replay/replay-view.js';", /higher floor/],
    ['src/store/x.ts', "import type { Beat } from '../replay/story.js';", /higher floor/],
    ['src/train/x.ts', "import { CouncilClient } from '../federation/council-client.js';", /higher floor/],
    ['src/tensor/x.ts', "import { parseLine } from '../memoir/parse.js';", /higher floor/],
    ['src/runtime/x.ts', "import { openIndex } from '../store/memoir-index.js';", /higher floor/],
    ['src/errors.ts', "import { kouraiHome } from './store/db.js';", /higher floor/],
    ['src/output/x.ts', "import { palette } from '../ui/theme.js';", /output never imports ui/],
    ['src/memoir/format/x.ts', "export const load = () => import('../../output/color.js');", /higher floor/],
    [
      'src/store/x.ts',
      "export const load = async () => (await import('../memoir-index/memoir-index.js')).openIndex;",
      /higher floor/,
    ],
    ['src/output/x.ts', "export const load = () => import('../ui/theme.js');", /output never imports ui/],
    ['src/memoir/x.ts', "export const load = () => import('better-sqlite3');", /SQL lives in/],
    ['src/ui/replay/x.tsx', "import { openIndex } from '../../store/memoir-index.js';", /never open the database/],
  ])('%s: %s is refused', async (file, code, message) => {
    expect((await problems(file, code)).join('\n')).toMatch(message);
  });

  it.each([
    [
      'src/commands/memoir/x.ts',
      "import { openIndexed } from '../../store/indexed.js';\nimport { colors } from '../../output/color.js';",
    ],
    [
      'src/simulation/x.ts',
      "import { krum } from '../aggregation/krum.js';\nimport { Council } from '../council/council.js';".split(
        '\n',
      )[0] as string,
    ],
    [
      'src/train/x.ts',
      "import { PrivacyGate } from '../privacy/round-gate.js';\nimport { openIndex } from '../store/memoir-index.js';",
    ],
    [
      'src/ui/replay/x.tsx',
      "import type { StoryRow } from '../../store/story-queries.js';\nimport { palette } from '../../output/theme.js';",
    ],
    ['src/cli.ts', "import { runCommand } from './run-command.js';"],
    ['src/commands/memoir/x.ts', "export const load = () => import('../../memoir-index/indexed.js');"],
    ['src/memoir-index/x.ts', "export const load = () => import('../store/db.js');"],
  ])('%s may import %s', async (file, code) => {
    expect(await problems(file, code)).toEqual([]);
  });
});

describe('the floors hold for import() expressions too', () => {
  it.each([
    ['src/memoir/format/x.ts', "export const load = () => import('../../ui/x.js');", /higher floor/],
    ['src/privacy/x.ts', "export const load = async () => (await import('../commands/options.js')).x;", /higher floor/],
    ['src/errors.ts', "export const load = () => import('./store/db.js');", /higher floor/],
    ['src/output/x.ts', "export const load = () => import('../ui/theme.js');", /output never imports ui/],
    [
      'src/ui/replay/x.tsx',
      "export const load = () => import('../../store/memoir-index.js');",
      /never open the database/,
    ],
    ['src/commands/memoir/x.ts', "export const load = () => import('../whisper.js');", /another group's helpers/],
    ['src/privacy/x.ts', "export const load = () => import('ink');", /Ink screens live in src\/ui/],
  ])('%s: %s is refused', async (file, code, message) => {
    expect((await problems(file, code)).join('\n')).toMatch(message);
  });

  it.each([
    ['src/commands/memoir/x.ts', "export const load = () => import('../../ui/x.js');"],
    ['src/train/x.ts', "export const load = () => import('../memoir/format/parse.js');"],
    ['src/cli.ts', "export const load = () => import('./commands/memoir/inspect.js');"],
    ['src/memoir/x.ts', 'export const load = (name: string) => import(name);'],
  ])('%s may load %s', async (file, code) => {
    expect(await problems(file, code)).toEqual([]);
  });
});

describe('packages belong to one layer', () => {
  it.each([
    ['src/memoir/x.ts', "import chalk from 'chalk';"],
    ['src/privacy/x.ts', "import { render } from 'ink';"],
    ['src/replay/x.ts', "import React from 'react';"],
    ['src/commands/doctor.ts', "import { Command } from 'commander';"],
    ['src/commands/memoir/x.ts', "import Database from 'better-sqlite3';"],
    ['src/train/x.ts', "import Database from 'better-sqlite3';"],
    ['src/store/x.ts', "import { Worker } from 'node:worker_threads';"],
    ['src/aggregation/x.ts', "import { Worker, parentPort } from 'worker_threads';"],
  ])('%s: %s is refused', async (file, code) => {
    expect(await problems(file, code)).not.toEqual([]);
  });

  it('a worker thread starts only through startWorker; workers may use the rest of worker_threads', async () => {
    expect((await problems('src/council/x.ts', "import { Worker } from 'node:worker_threads';")).join('\n')).toMatch(
      /startWorker/,
    );
    expect(await problems('src/runtime/worker-start.ts', "import { Worker } from 'node:worker_threads';")).toEqual([]);
    expect(
      await problems(
        'src/store/x.ts',
        "import type { Worker } from 'node:worker_threads';\nimport { parentPort, workerData } from 'node:worker_threads';",
      ),
    ).toEqual([]);
  });

  it('commands may import chalk types, the store may import better-sqlite3, ui may import ink', async () => {
    expect(await problems('src/commands/memoir/x.ts', "import type { ChalkInstance } from 'chalk';")).toEqual([]);
    expect(await problems('src/store/x.ts', "import Database from 'better-sqlite3';")).toEqual([]);
    expect(await problems('src/council/sqlite-storage.ts', "import Database from 'better-sqlite3';")).toEqual([]);
    expect(await problems('src/ui/x/y.tsx', "import { Box } from 'ink';")).toEqual([]);
  });
});

describe('a command group never imports another group’s helpers', () => {
  it.each([
    ['src/commands/whisper.ts', "import { openIndexed } from './memoir/shared.js';"],
    ['src/commands/privacy/ledger.ts', "import { entryView } from '../memoir/shared.js';"],
    ['src/commands/memoir/x.ts', "import { renderWhisperText } from '../whisper.js';"],
  ])('%s: %s is refused', async (file, code) => {
    expect((await problems(file, code)).join('\n')).toMatch(/another group's helpers/);
  });

  it('the shared base and the own group are fine', async () => {
    expect(
      await problems(
        'src/commands/memoir/x.ts',
        "import { defineCommand } from '../types.js';\nimport { filterShape } from '../options.js';\nimport { entryView } from './shared.js';",
      ),
    ).toEqual([]);
    expect(
      await problems(
        'src/commands/whisper.ts',
        "import { defineCommand } from './types.js';\nimport { budgetFlags } from './options.js';",
      ),
    ).toEqual([]);
  });
});

describe('SQL only in src/store and the council storage; human output only through src/output', () => {
  it.each([
    ['src/commands/doctor.ts', "export const n = (db) => db.prepare('SELECT count(*) AS n FROM files').get();"],
    ['src/commands/memoir/stats.ts', 'export const q = (x) => `SELECT agent FROM entries WHERE file_id = ${x}`;'],
    ['src/council/council.ts', "export const f = (db) => db.exec('CREATE TABLE t (x)');"],
    ['src/commands/memoir/x.ts', "export const f = (ctx) => ctx.stderr.write('note: x');"],
    ['src/ui/x/y.tsx', "export const f = (ctx) => ctx.stdout.write('x');"],
  ])('%s: %s is refused', async (file, code) => {
    expect((await problems(file, code)).join('\n')).toMatch(/no-restricted-syntax/);
  });

  it.each([
    ['src/store/x.ts', "export const n = (db) => db.prepare('SELECT count(*) AS n FROM files').get();"],
    ['src/council/sqlite-storage.ts', "export const f = (db) => db.exec('CREATE TABLE t (x)');"],
    ['src/aggregation/x.ts', 'export const f = (pool, job) => pool.prepare(job);'],
    ['src/output/x.ts', "export const f = (ctx) => ctx.stderr.write('note: x');"],
    ['src/main.ts', "process.stderr.write('kourai: x');"],
  ])('%s: %s is allowed', async (file, code) => {
    expect(await problems(file, code)).toEqual([]);
  });
});
