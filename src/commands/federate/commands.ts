import { memoirFlag, BUDGET_FLAGS, JSON_FLAG, type CommandSpec } from '../spec.js';

export const join = {
  name: 'join',
  description:
    'join a council: checks its protocol, the token and the base model, then stores the URL and token in a file only you can read',
  flags: [
    { flags: '--server <url>', help: 'the council, e.g. https://council.example.org' },
    {
      flags: '--token <token>',
      help: "this forge's token from the council operator (- reads it from stdin; or KOURAI_COUNCIL_TOKEN)",
    },
    { flags: '--token-file <file>', help: 'read the token from a file' },
    {
      flags: '--retry-for <duration>',
      help: 'how long to keep retrying a council that is down, silent or failing (default 1m)',
    },
    { flags: '--json', help: 'JSON output (never includes the token)' },
  ],
  load: () => import('./join.js'),
} as const satisfies CommandSpec;

export const leave = {
  name: 'leave',
  description: "forget the council's URL and this forge's token (spent budget, consent and council events stay)",
  flags: [JSON_FLAG],
  load: () => import('./leave.js'),
} as const satisfies CommandSpec;

export const round = {
  name: 'round',
  description:
    'one federation round: each consenting agent trains her council adapter on shareable entries, clipped and noised within the Whisper Limit, is sent, and the aggregate comes home',
  flags: [
    {
      flags: '--dry-run',
      help: 'print exactly what would be sent (per agent: tensors, clip, σ, ε, the envelope) and send nothing',
    },
    { flags: '--no-wait', help: 'send and seal, then return: the next run brings the round home' },
    {
      flags: '--wait-for <duration>',
      help: 'how long to wait for the council to aggregate, e.g. 30m, 2h (default 30m)',
    },
    {
      flags: '--retry-for <duration>',
      help: 'how long to keep retrying a council that is down or failing (default 10m)',
    },
    { flags: '--encoding <form>', help: 'how updates travel (default json)', choices: ['json', 'safetensors'] },
    JSON_FLAG,
    ...BUDGET_FLAGS,
    memoirFlag('memoirs to learn from (repeatable; default: every memoir under $KOURAI_HOME)'),
  ],
  load: () => import('./round.js'),
} as const satisfies CommandSpec;

export const scene = {
  name: 'scene',
  description:
    "a round's Council of Sisters (and the Stoa Falls when a forge fell), from the memoir: a scene in a terminal, text elsewhere",
  flags: [
    { flags: '--round <n>', help: 'which round (default: the latest)' },
    { flags: '--memoir <path>', help: "read council events from this memoir (default: the joined council's)" },
    { flags: '--json', help: 'the scene as JSON' },
  ],
  load: () => import('./scene.js'),
} as const satisfies CommandSpec;

export const status = {
  name: 'status',
  description:
    'the council, the current round, trust and exile, consent and whisper capacity per agent, the last rounds (exit 8 if the ledger lost its anchors)',
  flags: [
    { flags: '--offline', help: 'do not ask the council; show what the forge knows' },
    JSON_FLAG,
    ...BUDGET_FLAGS,
  ],
  load: () => import('./status.js'),
} as const satisfies CommandSpec;

export const consent = {
  name: 'consent',
  description: 'the Sovereignty Moment: choose which agents may speak for the forge (Cupid and Puck never do)',
  flags: [
    {
      flags: '--allow <agents>',
      help: 'agents that may speak, comma-separated, or "all" (repeatable)',
      repeat: true,
    },
    { flags: '--deny <agents>', help: 'agents that may not speak (repeatable)', repeat: true },
    { flags: '--show', help: 'show the current consent, change nothing' },
    JSON_FLAG,
  ],
  load: () => import('./consent.js'),
} as const satisfies CommandSpec;

export const simulate = {
  name: 'simulate',
  description:
    'simulate a federation with the real trainer, privacy and council: Byzantine robustness, personalization, split, privacy/utility',
  flags: [
    { flags: '--forges <n>', help: 'forges in the federation (default 11; at most 1000)' },
    {
      flags: '--cohort <k>',
      help: 'forges sampled per round (default: all of them; Poisson at rate k/forges in cells with noise)',
    },
    {
      flags: '--byzantine <f>',
      help: 'how many of them attack (default 2; with --forges alone: 20%, rounded down)',
    },
    { flags: '--rounds <n>', help: 'federation rounds per run (default 4)' },
    { flags: '--agents <list>', help: 'agents to federate and measure, comma-separated (default techne)' },
    { flags: '--sessions <n>', help: 'sample-forge sessions per forge (default 4)' },
    { flags: '--turns <n>', help: 'pipeline turns per session (default 12)' },
    {
      flags: '--strategies <list>',
      help: 'aggregation strategies to compare (default fedavg-naive,fedavg,multikrum+lora-fair,bulyan+lora-fair)',
    },
    { flags: '--attacks <list>', help: 'attacks to compare (default: none and all six)' },
    {
      flags: '--epsilon <e>',
      help: 'ε of the Byzantine grid and the split comparison (default inf: clipping, no noise)',
    },
    { flags: '--epsilons <list>', help: 'ε values of the privacy/utility sweep (default 0.5,1,4,8,inf)' },
    {
      flags: '--reference <strategy>',
      help: 'strategy of the privacy, split and personalization runs (default multikrum+lora-fair)',
    },
    { flags: '--seeds <list>', help: 'seeds, comma-separated (default 1,2,3)' },
    { flags: '--local-epochs <n>', help: 'council training epochs per round (default 3)' },
    { flags: '--clip-norm <s>', help: 'S: every release is clipped to this L2 norm (default 1)' },
    {
      flags: '--server-lr <x>',
      help: "the councils' server step: the new global is the previous one plus x times the aggregate update (default 2)",
    },
    { flags: '--held-out <n>', help: 'held-out evaluation pairs per preference (default 200)' },
    {
      flags: '--personal-sample <n>',
      help: 'honest forges whose personal quality is measured, at most (default 24)',
    },
    {
      flags: '--cold-start <list>',
      help: 'session counts of late-joining newcomers measured on the clean reference run (default 1,2,4,8; none: skip)',
    },
    { flags: '--newcomers <n>', help: 'newcomers per session count (default 4)' },
    {
      flags: '--root-set',
      help: "councils hold the sample root memoir and record each round what every update did to its pairs (cells' rounds[].root)",
    },
    {
      flags: '--threads <n>',
      help: 'worker threads for the trainings (default: the cores; 0: train on the main thread)',
    },
    { flags: '--out <dir>', help: 'write report.html (self-contained) and results.json here' },
    {
      flags: '--http',
      help: 'run every council as a real `kourai council serve` process on 127.0.0.1 (fidelity check)',
    },
    { flags: '--fresh', help: 'ignore finished cells of an earlier run of the same experiment' },
    { flags: '--json', help: 'one JSON document: summary, targets, every cell' },
  ],
  load: () => import('./simulate.js'),
} as const satisfies CommandSpec;

export const federateCommands: CommandSpec = {
  name: 'federate',
  description: 'the federation: join a council, consent (the Sovereignty Moment), rounds, status, simulation',
  commands: [join, leave, round, scene, status, consent, simulate],
};
