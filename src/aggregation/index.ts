/**
 * Aggregation rules, one file per rule:
 *   fedavg.ts            FedAvg (weighted mean)
 *   coordinate-median.ts coordinate-wise median
 *   trimmed-mean.ts      coordinate-wise trimmed mean
 *   krum.ts              Krum and Multi-Krum
 *   bulyan.ts            Bulyan
 *   lora-fair.ts         LoRA-FAIR refinement of B̄ for LoRA factors
 *   pairwise-distances.ts  squared distances (Gram form, WebAssembly SIMD; exact fallback)
 *   echo.ts              echoes (near-identical updates): found once, counted once by the selecting rules
 *   strategy.ts          strategy selection and the streaming driver used by the council
 *   layout.ts            LoRA A/B pairing (layouts themselves: src/tensor/layout.ts)
 */
export { fedavg, weightedMeanInto } from './fedavg.js';
export { coordinateMedian, medianInto } from './coordinate-median.js';
export { trimmedMean, trimmedMeanInto } from './trimmed-mean.js';
export {
  krum,
  multiKrum,
  krumScores,
  krumSelect,
  multiKrumSelect,
  type KrumResult,
  type MultiKrumResult,
} from './krum.js';
export { bulyan, bulyanSelect, bulyanCombineInto, type BulyanResult } from './bulyan.js';
export * from './lora-fair.js';
export {
  pairwiseSquaredDistances,
  GramAccumulator,
  directSquaredDistance,
  type DistanceMatrix,
} from './pairwise-distances.js';
export * from './strategy.js';
export { echoGroups, collapseEchoes, type EchoGeometry, type UpdateStats } from './echo.js';
export { GramPool } from './gram-pool.js';
export * from './layout.js';
export type { RuleResult } from './rule-result.js';
export { AggregationError, type Vec } from './vec.js';
