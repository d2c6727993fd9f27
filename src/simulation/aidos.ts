import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FederatingAgent } from '../memoir/format/agents.js';
import { slopProbe } from '../memoir/sample/planted/slop.js';
import { clipToNorm } from '../privacy/clip.js';
import { buildRelease } from '../privacy/release.js';
import { tensorFromJson } from '../tensor/json.js';
import type { NamedTensor } from '../tensor/tensor.js';
import { loraToTensors, tensorsToLora } from '../train/adapter-layout.js';
import { loraWeights, type LoraWeights } from '../train/lora.js';
import { DEFAULT_SETTINGS } from '../train/trainer.js';
import {
  bondsAlone,
  cellPrivacy,
  checkStop,
  councilSettings,
  dimsOf,
  drawCohort,
  measuredForges,
  meanOf,
  sub,
  trainAll,
  type CellHooks,
  type SeedContext,
} from './cell.js';
import { layoutsFor } from './council-port.js';
import { cellKey, cohortByzantine, samplingOf, type Cell } from './experiment.js';
import type { AppliedAdapter, LabelledProbe } from './evaluate.js';
import type { SimForge } from './forges.js';
import { seededSampler } from './sim-privacy.js';
import { confusionOf, f1Of, precisionOf, recallOf, type Confusion } from './slop-f1.js';

/**
 * Aidos's slop-detection F1, the design's first research metric: "federated Aidos slop-detection
 * F1 vs. single-forge baseline across rounds". Beside the clean reference cell, on the same
 * cohorts, the same strategy and the same privacy policy, the forges federate Aidos's council
 * adapter through a council of its own; after every round it is scored on held-out slop
 * (`slopProbe`: phrases no forge ever wrote, words no memoir holds; slop is the positive class).
 * The baselines are single forges that never federate (the measured honest forges): each trains
 * its own adapter on the same council view from the same public initialisation, with the same
 * epochs per round, and, once, a bond adapter to convergence on all its data (what `train bond`
 * gives a forge alone). Bond + council: that bond trained over the final council adapter.
 */

export interface Detection {
  f1: number;
  precision: number;
  recall: number;
}

export interface AidosResult {
  /** The federated council adapter after each round. */
  federated: Detection[];
  /** A single forge's own adapter after as many rounds' epochs, alone (mean over the measured forges). */
  single: Detection[];
  /** A single forge's bond adapter trained to convergence on all its data (mean over the measured forges). */
  singleConverged: Detection;
  /** That bond trained over the final federated council adapter (mean over the measured forges). */
  bondCouncil: Detection;
  /** The trivial detector that calls every passage slop (F1 2/3 on a balanced probe, precision 1/2). */
  allSlop: Detection;
  /** Single forges measured, and texts in the held-out probe (half of them slop). */
  forges: number;
  probe: number;
}

const AIDOS: FederatingAgent = 'aidos';

function detectionOf(c: Confusion): Detection {
  return { f1: f1Of(c), precision: precisionOf(c), recall: recallOf(c) };
}

function meanDetection(ds: readonly Detection[]): Detection {
  return {
    f1: meanOf(ds.map((d) => d.f1)),
    precision: meanOf(ds.map((d) => d.precision)),
    recall: meanOf(ds.map((d) => d.recall)),
  };
}

/** The held-out slop probe of a seed (built once per seed). */
function slopProbeOf(sc: SeedContext): LabelledProbe {
  return sc.evaluator.labelled(`slop|${sc.seed}`, AIDOS, () =>
    slopProbe(sc.seed, sc.x.heldOut).map((p) => ({ text: p.text, positive: p.slop })),
  );
}

export async function runAidos(sc: SeedContext, cell: Cell, hooks: CellHooks): Promise<AidosResult> {
  const { x, base, forges, evaluator } = sc;
  const spec = base.spec;
  const settings0 = councilSettings(x, sc.seed, 1);
  const dataDir = join(hooks.dataDir, 'aidos');
  mkdirSync(dataDir, { recursive: true });
  const port = await hooks.port({
    strategy: cell.strategy,
    byzantine: cohortByzantine(x, samplingOf(x, cell.epsilon)),
    forges: forges.map((g) => g.name),
    baseFingerprint: sc.fingerprint,
    layouts: layoutsFor(spec, [AIDOS], settings0.rank),
    privacy: cellPrivacy(x, { epsilon: cell.epsilon, noise: 'local' }, x.clipNorm),
    serverLr: x.serverLr,
    dataDir,
    rootMemoir: sc.rootMemoir,
  });
  const probe = slopProbeOf(sc);
  const score = (adapters: AppliedAdapter[]): Detection => detectionOf(evaluator.confusion(probe, adapters));
  const dims = dimsOf(base, AIDOS, settings0.rank);
  const solo = measuredForges(sc);
  const federated: Detection[] = [];
  const single: Detection[] = [];
  try {
    const g0 = await port.global(AIDOS);
    if (!g0) throw new Error('the council published no aidos adapter to start from');
    let global = tensorsToLora(spec, AIDOS, settings0.rank, g0);
    let alone: Float64Array[] = solo.map(() => global.all);
    for (let r = 1; r <= x.rounds; r++) {
      checkStop(hooks.signal);
      const round = await port.currentRound();
      const policy = await port.policy(round);
      const S = policy.clipNorm;
      const sigma = policy.noiseMultiplier;
      const cohort = await drawCohort(sc, cell, port, r);
      const settings = councilSettings(x, sc.seed, r);
      // The cohort's council trainings and the single forges' own, side by side (a forge's round 1
      // is the same training either way: both start from the public initialisation).
      const key = (g: SimForge): string | null => (r === 1 ? `r1|${g.index}|${AIDOS}|semantic` : null);
      const trained = await trainAll(
        sc,
        [
          ...cohort.map((g) => ({
            key: key(g),
            agent: AIDOS,
            examples: g.council.get(AIDOS) ?? [],
            start: global.all,
            settings,
          })),
          ...solo.map((g, i) => ({
            key: key(g),
            agent: AIDOS,
            examples: g.council.get(AIDOS) ?? [],
            start: alone[i] as Float64Array,
            settings,
          })),
        ],
        hooks.signal,
      );
      alone = solo.map((_, i) => trained[cohort.length + i] ?? (alone[i] as Float64Array));
      for (const [i, g] of cohort.entries()) {
        const lora = trained[i] ?? null;
        const update = lora ? sub(lora, global.all) : new Float64Array(global.all.length);
        const tensors = loraToTensors(spec, AIDOS, loraWeights(dims, update));
        const released: NamedTensor[] =
          sigma > 0
            ? buildRelease({
                round: `sim-${r}`,
                agent: AIDOS,
                baseFingerprint: sc.fingerprint,
                delta: tensors,
                clipNorm: S,
                noiseMultiplier: sigma,
                sampler: seededSampler(`${cellKey(cell)}|${g.name}|${r}|${AIDOS}`),
              }).release.tensors.map(tensorFromJson)
            : clipToNorm(tensors, S).tensors;
        await port.submit(g.index, round, AIDOS, {
          baseFingerprint: sc.fingerprint,
          clipNorm: S,
          noiseMultiplier: sigma,
          tensors: released,
        });
      }
      for (const g of cohort) await port.seal(g.index, round);
      await port.finishRound(round);
      const g = await port.global(AIDOS);
      if (g) global = tensorsToLora(spec, AIDOS, settings0.rank, g);
      federated.push(score([{ lora: global, alpha: settings0.alpha }]));
      single.push(meanDetection(alone.map((a) => score([{ lora: loraWeights(dims, a), alpha: settings0.alpha }]))));
    }
    const converged = await bondsAlone(sc, AIDOS, solo, hooks.signal);
    const bondSettings = { ...DEFAULT_SETTINGS, seed: sc.seed };
    const council: LoraWeights = global;
    const onTop = await sc.pool.run(
      solo.map((f) => ({
        agent: AIDOS,
        kind: 'bond',
        examples: f.bond.get(AIDOS) ?? [],
        start: null,
        frozen: [{ all: council.all, rank: council.rank, alpha: settings0.alpha }],
        settings: bondSettings,
      })),
    );
    checkStop(hooks.signal);
    const bondDims = dimsOf(base, AIDOS, bondSettings.rank);
    const c = { lora: council, alpha: settings0.alpha };
    return {
      federated,
      single,
      singleConverged: meanDetection(
        converged.map((a) => (a ? score([{ lora: a, alpha: bondSettings.alpha }]) : score([]))),
      ),
      bondCouncil: meanDetection(
        onTop.map((t) => score(t ? [c, { lora: loraWeights(bondDims, t), alpha: bondSettings.alpha }] : [c])),
      ),
      allSlop: detectionOf(
        confusionOf(
          probe.items.map(() => true),
          probe.items.map((p) => p.positive),
        ),
      ),
      forges: solo.length,
      probe: probe.items.length,
    };
  } finally {
    await port.close();
  }
}
