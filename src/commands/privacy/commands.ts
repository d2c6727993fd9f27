import { BUDGET_FLAGS, JSON_FLAG, AGENT_LIST_FLAG, type CommandSpec } from '../spec.js';

export const epsilon = {
  name: 'epsilon',
  description: 'ε after some steps of the (sampled) Gaussian mechanism (RDP accountant, Opacus orders)',
  flags: [
    { flags: '--sigma <σ>', help: 'noise multiplier (required)' },
    { flags: '--sample-rate <q>', help: 'sampling rate in (0, 1]; a federation round is 1', default: '1' },
    { flags: '--steps <n>', help: 'number of steps (rounds)', default: '1' },
    { flags: '--delta <δ>', help: 'δ in (0, 1)', default: '1e-5' },
    JSON_FLAG,
  ],
  load: () => import('./epsilon.js'),
} as const satisfies CommandSpec;

export const sigma = {
  name: 'sigma',
  description: 'the smallest σ that keeps ε within a target over some steps',
  flags: [
    { flags: '--epsilon <ε>', help: 'target ε (required)' },
    { flags: '--sample-rate <q>', help: 'sampling rate in (0, 1]; a federation round is 1', default: '1' },
    { flags: '--steps <n>', help: 'number of steps (rounds)', default: '1' },
    { flags: '--delta <δ>', help: 'δ in (0, 1)', default: '1e-5' },
    JSON_FLAG,
  ],
  load: () => import('./sigma.js'),
} as const satisfies CommandSpec;

export const ledger = {
  name: 'ledger',
  description: 'every release recorded in the privacy ledger, with cumulative ε (exit 8 if the ledger is corrupt)',
  flags: [AGENT_LIST_FLAG, JSON_FLAG, ...BUDGET_FLAGS],
  load: () => import('./ledger.js'),
} as const satisfies CommandSpec;

export const release = {
  name: 'release',
  description: "clip and noise one agent's council delta, spending its budget first (exit 4 when exhausted)",
  flags: [
    { flags: '--agent <agent>', help: 'the agent that speaks' },
    { flags: '--round <id>', help: 'the federation round id' },
    {
      flags: '--file <path>',
      help: 'the delta: JSON {"tensors": [{"name", "shape", "dtype": "F32", "data": base64 | [numbers]}]}',
    },
    {
      flags: '--out <path>',
      help: 'write the release (exactly what the council client sends) here: JSON, or a safetensors body when the name ends in .safetensors',
    },
    {
      flags: '--base-fingerprint <sha>',
      help: "the base model's fingerprint (default: the one recorded when the forge joined its council)",
    },
    { flags: '--json', help: 'JSON output (includes the release document unless --out)' },
    ...BUDGET_FLAGS,
  ],
  load: () => import('./release.js'),
} as const satisfies CommandSpec;

export const privacyCommands: CommandSpec = {
  name: 'privacy',
  description: 'differential privacy: the RDP accountant, the ledger, releases',
  commands: [epsilon, sigma, ledger, release],
};
