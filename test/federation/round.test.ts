import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoundResult } from '../../src/federation/round/run-round.js';
import { readCouncilEvents } from '../../src/memoir/derive/council-event.js';
import { readMembership } from '../../src/federation/round/membership.js';
import { openStateDb } from '../../src/store/state-db.js';
import { AdapterRegistry } from '../../src/store/adapter-registry.js';
import { PrivacyLedger } from '../../src/store/privacy-ledger.js';
import { readSafetensors } from '../../src/tensor/safetensors.js';
import { FEDERATING_AGENTS } from '../../src/memoir/format/agents.js';
import { runCli } from '../helpers/run.js';
import { testCtx, type TestCtx } from '../helpers/ctx.js';
import type { TestCouncil } from '../council/helpers.js';
import { startForgeCouncil } from './helpers.js';

const synth = () => import('../../src/commands/memoir/synth.js');
const join = () => import('../../src/commands/federate/join.js');
const consent = () => import('../../src/commands/federate/consent.js');
const round = () => import('../../src/commands/federate/round.js');

let council: TestCouncil;
let a: TestCtx;
let b: TestCtx;

async function forge(player: string, name: string): Promise<TestCtx> {
  const ctx = testCtx();
  await runCli(synth, { player, json: true }, ctx);
  await runCli(join, { server: council.url, token: await council.token(name) }, ctx);
  await runCli(consent, { allow: ['all'] }, ctx);
  return ctx;
}

function councilTensors(home: string, agent: string): Record<string, number[]> {
  const db = openStateDb(home);
  try {
    const cur = new AdapterRegistry(db).current(agent, 'council');
    if (!cur) return {};
    const st = readSafetensors(readFileSync(`${home}/${cur.path}/adapter_model.safetensors`));
    return Object.fromEntries(st.tensors.map((t) => [t.name, Array.from(t.data)]));
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  council = await startForgeCouncil();
  a = await forge('ariadne', 'athens');
  b = await forge('theseus', 'sparta');
}, 120_000);
afterAll(async () => {
  await council.close();
  a.cleanup();
  b.cleanup();
});

describe('kourai federate round (two forges, a real council on 127.0.0.1)', () => {
  it("--dry-run prints exactly what would leave (S and σ from the council's published policy) and sends nothing", async () => {
    const { json } = await runCli(round, { dryRun: true, json: true }, a);
    const r = json as RoundResult & { outcome: 'dry_run' };
    expect(r.outcome).toBe('dry_run');
    expect(r.plan.round).toBe(1);
    const techne = r.plan.agents.find((x) => x.agent === 'techne');
    expect(techne).toMatchObject({
      verdict: 'speaks',
      starts_from: { kind: 'public_init' },
      clip_norm: 1,
      noise_multiplier: 10,
    });
    expect(r.plan.mechanism).toMatchObject({ source: 'council', clip_norm: 1, noise_multiplier: 10 });
    expect(techne?.tensors?.map((t) => t.name)).toEqual([
      'base_model.model.encoder.dense.lora_A.weight',
      'base_model.model.encoder.dense.lora_B.weight',
      'base_model.model.head.score.lora_A.weight',
      'base_model.model.head.score.lora_B.weight',
      'base_model.model.direct.score.lora_A.weight',
      'base_model.model.direct.score.lora_B.weight',
    ]);
    expect(r.plan.agents.find((x) => x.agent === 'cupid')).toMatchObject({ verdict: 'bond_only', speaks: false });
    const status = await fetch(`${council.url}/v1/rounds/1`, {
      headers: { 'kourai-protocol': '2', authorization: `Bearer ${readMembership(a.home)?.token}` },
    }).then((x) => x.json() as Promise<any>);
    expect(status.you.submitted).toEqual([]);
    expect(status.forges_submitted).toBe(0);
  }, 120_000);

  it('both forges complete round 1 and come home with the same council adapters', async () => {
    const [ra, rb] = await Promise.all([runCli(round, { json: true }, a), runCli(round, { json: true }, b)]);
    const x = ra.json as RoundResult & { outcome: 'completed' };
    const y = rb.json as RoundResult & { outcome: 'completed' };
    expect(x.outcome).toBe('completed');
    expect(y.outcome).toBe('completed');
    expect(x.round).toBe(1);
    expect(x.details.spoke.length).toBeGreaterThan(0);
    for (const agent of FEDERATING_AGENTS) expect(councilTensors(a.home, agent)).toEqual(councilTensors(b.home, agent));
    expect(Object.keys(councilTensors(a.home, 'techne')).length).toBe(6);
    const events = readCouncilEvents(readMembership(a.home)?.events_memoir ?? '');
    expect(events.map((e) => e.details.beat)).toEqual(['council_of_sisters']);
    const db = openStateDb(a.home);
    expect(new PrivacyLedger(db).releases().length).toBe(x.details.spoke.length);
    expect(new AdapterRegistry(db).list({ kind: 'bond' })).toEqual([]);
    db.close();
  }, 300_000);
});
