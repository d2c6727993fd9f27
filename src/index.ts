/** Library API for Node hosts: `import { Memoir } from 'kourai'`. */
export { Memoir } from './memoir/memoir.js';
export type { MemoirEntry, MemoirInput, MemoirLine } from './memoir/schema.js';
export { AGENTS, FEDERATING_AGENTS, BOND_ONLY_AGENTS, type Agent } from './memoir/agents.js';
export { SOURCES, ENTRY_TYPES, type Source, type EntryType } from './memoir/sources.js';
export { decideSplit, isShareable } from './memoir/split-rule.js';
export { encodeEntry } from './memoir/encode.js';
export { KouraiError, ExitCode } from './errors.js';
