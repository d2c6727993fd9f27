import { memoirFlag, AGENT_LIST_FLAG, type CommandSpec } from '../spec.js';

export const bond = {
  name: 'bond',
  description:
    'train every agent’s bond adapter (private entries included; it never leaves this machine) and make it current',
  flags: [
    AGENT_LIST_FLAG,
    {
      flags: '--epochs <n>',
      help: 'most epochs of the nonlinear path (early stopping may end sooner; default 20)',
    },
    {
      flags: '--patience <n>',
      help: 'epochs without a better validation pairwise accuracy before stopping (default 5)',
    },
    {
      flags: '--l2 <x>',
      help: 'the direct path’s L2 penalty (default: chosen by cross-validation on the training scenes)',
    },
    { flags: '--rank <r>', help: 'LoRA rank (default 8)' },
    { flags: '--lr <x>', help: 'learning rate (default 0.01)' },
    { flags: '--seed <n>', help: 'seed: same data and seed, byte-identical adapters (default 7)' },
    {
      flags: '--buffer <n>',
      help: 'replay buffer per agent: load-bearing entries, then the most informative up to n (default 5000)',
    },
    { flags: '--json', help: 'print the final report as JSON' },
    memoirFlag(),
  ],
  load: () => import('./bond.js'),
} as const satisfies CommandSpec;

export const trainCommands: CommandSpec = {
  name: 'train',
  description: 'train adapters from the memoir on this machine',
  commands: [bond],
};
