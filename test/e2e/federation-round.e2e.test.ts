import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FederationPlan } from '../../src/federation/round/plan.js';
import type { RoundResult } from '../../src/federation/round/run-round.js';
import { FEDERATING_AGENTS } from '../../src/memoir/format/agents.js';
import type { WhisperReport } from '../../src/privacy/whisper-report.js';
import { AdapterRegistry } from '../../src/store/adapter-registry.js';
import { PrivacyLedger } from '../../src/store/privacy-ledger.js';
import { openStateDb } from '../../src/store/state-db.js';
import { readSafetensors } from '../../src/tensor/safetensors.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { DEFAULT_SETTINGS } from '../../src/train/trainer.js';
import { assertBuilt } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { plantCanaries, privateTexts } from '../federation/canary-forge.js';
import { captureWire, parseRequests, type RawRequest, type WireCapture } from '../federation/wire-capture.js';
import { kourai, kouraiAsync, serveCouncil, type BinResult, type Serving } from './run-bin.js';

/**
 * The done-when on the real binary: a real council process (`kourai council serve`) on
 * 127.0.0.1, two forges built from the sample generator for different players, each behind a TCP
 * relay that keeps every byte the forge sends. Both join, look at the dry run, run two full rounds
 * together, come home with the same council adapters, watch their Council of Sisters, see the
 * budget spent in `whisper`, and train different bond adapters. The wire carried exactly what the
 * dry run printed, noised, and no private or player-written text (canaries planted in every kind
 * of private entry). With consent withdrawn the forge opens no connection at all.
 */

interface Forge {
  name: string;
  player: string;
  home: string;
  memoirs: string[];
  canaries: string[];
  wire: WireCapture;
  dryRun?: FederationPlan;
}

let root: string;
let councilProc: ChildProcess;
let councilUrl: string;
let dataDir: string;
const forges: Forge[] = [];

function startCouncil(): Promise<Serving> {
  const layouts = JSON.stringify({ derive: { base: 'builtin', rank: DEFAULT_SETTINGS.rank } });
  return serveCouncil(
    [
      '--data-dir',
      dataDir,
      '--base-fingerprint',
      BUILTIN_FINGERPRINT,
      '--layouts',
      layouts,
      '--min-forges',
      '2',
      '--strategy',
      'fedavg',
    ],
    { home: root },
  );
}

function ok(r: BinResult, what: string): unknown {
  expect(r.code, `${what}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as unknown;
}

/** Each agent's current council adapter, tensor name → values. */
function adapters(home: string, kind: 'council' | 'bond'): Record<string, Record<string, number[]>> {
  const db = openStateDb(home);
  try {
    const reg = new AdapterRegistry(db);
    const out: Record<string, Record<string, number[]>> = {};
    for (const agent of FEDERATING_AGENTS) {
      const cur = reg.current(agent, kind);
      if (!cur) continue;
      const st = readSafetensors(readFileSync(join(home, cur.path, 'adapter_model.safetensors')));
      out[agent] = Object.fromEntries(st.tensors.map((t) => [t.name, Array.from(t.data)]));
    }
    return out;
  } finally {
    db.close();
  }
}

function puts(f: Forge): RawRequest[] {
  return f.wire
    .sent()
    .flatMap(parseRequests)
    .filter((r) => r.method === 'PUT');
}

function withoutData(body: { tensors: { data?: unknown }[] } & Record<string, unknown>): Record<string, unknown> {
  return { ...body, tensors: body.tensors.map(({ data: _data, ...rest }) => rest) };
}

beforeAll(async () => {
  assertBuilt();
  root = tempDir('kourai-e2e-federation-');
  dataDir = join(root, 'council');
  const c = await startCouncil();
  councilProc = c.proc;
  councilUrl = c.url;
  for (const [name, player] of [
    ['athens', 'ariadne'],
    ['knossos', 'daedalus'],
  ] as const) {
    const added = kourai(['council', 'forge', 'add', name, '--data-dir', dataDir, '--json'], { home: root });
    const token = (ok(added, 'council forge add') as { token: string }).token;
    const home = join(root, name);
    mkdirSync(home);
    const synth = ok(kourai(['memoir', 'synth', '--player', player, '--json'], { home }), 'memoir synth') as {
      memoirs: string[];
    };
    const canaries = plantCanaries(synth.memoirs[0] as string, name);
    const wire = await captureWire(councilUrl);
    ok(
      await kouraiAsync(['federate', 'join', '--server', wire.url, '--token', token, '--json'], { home }),
      'federate join',
    );
    ok(kourai(['federate', 'consent', '--allow', 'all', '--json'], { home }), 'federate consent');
    forges.push({ name, player, home, memoirs: synth.memoirs, canaries, wire });
  }
}, 240_000);

afterAll(async () => {
  for (const f of forges) await f.wire.close();
  councilProc?.kill('SIGTERM');
  if (root) removeDir(root);
});

describe('two forges, a real council process, every byte on the wire kept', () => {
  it('the dry run prints the plan and sends no update', async () => {
    for (const f of forges) {
      const r = (await kouraiAsync(['federate', 'round', '--dry-run', '--json'], { home: f.home }).then((x) =>
        ok(x, 'dry run'),
      )) as RoundResult & { outcome: 'dry_run' };
      expect(r.outcome).toBe('dry_run');
      expect(r.plan.round).toBe(1);
      expect(r.plan.speakers.length).toBeGreaterThan(0);
      expect(r.plan.speakers).toContain('hephaestus'); // the routing head's council delta
      expect(r.plan.agents.find((a) => a.agent === 'cupid')).toMatchObject({ verdict: 'bond_only', speaks: false });
      f.dryRun = r.plan;
      // kourai whisper --next-round shows the same plan (the same function builds it).
      const w = (await kouraiAsync(['whisper', '--next-round', '--json'], { home: f.home }).then((x) =>
        ok(x, 'whisper --next-round'),
      )) as WhisperReport & { next_round: FederationPlan };
      expect(w.next_round).toEqual(r.plan);
      // The same plan as text: per agent the request, the tensors, S, σ and ε, the envelope.
      if (f === forges[0]) {
        const text = await kouraiAsync(['federate', 'round', '--dry-run'], { home: f.home });
        expect(text.code, text.stderr).toBe(0);
        const techne = r.plan.agents.find((a) => a.agent === 'techne');
        expect(text.stdout).toContain(
          `PUT /v1/rounds/1/updates/techne  application/json  ${techne?.request?.bytes.toLocaleString('en-US')} bytes`,
        );
        expect(text.stdout).toContain('base_model.model.head.score.lora_A.weight  [8, 256]');
        expect(text.stdout).toMatch(/clip S = 1, noise σ = 8, ε \+0\.4776 → 0\.4776/);
        expect(text.stdout).toMatch(/cupid\s+silent\s+bond-only/);
        expect(text.stdout.trimEnd().split('\n').at(-1)).toBe('dry run: nothing was sent');
      }
      expect(puts(f)).toEqual([]);
    }
  }, 120_000);

  it('round 1: both complete; what left is exactly what the dry run printed, noised', async () => {
    const results = await Promise.all(
      forges.map((f) => kouraiAsync(['federate', 'round', '--json'], { home: f.home })),
    );
    for (const [i, f] of forges.entries()) {
      const r = ok(results[i] as BinResult, `${f.name} round 1`) as RoundResult & { outcome: 'completed' };
      expect(r.outcome).toBe('completed');
      expect(r.round).toBe(1);
      // Progress on stderr: training per agent, upload, the seal, waiting or the download, the memoir entry.
      const progress = (results[i] as BinResult).stderr;
      for (const step of [
        /^trained techne on \d+ council examples$/m,
        /^sending techne's update$/m,
        /^the council accepted techne's update/m,
        /^sealed round 1/m,
        /^downloading techne's new council adapter \(round 1\)$/m,
        /^recorded the Council of Sisters in the memoir/m,
      ])
        expect(progress).toMatch(step);
      const plan = f.dryRun as FederationPlan;
      const sent = puts(f);
      expect(sent.map((p) => p.path).sort()).toEqual(
        plan.agents
          .filter((a) => a.speaks)
          .map((a) => a.request?.path)
          .sort(),
      );
      for (const req of sent) {
        const a = plan.agents.find((x) => x.request?.path === req.path);
        expect(a, req.path).toBeDefined();
        expect(req.headers['content-type']).toBe(a?.request?.content_type);
        expect(req.body.length).toBe(a?.request?.bytes);
        const body = JSON.parse(req.body.toString('utf8')) as {
          tensors: { name: string; shape: number[]; data: string }[];
        } & Record<string, unknown>;
        expect(withoutData(body)).toEqual(withoutData(a?.envelope as never));
        // Noised: an update clipped to S carries norm ≤ S; the noise alone has norm ≈ σ·S·√d.
        const values = body.tensors.flatMap((t) =>
          Array.from(new Float32Array(Uint8Array.from(Buffer.from(t.data, 'base64')).buffer)),
        );
        const norm = Math.sqrt(values.reduce((s, v) => s + v * v, 0));
        expect(values.length).toBe(a?.coords);
        expect(norm).toBeGreaterThan(
          0.5 * plan.mechanism.noise_multiplier * plan.mechanism.clip_norm * Math.sqrt(values.length),
        );
      }
    }
    const [a, b] = forges as [Forge, Forge];
    expect(Object.keys(adapters(a.home, 'council')).length).toBeGreaterThan(0);
    expect(adapters(a.home, 'council')).toEqual(adapters(b.home, 'council'));
  }, 600_000);

  it('round 2 (one forge sends safetensors bodies): both complete from the round-1 globals; same council adapters, the budget spent shows in whisper', async () => {
    const encoding = (f: Forge): string[] => (f === forges[1] ? ['--encoding', 'safetensors'] : []);
    const before = forges.map((f) => puts(f).length);
    const plans = await Promise.all(
      forges.map((f) =>
        kouraiAsync(['federate', 'round', '--dry-run', '--json', ...encoding(f)], { home: f.home }).then(
          (x) => (ok(x, 'dry run 2') as { plan: FederationPlan }).plan,
        ),
      ),
    );
    const results = await Promise.all(
      forges.map((f) => kouraiAsync(['federate', 'round', '--json', ...encoding(f)], { home: f.home })),
    );
    for (const [i, f] of forges.entries()) {
      const r = ok(results[i] as BinResult, `${f.name} round 2`) as RoundResult & { outcome: 'completed' };
      expect(r.round).toBe(2);
      const plan = plans[i] as FederationPlan;
      const sent = puts(f).slice(before[i]);
      expect(sent.map((p) => [p.path, p.headers['content-type'], p.body.length]).sort()).toEqual(
        plan.agents
          .filter((a) => a.speaks)
          .map((a) => [a.request?.path, a.request?.content_type, a.request?.bytes])
          .sort(),
      );
      expect(r.plan.agents.filter((x) => x.speaks).every((x) => x.starts_from?.kind === 'global')).toBe(true);
      const w = ok(kourai(['whisper', '--json'], { home: f.home }), 'whisper') as WhisperReport;
      // priced at the council's policy as round 2 published it (each round records it; join recorded round 1's)
      expect(w.priced_at).toMatchObject({
        source: 'council',
        council_round: 2,
        noise_multiplier: r.plan.mechanism.noise_multiplier,
        clip_norm: r.plan.mechanism.clip_norm,
      });
      const db = openStateDb(f.home);
      const rows = new PrivacyLedger(db).releases();
      db.close();
      expect(w.forge.releases).toBe(rows.length);
      for (const agent of r.details.spoke.map((s) => s.agent)) {
        const wa = w.agents.find((x) => x.agent === agent);
        expect(wa?.releases, agent).toBe(2);
        expect(wa?.epsilon_spent ?? 0).toBeGreaterThan(0);
      }
      expect(w.forge.epsilon_spent).toBeGreaterThan(0);
    }
    const [a, b] = forges as [Forge, Forge];
    expect(adapters(a.home, 'council')).toEqual(adapters(b.home, 'council'));
  }, 600_000);

  it('each forge sees its Council of Sisters; Cupid does not attend', () => {
    for (const f of forges) {
      const s = ok(kourai(['federate', 'scene', '--json'], { home: f.home }), 'federate scene') as {
        round: number;
        scenes: { beat: string; lines: { speaker: string; text: string }[] }[];
      };
      expect(s.round).toBe(2);
      expect(s.scenes[0]?.beat).toBe('council_of_sisters');
      const speakers = new Set(s.scenes[0]?.lines.map((l) => l.speaker));
      expect(speakers.has('cupid' as never)).toBe(false);
      expect([...speakers].filter((x) => x !== 'narrator').length).toBeGreaterThan(0);
      const text = kourai(['federate', 'scene'], { home: f.home });
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/Council of Sisters/i);
      // memoir replay tells the council_event entries too (the forge's council session).
      const events = (
        JSON.parse(readFileSync(join(f.home, 'federation', 'membership.json'), 'utf8')) as { events_memoir: string }
      ).events_memoir;
      const replay = kourai(['memoir', 'replay', '--memoir', events], { home: f.home });
      expect(replay.code, replay.stderr).toBe(0);
      expect(replay.stdout).toMatch(/Council of Sisters, round 1:/);
      expect(replay.stdout).toMatch(/Council of Sisters, round 2:/);
    }
  }, 120_000);

  it('bond adapters stay home and differ between the players; the council adapters stay equal', () => {
    for (const f of forges)
      ok(kourai(['train', 'bond', '--agent', 'techne', '--epochs', '3', '--json'], { home: f.home }), 'train bond');
    const [a, b] = forges as [Forge, Forge];
    expect(adapters(a.home, 'bond').techne).toBeDefined();
    expect(adapters(a.home, 'bond').techne).not.toEqual(adapters(b.home, 'bond').techne);
    expect(adapters(a.home, 'council')).toEqual(adapters(b.home, 'council'));
  }, 300_000);

  it('no canary, no private text and no player-written text crossed the wire', () => {
    for (const f of forges) {
      const bytes = f.wire.all();
      expect(bytes.length).toBeGreaterThan(0);
      const asText = [bytes.toString('latin1'), bytes.toString('utf8')];
      const secrets = [...f.canaries, ...privateTexts(f.memoirs)];
      expect(f.canaries.length).toBe(10);
      expect(secrets.length).toBeGreaterThan(f.canaries.length);
      const leaked = secrets.filter((s) => asText.some((t) => t.includes(s)));
      expect(leaked).toEqual([]);
      // And none of the canaries' distinctive prefix at all (a truncated leak).
      expect(asText.some((t) => t.includes('KOURAI-CANARY'))).toBe(false);
    }
  });

  it('with consent withdrawn, the same forge opens no connection at all', async () => {
    const f = forges[0] as Forge;
    ok(kourai(['federate', 'consent', '--deny', 'all', '--json'], { home: f.home }), 'withdraw consent');
    const before = { connections: f.wire.connections(), bytes: f.wire.all().length };
    const r = await kouraiAsync(['federate', 'round', '--json'], { home: f.home });
    expect(r.code).not.toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'no_consent' } });
    expect(r.stderr).toMatch(/nothing sent: no agent has consent/);
    expect({ connections: f.wire.connections(), bytes: f.wire.all().length }).toEqual(before);
  }, 120_000);
});
