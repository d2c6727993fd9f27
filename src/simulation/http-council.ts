import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { envName } from '../council/config.js';
import { addForge } from '../council/forges.js';
import { SqliteCouncilStorage } from '../council/sqlite-storage.js';
import { CouncilClient } from '../federation/council-client.js';
import type { CouncilPort, CouncilSetup } from './council-port.js';
import { roundPolicyOf, simCouncilConfig } from './council-port.js';

/**
 * The same council as a separate process: `kourai council serve` on 127.0.0.1 (port 0), each
 * simulated forge a `CouncilClient` with its own token, every update crossing HTTP as JSON. The
 * settings are exactly the in-process council's (simCouncilConfig), given as flags. Rounds close
 * when every forge has sealed; after an exile (an exiled forge can no longer seal) a round closes
 * at the council's deadline, HTTP_DEADLINE_S of real time.
 */
export const HTTP_DEADLINE_S = 120;

const BIN = fileURLToPath(new URL('../../bin/kourai.js', import.meta.url));

export async function httpCouncil(s: CouncilSetup): Promise<CouncilPort> {
  const config = simCouncilConfig(s);
  const storage = new SqliteCouncilStorage(s.dataDir);
  const tokens: string[] = [];
  try {
    for (const name of s.forges) tokens.push((await addForge(storage, name, randomBytes, new Date())).token);
  } finally {
    await storage.close();
  }
  const layoutsFile = join(s.dataDir, 'layouts.json');
  writeFileSync(layoutsFile, JSON.stringify(config.layouts));
  const args = [
    'council',
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--data-dir',
    s.dataDir,
    '--base-fingerprint',
    s.baseFingerprint,
    '--strategy',
    config.strategy,
    '--byzantine',
    String(config.byzantine),
    '--min-forges',
    String(config.min_forges),
    '--round-deadline',
    `${HTTP_DEADLINE_S}s`,
    '--threads',
    '1',
    '--json',
  ];
  args.push(
    '--layouts',
    layoutsFile,
    '--clip-norm',
    String(s.privacy.clipNorm),
    '--noise-multiplier',
    `${config.noise_multiplier.min}..${config.noise_multiplier.max}`,
    '--tail-margin',
    String(config.tail_margin),
    '--server-lr',
    String(config.server_lr),
  );
  if (config.epsilon !== null)
    args.push(
      '--epsilon',
      String(config.epsilon),
      '--epsilon-rounds',
      String(config.epsilon_rounds),
      '--delta',
      String(config.delta),
    );
  // Settings only a driver that draws its own cohorts needs: given as the environment.
  const driven: Record<string, string> = {};
  if (config.sample_rate !== null) driven[envName('sample_rate')] = String(config.sample_rate);
  if (config.noise_shares !== null) driven[envName('noise_shares')] = String(config.noise_shares);
  if (config.selection) args.push('--selection', config.selection);
  if (config.root_memoir) args.push('--root-memoir', config.root_memoir);
  const proc = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: s.dataDir, KOURAI_HOME: s.dataDir, CI: '1', ...driven },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    lines.once('line', (line) => {
      try {
        resolve((JSON.parse(line) as { url: string }).url);
      } catch (err) {
        reject(err as Error);
      }
    });
    proc.once('exit', (code) =>
      reject(new Error(`kourai council serve exited ${code}: ${stderr.trim().split('\n').pop() ?? ''}`)),
    );
  });
  const clients = tokens.map((token) => new CouncilClient({ url, token, timeoutMs: 120_000 }));
  const client = (i: number): CouncilClient => clients[i] as CouncilClient;
  const trusts = (): Promise<{ trust: number; exiled_round: number | null }[]> =>
    Promise.all(clients.map((c) => c.trust()));
  return {
    where: url,
    currentRound: async () => (await client(0).currentRound()).round,
    policy: async (round) => roundPolicyOf(await client(0).round(round)),
    submit: async (i, round, agent, update) => {
      await client(i).submit(round, agent, update);
    },
    seal: async (i, round) => {
      await client(i).seal(round);
    },
    finishRound: async (round) => {
      await client(0).waitForRound(round, { pollMs: 50 });
    },
    global: async (agent) => (await client(0).globalAdapter(agent))?.tensors ?? null,
    exiles: async () =>
      new Map(
        (await trusts()).flatMap((t, i) => (t.exiled_round !== null ? [[i, t.exiled_round] as [number, number]] : [])),
      ),
    trust: async () => (await trusts()).map((t) => t.trust),
    rootEffects: () => Promise.resolve(null),
    close: () => stop(proc),
  };
}

function stop(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    p.once('exit', () => resolve());
    p.kill('SIGTERM');
  });
}
