import { JSON_FLAG, AGENT_LIST_FLAG, type CommandSpec } from '../spec.js';

export const list = {
  name: 'list',
  description: 'every adapter version, the current ones marked, with validation metrics',
  flags: [
    AGENT_LIST_FLAG,
    { flags: '--kind <kind>', help: 'bond or council (default bond)', choices: ['bond', 'council'] },
    { flags: '--all', help: 'include pruned versions' },
    JSON_FLAG,
  ],
  load: () => import('./list.js'),
} as const satisfies CommandSpec;

export const show = {
  name: 'show',
  description: 'one version in detail: PEFT config, tensors, metrics, data window (checked whole)',
  args: [{ name: '<agent>', help: 'the agent' }],
  flags: [
    { flags: '--kind <kind>', help: 'bond or council (default bond)', choices: ['bond', 'council'] },
    { flags: '--version <n>', help: 'the version (default: current)' },
    JSON_FLAG,
  ],
  load: () => import('./show.js'),
} as const satisfies CommandSpec;

export const diff = {
  name: 'diff',
  description: 'how two versions differ: norms of their effective updates and of the difference, metrics',
  args: [{ name: '<agent>', help: 'the agent' }],
  flags: [
    { flags: '--kind <kind>', help: 'bond or council (default bond)', choices: ['bond', 'council'] },
    { flags: '--from <n>', help: 'the older version (default: the one --to was trained after)' },
    { flags: '--to <n>', help: 'the newer version (default: current)' },
    JSON_FLAG,
  ],
  load: () => import('./diff.js'),
} as const satisfies CommandSpec;

export const exportCommand = {
  name: 'export',
  description: 'copy a version to a directory in PEFT’s file layout (adapter_model.safetensors + adapter_config.json)',
  args: [{ name: '<agent>', help: 'the agent' }],
  flags: [
    { flags: '--kind <kind>', help: 'bond or council (default bond)', choices: ['bond', 'council'] },
    { flags: '--version <n>', help: 'the version (default: current)' },
    { flags: '--out <dir>', help: 'a new or empty directory', required: true },
    JSON_FLAG,
  ],
  load: () => import('./export.js'),
} as const satisfies CommandSpec;

export const rollback = {
  name: 'rollback',
  description: 'make an earlier version current again (default: the one the current version was trained after)',
  args: [{ name: '<agent>', help: 'the agent' }],
  flags: [
    { flags: '--kind <kind>', help: 'bond or council (default bond)', choices: ['bond', 'council'] },
    { flags: '--to <n>', help: 'the version to make current' },
    JSON_FLAG,
  ],
  load: () => import('./rollback.js'),
} as const satisfies CommandSpec;

export const prune = {
  name: 'prune',
  description: 'delete the files of old versions (the current one and --keep more stay; history stays)',
  flags: [
    AGENT_LIST_FLAG,
    { flags: '--kind <kind>', help: 'bond or council (default bond)', choices: ['bond', 'council'] },
    { flags: '--keep <n>', help: 'versions kept besides the current one (default 3)' },
    { flags: '--dry-run', help: 'say what would be deleted' },
    JSON_FLAG,
  ],
  load: () => import('./prune.js'),
} as const satisfies CommandSpec;

export const adaptersCommands: CommandSpec = {
  name: 'adapters',
  description: 'adapter versions: list, inspect, compare, export, roll back, prune',
  commands: [list, show, diff, exportCommand, rollback, prune],
};
