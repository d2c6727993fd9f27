/** Library API for Node hosts: `import { Memoir } from 'kourai'`. */
export { Memoir } from './memoir/memoir.js';
export type { MemoirEntry, MemoirInput, MemoirLine } from './memoir/schema.js';
export { AGENTS, FEDERATING_AGENTS, BOND_ONLY_AGENTS, type Agent } from './memoir/agents.js';
export { SOURCES, ENTRY_TYPES, type Source, type EntryType } from './memoir/sources.js';
export { decideSplit, isShareable } from './memoir/split-rule.js';
export { encodeEntry } from './memoir/encode.js';
export { KouraiError, ExitCode } from './errors.js';
export { isLoadBearing, loadBearingVerdict } from './memoir/load-bearing.js';
export { selectReplayBuffer, type ReplayBuffer, type BufferCandidate } from './memoir/replay-buffer.js';
export { RevisionGraph } from './memoir/revisions.js';
export { openIndex, MemoirIndex } from './store/memoir-index.js';
export { replayBufferFromIndex } from './store/replay-candidates.js';
export { epsilonFor, sigmaForEpsilon, computeRdp, rdpToEpsilon, RdpAccountant, DEFAULT_ORDERS } from './privacy/rdp-accountant.js';
export { PrivacyGate } from './privacy/round-gate.js';
export type { NamedTensor } from './federation/tensor.js';
