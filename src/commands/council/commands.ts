import { JSON_FLAG, type CommandSpec } from '../spec.js';

/** Where a council keeps its state: every command that touches it takes the same three flags. */
const STATE_FLAGS = [
  {
    flags: '--data-dir <dir>',
    help: 'where the council keeps council.db (default $KOURAI_HOME/council; env KOURAI_COUNCIL_DATA_DIR)',
  },
  {
    flags: '--database <url>',
    help: 'keep the council state in PostgreSQL instead, e.g. postgres://user:pw@host/db (env KOURAI_COUNCIL_DATABASE)',
  },
  {
    flags: '--config <file>',
    help: 'council config file (JSON; default $KOURAI_HOME/council/council.json if present)',
  },
] as const;

export const serve = {
  name: 'serve',
  description: 'run the council server until SIGINT/SIGTERM (plain HTTP: put TLS in a reverse proxy); logs to stderr',
  flags: [
    { flags: '--host <host>', help: 'address to listen on (default 127.0.0.1)' },
    { flags: '--port <port>', help: 'port (default 7470; 0 picks a free one)' },
    {
      flags: '--base-fingerprint <sha>',
      help: 'base-model fingerprint updates must be for (repeatable; required unless --layouts derives from the built-in base, whose fingerprint is then the accepted one)',
      repeat: true,
    },
    {
      flags: '--strategy <rule>',
      help: 'aggregation rule (default lora-fair)',
      choices: ['fedavg', 'median', 'trimmed-mean', 'krum', 'multikrum', 'bulyan', 'lora-fair'],
    },
    { flags: '--byzantine <f>', help: 'Byzantine forges to tolerate (default 0)' },
    { flags: '--trim <k>', help: 'trimmed-mean: values dropped at each end (default f)' },
    { flags: '--multikrum-m <m>', help: 'multikrum: updates averaged (default n - f)' },
    {
      flags: '--selection <rule>',
      help: 'lora-fair: robust selection first (default multikrum if f > 0)',
      choices: ['none', 'multikrum', 'bulyan'],
    },
    { flags: '--min-forges <n>', help: 'sealed forges that close a round (default 3)' },
    {
      flags: '--round-deadline <duration>',
      help: 'a round closes at the latest after this long, e.g. 30m, 24h (default 24h)',
    },
    { flags: '--payload-limit <size>', help: 'largest request body, e.g. 64MiB (default 64MiB)' },
    { flags: '--max-in-flight <n>', help: 'submissions read at once; more get 503 busy (default 8)' },
    {
      flags: '--weights <mode>',
      help: 'weigh updates uniformly or by the (noised) counts forges send (default uniform)',
      choices: ['uniform', 'counts'],
    },
    { flags: '--tail-margin <t>', help: 'norm check: accept up to S(1 + sigma(sqrt(d) + t)) (default 10)' },
    {
      flags: '--clip-norm <range>',
      help: 'privacy policy: clip norms S forges may declare, e.g. 1 or 0.5..1 (default 0..1)',
    },
    {
      flags: '--noise-multiplier <range>',
      help: 'privacy policy: noise multipliers sigma forges may declare, e.g. 8 or 4..16 (default 8)',
    },
    {
      flags: '--epsilon <e>',
      help: 'privacy policy: derive sigma for this epsilon toward an observer of the published adapters, raised so that one release costs a forge at most 1/8 of --agent-epsilon (overrides --noise-multiplier)',
    },
    { flags: '--epsilon-rounds <n>', help: 'rounds the --epsilon target covers (default 100)' },
    { flags: '--delta <d>', help: 'delta of the --epsilon target (default 1e-5)' },
    {
      flags: '--agent-epsilon <e>',
      help: 'the lifetime epsilon of an agent on the forges served (their agent_epsilon; default 8)',
    },
    {
      flags: '--layouts <file|json>',
      help: 'adapter layout per agent, a JSON file or inline JSON: {"derive": {"base": "builtin", "rank": 8}}, or tensors {"*": [{"name", "shape"}]} for all agents or per agent (required)',
    },
    {
      flags: '--max-uploads-per-forge <n>',
      help: 'uploads one forge may have in progress; more get 429 (default 2)',
    },
    {
      flags: '--upload-grace <duration>',
      help: 'every upload gets this long plus its size at --upload-rate (default 10s)',
    },
    {
      flags: '--upload-rate <size>',
      help: 'the slowest upload waited for, bytes per second, e.g. 128KiB (default 128KiB)',
    },
    { flags: '--trust-alpha <a>', help: 'trust EMA rate (default 0.3)' },
    { flags: '--trust-threshold <x>', help: 'exile below this trust (default 0.4)' },
    { flags: '--trust-warmup <rounds>', help: 'scored rounds before a forge can be exiled (default 3)' },
    {
      flags: '--trust-tolerance <tau>',
      help: 'distance to the aggregate, relative to the median, that still counts as similarity 1 (default 1.5)',
    },
    {
      flags: '--root-memoir <path>',
      help: 'a memoir (file or directory) of the preferences every forge shares: updates that make it markedly worse lose trust (default: none)',
    },
    { flags: '--lora-fair-lambda <x>', help: 'LoRA-FAIR penalty (default 0.01)' },
    { flags: '--lora-fair-lr <x>', help: 'LoRA-FAIR step size (default 0.01)' },
    { flags: '--lora-fair-steps <n>', help: 'LoRA-FAIR gradient steps (default 1000)' },
    { flags: '--lora-fair-solver <s>', help: 'LoRA-FAIR solver (default gd)', choices: ['gd', 'ridge'] },
    {
      flags: '--server-lr <x>',
      help: 'server step: the new global is the previous one plus x times the aggregate update (default 2)',
    },
    {
      flags: '--cohort <k>',
      help: 'forges sampled per round, by a secret seed kept in the council database (default: every forge)',
    },
    {
      flags: '--aggregation-lease <duration>',
      help: 'with several processes: how long a silent aggregator keeps a closed round before another takes over (default 30s)',
    },
    { flags: '--threads <n>', help: 'threads for pairwise distances (default: all cores)' },
    { flags: '--ndjson', help: 'events on stdout, one a line (listening, stopped)' },
    { flags: '--json', help: 'the same as --ndjson (serve only streams)' },
    ...STATE_FLAGS,
  ],
  load: () => import('./serve.js'),
} as const satisfies CommandSpec;

export const forgeAdd = {
  name: 'add',
  description: 'register a forge and print its token (shown once; the council stores only a hash)',
  args: [{ name: '<name>', help: 'forge name (letters, digits, . _ -)' }],
  flags: [JSON_FLAG, ...STATE_FLAGS],
  load: () => import('./forge-add.js'),
} as const satisfies CommandSpec;

export const forgeList = {
  name: 'list',
  description: 'every forge: status (active, revoked, exiled), trust, accepted updates, last seen',
  flags: [JSON_FLAG, ...STATE_FLAGS],
  load: () => import('./forge-list.js'),
} as const satisfies CommandSpec;

export const forgeRevoke = {
  name: 'revoke',
  description: "stop accepting a forge's token at once (403 forge_revoked); its accepted updates stay",
  args: [{ name: '<name>', help: 'forge name' }],
  flags: [JSON_FLAG, ...STATE_FLAGS],
  load: () => import('./forge-revoke.js'),
} as const satisfies CommandSpec;

export const forgeRotate = {
  name: 'rotate',
  description: 'issue a new token for a forge (printed once); the old one stops working, a revocation is lifted',
  args: [{ name: '<name>', help: 'forge name' }],
  flags: [JSON_FLAG, ...STATE_FLAGS],
  load: () => import('./forge-rotate.js'),
} as const satisfies CommandSpec;

export const forge = {
  name: 'forge',
  description: 'forges the council accepts updates from',
  commands: [forgeAdd, forgeList, forgeRevoke, forgeRotate],
} as const satisfies CommandSpec;

export const layoutShow = {
  name: 'show',
  description: 'the configured layout and the one in council.db, per agent, and whether they agree',
  args: [{ name: '[agent]', help: 'one agent (default: all)' }],
  flags: [
    { flags: '--layouts <file>', help: 'adapter layouts (JSON), as for council serve' },
    JSON_FLAG,
    ...STATE_FLAGS,
  ],
  load: () => import('./layout-show.js'),
} as const satisfies CommandSpec;

export const layoutReset = {
  name: 'reset',
  description:
    'adopt the configured layout of an agent from the open round on (retires its old globals; drops its updates not yet aggregated)',
  args: [{ name: '<agent>', help: 'agent' }],
  flags: [
    { flags: '--layouts <file>', help: 'adapter layouts (JSON), as for council serve' },
    JSON_FLAG,
    ...STATE_FLAGS,
  ],
  load: () => import('./layout-reset.js'),
} as const satisfies CommandSpec;

export const layout = {
  name: 'layout',
  description: 'the adapter layout (tensor names and shapes) the council accepts per agent',
  commands: [layoutShow, layoutReset],
} as const satisfies CommandSpec;

export const rounds = {
  name: 'rounds',
  description: 'the rounds, newest first: state, forges, what each agent aggregated',
  flags: [{ flags: '--limit <n>', help: 'at most n rounds (default 20)' }, JSON_FLAG, ...STATE_FLAGS],
  load: () => import('./rounds.js'),
} as const satisfies CommandSpec;

export const migrate = {
  name: 'migrate',
  description: "bring the council database's schema up to date (PostgreSQL: run once before `serve`)",
  flags: [JSON_FLAG, ...STATE_FLAGS],
  load: () => import('./migrate.js'),
} as const satisfies CommandSpec;

export const status = {
  name: 'status',
  description: 'the council processes sharing the database and their last heartbeat, and the current round',
  flags: [JSON_FLAG, ...STATE_FLAGS],
  load: () => import('./status.js'),
} as const satisfies CommandSpec;

export const trust = {
  name: 'trust',
  description: 'trust score and status of every forge, and the Stoa Falls (exiles)',
  flags: [JSON_FLAG, ...STATE_FLAGS],
  load: () => import('./trust.js'),
} as const satisfies CommandSpec;

export const aggregate = {
  name: 'aggregate',
  description: 'aggregate update files offline (one safetensors file per forge) with any council rule',
  args: [{ name: '<updates...>', help: 'UPDATE.safetensors files (same tensor names and shapes)' }],
  flags: [
    {
      flags: '--strategy <rule>',
      help: 'aggregation rule',
      choices: ['fedavg', 'median', 'trimmed-mean', 'krum', 'multikrum', 'bulyan', 'lora-fair'],
      required: true,
    },
    { flags: '--byzantine <f>', help: 'Byzantine updates to tolerate (default 0)' },
    { flags: '--trim <k>', help: 'trimmed-mean: values dropped at each end (default f)' },
    { flags: '--multikrum-m <m>', help: 'multikrum: updates averaged (default n - f)' },
    {
      flags: '--selection <rule>',
      help: 'lora-fair: robust selection first (default multikrum if f > 0)',
      choices: ['none', 'multikrum', 'bulyan'],
    },
    {
      flags: '--weights <mode>',
      help: 'weigh updates uniformly or by each file\'s __metadata__ "weight" (default uniform)',
      choices: ['uniform', 'counts'],
    },
    {
      flags: '--weight-values <w1,w2,...>',
      help: 'explicit per-update weights, in file order (instead of --weights)',
    },
    { flags: '--base <file>', help: 'lora-fair: the global adapter the updates are deltas from' },
    { flags: '--lora-fair-lambda <x>', help: 'LoRA-FAIR penalty (default 0.01)' },
    { flags: '--lora-fair-lr <x>', help: 'LoRA-FAIR step size (default 0.01)' },
    { flags: '--lora-fair-steps <n>', help: 'LoRA-FAIR gradient steps (default 1000)' },
    { flags: '--lora-fair-solver <s>', help: 'LoRA-FAIR solver (default gd)', choices: ['gd', 'ridge'] },
    { flags: '-o, --out <file>', help: 'output safetensors file (never one of the inputs)', required: true },
    { flags: '--force', help: 'replace the output file if it exists' },
    { flags: '--dtype <dtype>', help: 'output dtype (default F32)', choices: ['F32', 'F64'] },
    { flags: '--threads <n>', help: 'threads for pairwise distances (default: all cores)' },
    JSON_FLAG,
  ],
  load: () => import('./aggregate.js'),
} as const satisfies CommandSpec;

export const councilCommands: CommandSpec = {
  name: 'council',
  description: 'the council: the aggregation server federation rounds talk to, its forges, rounds and trust',
  commands: [serve, forge, layout, rounds, migrate, status, trust, aggregate],
};
