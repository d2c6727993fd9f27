import type { Detection } from '../../src/simulation/aidos.js';
import type { CellResult, Quality } from '../../src/simulation/cell.js';
import {
  cellKey,
  type Attack,
  type Cell,
  type Experiment,
  type Noise,
  type Share,
  type SimStrategy,
  type Split,
} from '../../src/simulation/experiment.js';

/** Hand-made cell results (two seeds) covering every section of the report. */
export const FIXTURE_EXPERIMENT: Experiment = {
  forges: 5,
  byzantine: 1,
  rounds: 3,
  agents: ['techne'],
  sessions: 2,
  turns: 4,
  strategies: ['fedavg-naive', 'multikrum+lora-fair'],
  attacks: ['none', 'sign-flip', 'collude'],
  epsilon: Infinity,
  epsilons: [1, 8, Infinity],
  reference: 'multikrum+lora-fair',
  seeds: [1, 2],
  localEpochs: 1,
  clipNorm: 1,
  serverLr: 2,
  delta: 1e-5,
  heldOut: 10,
  cohort: 5,
  personalSample: 24,
  coldStart: [1, 8],
  newcomers: 2,
  rootSet: false,
};

const det = (f1: number): Detection => ({ f1, precision: f1 - 0.1, recall: f1 + 0.1 });
const q = (all: number): Quality => ({ personal: all, craft: all - 0.05, all });

export function fixtureCells(): CellResult[] {
  const out: CellResult[] = [];
  const cell = (
    strategy: SimStrategy,
    attack: Attack,
    seed: number,
    council: number,
    o: {
      epsilon?: number;
      split?: Split;
      personal?: boolean;
      exile?: boolean;
      noise?: Noise;
      share?: Share;
      coldStart?: boolean;
      aidos?: boolean;
    } = {},
  ): void => {
    const c: Cell = {
      strategy,
      attack,
      epsilon: o.epsilon ?? Infinity,
      split: o.split ?? 'semantic',
      noise: o.noise ?? 'local',
      share: o.share ?? 'full',
      seed,
    };
    out.push({
      key: cellKey(c),
      cell: c,
      sigma: o.epsilon === 1 ? 5.2 : o.epsilon === 8 ? 0.9 : 0,
      agents: {},
      council: council + seed * 0.01,
      curve: [0.5, (0.5 + council) / 2, council + seed * 0.01],
      personal: o.personal ? { bondCouncil: q(0.9), councilOnly: q(0.62), bondOnly: q(0.86), forges: 4 } : null,
      coldStart: o.coldStart
        ? [
            { sessions: 1, bondCouncil: q(0.8), councilOnly: q(0.62), bondOnly: q(0.6 + seed * 0.01), forges: 2 },
            { sessions: 8, bondCouncil: q(0.9), councilOnly: q(0.62), bondOnly: q(0.86 + seed * 0.01), forges: 2 },
          ]
        : null,
      aidos: o.aidos
        ? {
            federated: [det(0.6), det(0.7 + seed * 0.01), det(0.78)],
            single: [det(0.5), det(0.52), det(0.55 + seed * 0.01)],
            singleConverged: det(0.56),
            bondCouncil: det(0.6),
            allSlop: { f1: 2 / 3, precision: 0.5, recall: 1 },
            forges: 4,
            probe: 10,
          }
        : null,
      exiles: o.exile ? [{ forge: 'forge-03', round: 3, byzantine: true }] : [],
      falseExiles: 0,
      forgeRounds: 15,
      rounds: [],
      privacy: {
        sigma: 0,
        releaseSigma: 0,
        q: 1,
        rounds: 3,
        observerEpsilon: Infinity,
        releases: { max: 3, mean: 3, never: 0 },
        forgeLedgerEpsilon: Infinity,
        limited: 0,
        sharedValues: 135176,
      },
    });
  };
  for (const seed of [1, 2]) {
    cell('fedavg-naive', 'none', seed, 0.75);
    cell('fedavg-naive', 'sign-flip', seed, 0.6);
    cell('fedavg-naive', 'collude', seed, 0.3);
    cell('multikrum+lora-fair', 'none', seed, 0.78, { personal: true, coldStart: true, aidos: true });
    cell('multikrum+lora-fair', 'sign-flip', seed, 0.77, { exile: true });
    cell('multikrum+lora-fair', 'collude', seed, 0.74);
    cell('multikrum+lora-fair', 'none', seed, 0.55, { epsilon: 1, personal: true });
    cell('multikrum+lora-fair', 'none', seed, 0.7, { epsilon: 8, personal: true });
    cell('multikrum+lora-fair', 'none', seed, 0.7, { split: 'param-random', personal: true });
    cell('multikrum+lora-fair', 'none', seed, 0.72, { split: 'fedsa', personal: true });
    cell('multikrum+lora-fair', 'none', seed, 0.76, { share: 'small' });
    cell('multikrum+lora-fair', 'none', seed, 0.6, { epsilon: 8, share: 'small' });
    cell('fedavg', 'none', seed, 0.66, { epsilon: 8, noise: 'distributed' });
    cell('fedavg', 'none', seed, 0.73, { epsilon: 8, noise: 'distributed', share: 'small' });
  }
  return out;
}
