import { ExitCode } from './errors.js';
import {
  CONSENT_KEYS,
  COUNCIL_SCENE_KEYS,
  FEEDBACK_KEYS,
  keyLabel,
  REPLAY_KEYS,
  WHISPER_KEYS,
  type Binding,
} from './ui/keys.js';

/**
 * What every `--help` ends with: examples (each one parses: test/cli/help.test.ts), the exit
 * codes the command can return (the README table, src/errors.ts), and for a screen its keys
 * (from src/ui/keys.ts, the table the screens themselves read).
 */
export interface CommandHelp {
  /** `[argv after "kourai", what it does]`. */
  examples: readonly (readonly [string, string])[];
  /** Besides 0, 2 (usage) and 130 (Ctrl-C), which every command can return. */
  exits: readonly number[];
  keys?: readonly Binding<string>[];
  /** Where the manual goes further (a docs page), shown after the examples. */
  more?: string;
}

const {
  failure,
  environment: env,
  budgetExhausted: budget,
  invalidData: invalid,
  notFound,
  conflict,
  integrity,
  network,
} = ExitCode;

/** Short meanings of the exit codes (the full table is the README's "Exit codes"). */
export const EXIT_MEANING: Readonly<Record<number, string>> = {
  0: 'success',
  1: 'failure, or a check found problems',
  2: 'usage: bad flags or arguments, or a prompt needed without a terminal',
  3: 'environment: paths, permissions, configuration',
  4: 'privacy budget exhausted',
  5: 'invalid data',
  6: 'not found',
  7: 'conflict: a lock, or an output that exists',
  8: 'integrity: a file changed other than by an append, or stored state is corrupt',
  9: 'network: the council or endpoint could not be reached',
  130: 'cancelled (Ctrl-C)',
};

const READS = [env, notFound, integrity];

/** Keyed by the command path after `kourai`. */
export const HELP: Readonly<Record<string, CommandHelp>> = {
  'memoir append': {
    examples: [
      [
        `memoir append --memoir ./forge/memoir.jsonl '{"agent":"techne","source":"specialist_proposed","scene_id":"s1","agent_proposed":"x"}'`,
        'append one entry',
      ],
      ['memoir append --memoir ./forge --file entries.ndjson --json', 'a batch, all or nothing'],
    ],
    exits: [env, invalid, conflict, integrity],
  },
  'memoir inspect': {
    examples: [
      ['memoir inspect --agent aidos --split shared --limit 20', 'shared entries of Aidos'],
      ['memoir inspect --text naming --ndjson', 'one JSON entry a line'],
    ],
    exits: READS,
  },
  'memoir show': {
    examples: [['memoir show 01M3VCAZ7Y3T5Q9B6HQP9WD1P0 --history', 'an entry and its revisions']],
    exits: READS,
  },
  'memoir stats': { examples: [['memoir stats --json', 'counts per agent, source and split']], exits: READS },
  'memoir verify': {
    examples: [['memoir verify --json', 'every problem, one object each']],
    exits: [failure, ...READS],
  },
  'memoir repair': {
    examples: [
      ['memoir repair --dry-run', 'what would be quarantined'],
      ['memoir repair', 'quarantine torn tails'],
    ],
    exits: [env, notFound, conflict],
  },
  'memoir index': {
    examples: [
      ['memoir index', 'read what was appended'],
      ['memoir index --rebuild --json', 'from scratch'],
      ['memoir index --full-text', 'and the full-text index now, not at the first search'],
    ],
    exits: READS,
  },
  'memoir synth': {
    examples: [
      ['memoir synth', 'the sample forge under $KOURAI_HOME'],
      ['memoir synth --sessions 8 --seed 42', 'another forge, reproducibly'],
      ['memoir synth --out big.jsonl --entries 100000', 'one big memoir for benchmarks'],
    ],
    exits: [env, conflict],
  },
  'memoir replay': {
    examples: [
      ['memoir replay', 'the replay screen'],
      ['memoir replay --agent techne --at 01M3VCAZ', 'only Techne, from an entry'],
      ['memoir replay --ndjson --agent cupid', 'records, one a line'],
    ],
    exits: [...READS],
    keys: REPLAY_KEYS,
  },
  'memoir supersede': {
    examples: [
      [`memoir supersede 01M3VBYAY6XD2JEJ2RSF9DVHNN '{"agent_proposed":"y"}' --reason typo`, 'correct an entry'],
    ],
    exits: [env, invalid, notFound, conflict, integrity],
  },
  'memoir search': {
    examples: [['memoir search naming style --agent kallos --limit 10', 'ranked matches']],
    exits: READS,
  },
  'memoir episodes': {
    examples: [
      ['memoir episodes', 'one episode per scene'],
      ['memoir episodes --by session --write', 'store them'],
    ],
    exits: [...READS, conflict],
  },
  'memoir buffer': {
    examples: [['memoir buffer --max 500 --dry-run', 'what a trainer would replay, and why']],
    exits: READS,
  },
  'memoir players': {
    examples: [
      ['memoir players', 'every memoir, grouped by player'],
      ['memoir players --player ariadne --json', 'one player'],
    ],
    exits: READS,
  },
  'memoir export': {
    examples: [
      ['memoir export --format trl-dpo --agent techne --out dpo --json', 'pairs for TRL'],
      ['memoir export --format trl-dpo-chat --agent techne', 'the same as chat messages, for instruct models'],
    ],
    exits: [...READS, conflict],
  },
  feedback: {
    examples: [
      ['feedback --memoir ./forge --agent techne --scene S --proposed-file proposal.py', 'ask in a terminal'],
      [
        "feedback --memoir ./forge --agent techne --scene S --proposed 'x' --rating 4 --kind accepted --json",
        'answer by flags',
      ],
      ["feedback --memoir ./forge --agent techne --scene S --proposed 'x' --check --json", 'would it ask?'],
    ],
    exits: [env, invalid, notFound, conflict],
    keys: FEEDBACK_KEYS,
  },
  affinity: {
    examples: [
      ['affinity', 'every agent'],
      ['affinity --agent techne --json', 'one agent'],
    ],
    exits: READS,
  },
  'privacy epsilon': { examples: [['privacy epsilon --sigma 8 --steps 152', 'ε after 152 rounds']], exits: [] },
  'privacy sigma': {
    examples: [['privacy sigma --epsilon 8 --steps 160 --json', 'the σ that keeps ε within 8']],
    exits: [],
  },
  'privacy ledger': {
    examples: [['privacy ledger --agent aidos', 'releases and cumulative ε']],
    exits: [env, integrity],
  },
  'privacy release': {
    examples: [['privacy release --agent aidos --round 7 --file delta.json --out release.json', 'clip, noise, spend']],
    exits: [env, budget, invalid, notFound, conflict, integrity],
  },
  whisper: {
    examples: [
      ['whisper', 'the gauge (a screen in a terminal)'],
      ['whisper --round 12 --json', 'capacity and who speaks'],
    ],
    exits: READS,
    keys: WHISPER_KEYS,
  },
  'federate join': {
    examples: [['federate join --server https://council.example.org --token-file token.txt', 'join a council']],
    exits: [env, invalid, notFound, conflict, network],
  },
  'federate leave': { examples: [['federate leave', 'forget the URL and the token']], exits: [env] },
  'federate status': {
    examples: [
      ['federate status', 'council, round, trust, capacity'],
      ['federate status --offline --json', 'without asking the council'],
    ],
    exits: [env, integrity, network],
  },
  'federate consent': {
    examples: [
      ['federate consent', 'the Sovereignty Moment (a screen)'],
      ['federate consent --allow aidos,metis --deny kallos --json', 'by flags'],
      ['federate consent --show', 'the current stances'],
    ],
    exits: [env],
    keys: CONSENT_KEYS,
  },
  'federate round': {
    examples: [
      ['federate round --dry-run', 'exactly what would leave, per agent; sends nothing'],
      ['federate round', 'train, noise, send, wait, bring the round home'],
      ['federate round --no-wait --json', 'send and seal, return'],
    ],
    exits: [env, budget, invalid, notFound, conflict, integrity, network],
  },
  'federate scene': {
    examples: [
      ['federate scene', 'the latest round’s Council of Sisters'],
      ['federate scene --round 3 --json', 'one round, as JSON'],
    ],
    exits: [env, notFound, integrity],
    keys: COUNCIL_SCENE_KEYS,
  },
  'federate simulate': {
    examples: [
      ['federate simulate --out report', 'the default experiment; report.html and results.json'],
      ['federate simulate --forges 5 --byzantine 1 --rounds 2 --seeds 1', 'a small run'],
      [
        'federate simulate --forges 1000 --cohort 100 --seeds 41 --epsilons 4,inf --out report',
        'at scale: 1,000 forges, cohorts of 100 (privacy/utility, exile, Byzantine at scale)',
      ],
      [
        'federate simulate --seeds 901 --json',
        'one document; its targets hold one entry per design claim: name, goal, value, met, detail',
      ],
    ],
    exits: [env, conflict],
    more: 'every recorded result, with the command that reproduces it and what it missed: docs/evaluation.md',
  },
  'council serve': {
    examples: [
      [
        `council serve --layouts '{"derive": {"base": "builtin", "rank": 8}}' --min-forges 1`,
        'a council for one local forge, layouts derived from the built-in base',
      ],
      [
        'council serve --layouts layouts.json --strategy lora-fair --byzantine 2 --min-forges 11',
        'serve until Ctrl-C, tolerating 2 Byzantine forges',
      ],
    ],
    exits: [env, invalid, conflict, integrity],
  },
  'council forge add': {
    examples: [['council forge add athens --json', 'register a forge; its token']],
    exits: [env, conflict, integrity],
  },
  'council forge list': { examples: [['council forge list', 'every forge']], exits: [env, integrity] },
  'council forge revoke': {
    examples: [['council forge revoke athens', 'refuse its token']],
    exits: [env, notFound, integrity],
  },
  'council forge rotate': {
    examples: [['council forge rotate athens', 'a new token']],
    exits: [env, notFound, integrity],
  },
  'council layout show': {
    examples: [['council layout show metis --layouts layouts.json', 'configured vs stored']],
    exits: [env, invalid, notFound, integrity],
  },
  'council layout reset': {
    examples: [['council layout reset aidos --layouts layouts.json', 'adopt the configured layout']],
    exits: [env, invalid, notFound, integrity],
  },
  'council rounds': { examples: [['council rounds --limit 5', 'the last rounds']], exits: [env, integrity] },
  'council trust': { examples: [['council trust --json', 'trust and exiles']], exits: [env, integrity] },
  'council migrate': {
    examples: [
      ['council migrate', 'bring council.db to this kourai schema'],
      ['council migrate --database postgres://kourai@127.0.0.1/kourai_council', 'the same for a PostgreSQL council'],
    ],
    exits: [env, conflict, integrity],
  },
  'council status': {
    examples: [['council status --json', 'the processes serving the council and the current round']],
    exits: [env, integrity],
  },
  'council aggregate': {
    examples: [
      [
        'council aggregate --strategy bulyan --byzantine 2 a.safetensors b.safetensors -o agg.safetensors --json',
        'aggregate offline',
      ],
    ],
    exits: [env, invalid, notFound, conflict],
  },
  'train bond': {
    examples: [
      ['train bond', 'every agent'],
      ['train bond --agent techne --epochs 20 --json', 'one agent'],
    ],
    exits: [env, invalid, notFound, conflict, integrity, network],
  },
  'adapters list': { examples: [['adapters list', 'versions, the current one marked']], exits: [env, integrity] },
  'adapters show': {
    examples: [['adapters show techne --json', 'the current version']],
    exits: [env, notFound, integrity],
  },
  'adapters diff': {
    examples: [['adapters diff techne', 'the current version vs the one before']],
    exits: [env, notFound, integrity],
  },
  'adapters export': {
    examples: [['adapters export techne --out techne-peft', 'a directory in PEFT’s file layout']],
    exits: [env, notFound, conflict, integrity],
  },
  'adapters rollback': {
    examples: [['adapters rollback techne', 'make the previous version current']],
    exits: [env, notFound, integrity],
  },
  'adapters prune': {
    examples: [['adapters prune --keep 2 --dry-run', 'what would be deleted']],
    exits: [env, integrity],
  },
  score: {
    examples: [['score --agent techne "return early" "nest the ifs"', 'rank two candidates']],
    exits: [env, invalid, notFound, integrity, network],
  },
  route: {
    examples: [['route "write tests for the parser"', 'which specialist takes it']],
    exits: [env, notFound, integrity, network],
  },
  doctor: {
    examples: [
      ['doctor', 'what is wrong and the command that fixes it'],
      ['doctor --json', 'the checks'],
    ],
    exits: [failure, env],
  },
  completion: {
    examples: [
      ['completion bash', 'source <(kourai completion bash) in ~/.bashrc'],
      ['completion fish', '> ~/.config/fish/completions/kourai.fish'],
    ],
    exits: [],
  },
};

const example = ([argv, what]: readonly [string, string]): string[] => [`  $ kourai ${argv}`, `      ${what}`];

const ROOT_EXAMPLES = [
  'memoir synth',
  'memoir replay',
  'memoir inspect',
  'feedback',
  'whisper',
  'federate consent',
  'train bond',
  'doctor',
  'completion',
];

/** The text after a command's help. `path` is the command path after `kourai` ('' for the root). */
export function helpFooter(path: string, subcommands: readonly string[]): string {
  const h = HELP[path];
  if (h) {
    const codes = [...new Set([0, 2, ...h.exits, 130])].sort((a, b) => a - b);
    return [
      ...(h.keys
        ? [
            '',
            'Keys (also behind ? on the screen):',
            ...h.keys.map((b) => `  ${b.keys.map(keyLabel).join(' ').padEnd(16)} ${b.help}`),
          ]
        : []),
      '',
      'Examples:',
      ...h.examples.flatMap(example),
      ...(h.more ? ['', `More: ${h.more}`] : []),
      '',
      'Exit codes:',
      ...codes.map((c) => `  ${String(c).padStart(3)}  ${EXIT_MEANING[c] ?? ''}`),
    ].join('\n');
  }
  // A group (or the root): examples from its commands, and where the codes are.
  const paths = path === '' ? ROOT_EXAMPLES : subcommands.map((s) => `${path} ${s}`);
  const examples = paths.flatMap((p) => HELP[p]?.examples.slice(0, 1) ?? []);
  return [
    '',
    'Examples:',
    ...examples.flatMap(example),
    '',
    'Exit codes:',
    ...(path === ''
      ? Object.entries(EXIT_MEANING).map(([c, m]) => `  ${c.padStart(3)}  ${m}`)
      : [`  0 success, 2 usage, 130 cancelled; each command's --help lists the others it can return`]),
  ].join('\n');
}
