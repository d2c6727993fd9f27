import { join } from 'node:path';
import { defaults, type CouncilConfig } from '../../src/council/config.js';
import { addForge } from '../../src/council/forges.js';
import { startCouncilServer, type CouncilServer } from '../../src/council/server.js';
import { f32ToBase64 } from '../../src/tensor/float-codec.js';
import type { Submission } from '../../src/federation/protocol.js';
import type { Clock } from '../../src/runtime/clock.js';
import { gaussian, rng } from '../aggregation/helpers.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { randomBytes } from 'node:crypto';

export const FINGERPRINT = 'sha256:base-model-test';
export const SPECS = [
  { name: 'layers.0.q_proj.lora_A.weight', shape: [2, 8] },
  { name: 'layers.0.q_proj.lora_B.weight', shape: [6, 2] },
];
export const COORDS = 28;

export interface TestCouncil {
  server: CouncilServer;
  dir: string;
  config: CouncilConfig;
  logs: string[];
  url: string;
  token(name: string): Promise<string>;
  close(): Promise<void>;
}

export async function startTestCouncil(over: Partial<CouncilConfig> = {}, dir = tempDir('kourai-council-'), clock?: Clock): Promise<TestCouncil> {
  const config: CouncilConfig = { ...defaults(dir), data_dir: join(dir, 'council'), port: 0, base_fingerprints: [FINGERPRINT], strategy: 'fedavg', min_forges: 3, layouts: { '*': SPECS }, noise_multiplier: { min: 0, max: 10 }, ...over };
  const logs: string[] = [];
  const server = await startCouncilServer({ config, log: (l) => logs.push(l), ...(clock ? { clock } : {}) });
  return {
    server,
    dir,
    config,
    logs,
    url: server.url,
    token: async (name) => (await addForge(server.storage, name, randomBytes, new Date())).token,
    close: async () => {
      await server.close();
      removeDir(dir);
    },
  };
}

/** A small update: values ~ N(centre, spread²) per coordinate, seeded. */
export function update(seed: number, opts: { centre?: number; spread?: number; specs?: typeof SPECS } = {}): { name: string; shape: number[]; data: Float32Array }[] {
  const rand = rng(seed);
  return (opts.specs ?? SPECS).map((s) => {
    const n = s.shape.reduce((a, b) => a * b, 1);
    return { name: s.name, shape: s.shape, data: Float32Array.from({ length: n }, () => (opts.centre ?? 0) + (opts.spread ?? 0.05) * gaussian(rand)) };
  });
}

export function body(tensors: { name: string; shape: number[]; data: Float32Array }[], over: Partial<Submission> = {}): Submission {
  return {
    base_fingerprint: FINGERPRINT,
    privacy: { clip_norm: 1, noise_multiplier: 0 },
    tensors: tensors.map((t) => ({ name: t.name, shape: t.shape, dtype: 'F32', data: f32ToBase64(t.data) })),
    ...over,
  };
}

export async function call(url: string, method: string, route: string, token: string | null, payload?: unknown): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(`${url}${route}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(payload !== undefined ? { body: typeof payload === 'string' ? payload : JSON.stringify(payload) } : {}),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}
