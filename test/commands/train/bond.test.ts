import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/errors.js';
import { appendLines } from '../../../src/memoir/file/append.js';
import { encodeEntry } from '../../../src/memoir/format/encode.js';
import { ent } from '../../train/examples/helpers.js';
import { assertBuilt } from '../../helpers/bin.js';
import { removeDir, testCtx, type TestCtx } from '../../helpers/ctx.js';
import { runCli } from '../../helpers/run.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../../train/embeddings-server.js';

const bond = () => import('../../../src/commands/train/bond.js');
const synth = () => import('../../../src/commands/memoir/synth.js');
const list = () => import('../../../src/commands/adapters/list.js');
const score = () => import('../../../src/commands/score.js');

interface Result {
  base_fingerprint: string;
  agents: {
    agent: string;
    status: string;
    version?: number;
    parent_version?: number | null;
    reason?: string;
    metric?: { name: string; value: number } | null;
    metrics?: unknown[];
    direct?: { lambda: number; hold: string; chosen_by: string; reused: boolean };
  }[];
}

let template: string;
beforeAll(async () => {
  assertBuilt();
  const ctx = testCtx();
  await runCli(synth, { sessions: '8', json: true }, ctx);
  template = ctx.home;
}, 120_000);
afterAll(() => removeDir(template));

function home(over: Parameters<typeof testCtx>[0] = {}): TestCtx {
  const ctx = testCtx(over);
  cpSync(join(template, 'projects'), join(ctx.home, 'projects'), { recursive: true });
  return ctx;
}

async function fails(
  raw: Record<string, unknown>,
  ctx: TestCtx,
  load: Parameters<typeof runCli>[0] = bond,
): Promise<{ exitCode: number; message: string }> {
  try {
    await runCli(load, raw, ctx);
  } catch (err) {
    return err as { exitCode: number; message: string };
  }
  throw new Error('expected the command to fail');
}

const quick = { epochs: '8' };

describe('kourai train bond', { timeout: 240_000 }, () => {
  it('trains every agent of the sample forge, registers v1, prints the report; progress lines on stderr', async () => {
    const ctx = home();
    const r = await runCli(bond, { ...quick, json: true }, ctx);
    const res = r.json as Result;
    expect(res.agents.map((a) => a.agent)).toEqual([
      'hephaestus',
      'metis',
      'techne',
      'dokimasia',
      'kallos',
      'mneme',
      'aidos',
      'aletheia',
      'cupid',
      'puck',
    ]);
    const techne = res.agents.find((a) => a.agent === 'techne')!;
    expect(techne).toMatchObject({ status: 'trained', version: 1, parent_version: null });
    expect(techne.metric!.name).toBe('pairwise_accuracy');
    // The direct path's fit says which blocks it read: a scoring head chooses, the routing head reads every block.
    expect(['none', 'without n-grams', 'without structure', 'without n-grams and structure']).toContain(
      techne.direct!.hold,
    );
    expect(techne.direct!.chosen_by).toBe('cross-validation');
    expect(res.agents.find((a) => a.agent === 'hephaestus')).toMatchObject({ direct: { hold: 'none' } });
    expect(ctx.stderr.text).toMatch(/techne: trained v1 after \d+ epochs/);
    // As a pipe (no terminal width): the whole table (narrow terminals: bond-render.test.ts).
    Object.assign(ctx.stdout, { columns: undefined });
    const text = await runCli(bond, { ...quick, agent: ['techne'] }, ctx);
    expect(text.stdout).toMatch(/^AGENT\s+EXAMPLES\s+TRAIN LOSS\s+VAL LOSS\s+VALIDATION\s+TRIVIAL BASELINES\s+ADAPTER/);
    expect(text.stdout).toMatch(/techne .* bond v2/);
    expect(text.stdout).toMatch(/always prefer revised \d+%, always prefer shorter \d+%/);
    const l = await runCli(list, { agent: ['techne'], json: true }, ctx);
    expect(
      (l.json as { adapters: { version: number; current: boolean; parent_version: number | null }[] }).adapters,
    ).toMatchObject([
      { version: 1, current: false },
      { version: 2, current: true, parent_version: 1 },
    ]);
    ctx.cleanup();
  });

  it('same memoir and seed: byte-identical adapters', async () => {
    const a = home();
    const b = home();
    await runCli(bond, { ...quick, agent: ['mneme'], seed: '3' }, a);
    await runCli(bond, { ...quick, agent: ['mneme'], seed: '3' }, b);
    const file = 'adapters/mneme/bond/v1/adapter_model.safetensors';
    expect(readFileSync(join(a.home, file)).equals(readFileSync(join(b.home, file)))).toBe(true);
    a.cleanup();
    b.cleanup();
  });

  it('Ctrl-C mid-epoch: exit 130, the previous version stays current, nothing half-written', async () => {
    const ac = new AbortController();
    const ctx = home({ signal: ac.signal });
    await runCli(bond, { ...quick, agent: ['techne'] }, ctx);
    const write = ctx.stderr.write.bind(ctx.stderr);
    ctx.stderr.write = (chunk: string) => {
      if (/techne: epoch/.test(chunk)) ac.abort();
      return write(chunk);
    };
    const err = await fails({ agent: ['techne'], epochs: '10000' }, ctx);
    expect(err.exitCode).toBe(ExitCode.cancelled);
    const l = await runCli(list, { agent: ['techne'], json: true }, testCtx({ home: ctx.home }));
    expect((l.json as { adapters: { version: number; current: boolean }[] }).adapters).toEqual([
      expect.objectContaining({ version: 1, current: true }),
    ]);
    ctx.cleanup();
  });

  it('bad input: no memoir (6), no labelled entries (6), an unknown agent (2)', async () => {
    const empty = testCtx();
    expect(await fails({}, empty)).toMatchObject({
      exitCode: ExitCode.notFound,
      message: expect.stringMatching(/^no memoirs found under /),
    });
    const unlabelled = testCtx();
    const memoir = join(unlabelled.home, 'projects/p/q/.kourai/forges/s1/memoir.jsonl');
    mkdirSync(join(memoir, '..'), { recursive: true });
    // Proposals nobody answered: entries, but no label anywhere.
    appendLines(
      memoir,
      [1, 2, 3, 4, 5].map((i) =>
        encodeEntry(ent({ scene_id: `session-1.turn-${i}`, agent: 'metis', agent_proposed: `plan ${i}` })),
      ),
      { fsync: false },
    );
    const none = await fails({ memoir: [memoir] }, unlabelled);
    expect(none).toMatchObject({
      exitCode: ExitCode.notFound,
      message: `no labelled entries to train on in ${memoir}`,
    });
    expect((await fails({ agent: ['zeus'] }, testCtx())).exitCode).toBe(ExitCode.usage);
    empty.cleanup();
    unlabelled.cleanup();
  });
});

describe('train bond over an embeddings endpoint (a real server on 127.0.0.1)', { timeout: 240_000 }, () => {
  let server: EmbeddingsServer;
  beforeAll(async () => {
    server = await startEmbeddingsServer(48);
  });
  afterAll(() => server.close());

  it('trains over the endpoint base; built-in adapters are then refused (exit 3); an unreachable endpoint is exit 9 and changes nothing', async () => {
    const ctx = home();
    await runCli(bond, { ...quick, agent: ['techne'] }, ctx);
    writeFileSync(
      join(ctx.home, 'config.json'),
      JSON.stringify({ learn: { encoder: { kind: 'openai', url: server.url, model: 'toy-embed', retries: 0 } } }),
    );
    const mismatch = await fails({ agent: 'techne', candidates: ['a', 'b'] }, ctx, score);
    expect(mismatch.exitCode).toBe(ExitCode.environment);
    expect(mismatch.message).toMatch(
      /techne bond adapter v1 \(.*adapter_model\.safetensors\) was trained over base ffac9b5ac585, but the configured base is [0-9a-f]{12} \(hashed n-grams \(16384\) \+ 20 structure features \+ embeddings toy-embed \(48\) \+ words \(8192\)\)/,
    );
    const r = await runCli(bond, { ...quick, agent: ['techne'], json: true }, ctx);
    const res = r.json as Result;
    expect(res.agents[0]).toMatchObject({ agent: 'techne', status: 'trained', version: 2 });
    expect(res.base_fingerprint).not.toMatch(/^sha256:9699214d/);
    const ranked = await runCli(score, { agent: 'techne', candidates: ['a', 'b'], json: true }, ctx);
    expect((ranked.json as { adapters: { bond: number } }).adapters.bond).toBe(2);
    const sent = server.requests.length;
    await runCli(bond, { ...quick, agent: ['techne'] }, ctx);
    expect(server.requests.length).toBe(sent); // every text came from the cache
    const gone = await startEmbeddingsServer(48);
    await gone.close(); // a port nothing listens on
    writeFileSync(
      join(ctx.home, 'config.json'),
      JSON.stringify({
        learn: {
          encoder: { kind: 'openai', url: gone.url, model: 'toy-embed', dimensions: 48, retries: 0, timeout_ms: 2000 },
        },
      }),
    );
    const down = await fails({ agent: ['dokimasia'] }, ctx);
    expect(down.exitCode).toBe(ExitCode.network);
    expect(down.message).toBe(`embeddings endpoint ${gone.url}/embeddings failed after 1 attempt: ECONNREFUSED`);
    const l = await runCli(list, { agent: ['dokimasia'], json: true }, testCtx({ home: ctx.home }));
    expect((l.json as { adapters: unknown[] }).adapters).toEqual([]);
    ctx.cleanup();
  });
});
