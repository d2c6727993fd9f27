/** Library API for Node hosts: `import { Memoir } from 'kourai'`. */
import { kouraiHome } from './context.js';
import { Scorer, type ScorerOptions } from './train/scorer.js';

export { Memoir } from './memoir/file/memoir.js';
export type { MemoirEntry, MemoirInput, MemoirLine } from './memoir/format/schema.js';
export { AGENTS, FEDERATING_AGENTS, BOND_ONLY_AGENTS, type Agent } from './memoir/format/agents.js';
export { SOURCES, ENTRY_TYPES, type Source, type EntryType } from './memoir/format/sources.js';
export { decideSplit, isShareable } from './memoir/format/split-rule.js';
export { encodeEntry } from './memoir/format/encode.js';
export { KouraiError, ExitCode } from './errors.js';
export { isLoadBearing, loadBearingVerdict } from './memoir/derive/load-bearing.js';
export { selectReplayBuffer, type ReplayBuffer, type BufferCandidate } from './memoir/derive/replay-buffer.js';
export { RevisionGraph } from './memoir/derive/revisions.js';
export { openIndex, MemoirIndex } from './memoir-index/memoir-index.js';
export { replayBufferFromIndex } from './memoir-index/replay-candidates.js';
export {
  epsilonFor,
  sigmaForEpsilon,
  computeRdp,
  rdpToEpsilon,
  RdpAccountant,
  DEFAULT_ORDERS,
} from './privacy/rdp-accountant.js';
export { PrivacyGate } from './privacy/round-gate.js';
export type { NamedTensor, TensorData, TensorSpec } from './tensor/tensor.js';
export { readSafetensors, writeSafetensors } from './tensor/safetensors.js';
export { readSafetensorsFile, writeSafetensorsFile } from './tensor/safetensors-file.js';
export { tensorFromJson, tensorToJson, TensorJsonSchema, type TensorJson } from './tensor/json.js';
export { SafetensorsError, TensorError } from './tensor/errors.js';
export { heldOutPairs, type HeldOutPair } from './memoir/sample/planted/held-out.js';
export {
  PERSONAL_PREFERENCES,
  CRAFT_PREFERENCES,
  PREFERENCE_TEXT,
  type PreferenceId,
} from './memoir/sample/planted/catalogue.js';
export { profileFor, parsePreferences, NAMED_PROFILES, type PlayerProfile } from './memoir/sample/planted/profiles.js';
export { councilFields, type CouncilFields } from './memoir/derive/council-fields.js';
export {
  bondView,
  councilView,
  DEFAULT_VIEW_BOUND,
  type ExampleSource,
  type ViewOptions,
} from './train/examples/views.js';
export { routeText, ROUTE_LABELS } from './train/examples/route-text.js';
export type { Example, ExampleKind, DataView, ChosenBy } from './train/examples/types.js';
export {
  Scorer,
  type ScorerOptions,
  type ScoreResult,
  type RouteResult,
  type RankedCandidate,
  type Use,
} from './train/scorer.js';
export { adapterLayout, targetModules, headOf, loraToTensors, tensorsToLora } from './train/adapter-layout.js';
export { builtinBaseSpec, embeddingsBaseSpec, SPECIALISTS, type BaseSpec } from './train/base-spec.js';
export { BaseModel } from './train/base-model.js';
export { BUILTIN_FINGERPRINT, fingerprintOf } from './train/fingerprint.js';
export {
  train,
  DEFAULT_SETTINGS,
  type TrainSettings,
  type TrainJob,
  type TrainReport,
  type TrainOutcome,
} from './train/trainer.js';
export { trainCouncil, type CouncilTrainingInput, type CouncilTrainingResult } from './train/council-training.js';
export { TrainerWorker } from './train/train-in-worker.js';
export { openTextEncoder, type TextEncoder } from './train/text-encoder.js';
export { learnConfig, leanFor, mixing, type LearnConfig } from './train/learn-config.js';
export { AdapterStore } from './train/adapter-store.js';

/**
 * The scorer of a forge (`$KOURAI_HOME`, or `home`) for one agent: `rank(candidates)` for best-of-n
 * reranking, `route(task)` for Hephaestus. Opens the agent's current adapters once; close it.
 */
export function openScorer(
  o: Omit<ScorerOptions, 'home' | 'env' | 'signal'> & Partial<Pick<ScorerOptions, 'home' | 'env' | 'signal'>>,
): Promise<Scorer> {
  const env = o.env ?? process.env;
  return Scorer.open({
    ...o,
    env,
    home: o.home ?? kouraiHome({ env, cwd: process.cwd() }),
    signal: o.signal ?? new AbortController().signal,
  });
}
