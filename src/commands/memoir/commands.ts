import { memoirFlag, FILTER_FLAGS, JSON_FLAG, type CommandSpec } from '../spec.js';

export const append = {
  name: 'append',
  description:
    'append entries: one JSON argument, --file (JSON, array or NDJSON), or NDJSON on stdin; all validated before anything is written',
  args: [{ name: '[entry]', help: 'one entry as JSON' }],
  flags: [
    { flags: '--file <path>', help: 'read entries from a file (- for stdin)' },
    { flags: '--no-fsync', help: 'do not fsync after writing (faster, not crash-safe)' },
    { flags: '--json', help: 'print the written entries as JSON' },
    memoirFlag('the memoir file to append to (created if missing) or its forge directory'),
  ],
  load: () => import('./append.js'),
} as const satisfies CommandSpec;

export const inspect = {
  name: 'inspect',
  description: 'list entries, filtered, from the index',
  flags: [
    ...FILTER_FLAGS,
    { flags: '--text <words>', help: 'full-text match on proposals, beats, responses and labels' },
    { flags: '--limit <n>', help: 'at most n entries (default 50; 0 for all)' },
    { flags: '--all-revisions', help: 'list superseded entries too' },
    { flags: '--json', help: 'one JSON document' },
    { flags: '--ndjson', help: 'one entry per line (streams; every entry carries entry_id)' },
    memoirFlag(),
  ],
  load: () => import('./inspect.js'),
} as const satisfies CommandSpec;

export const show = {
  name: 'show',
  description: 'show one entry by id (Python lines have derived py_ ids)',
  args: [{ name: '<id>', help: 'entry id' }],
  flags: [{ flags: '--history', help: 'show the whole revision chain' }, JSON_FLAG, memoirFlag()],
  load: () => import('./show.js'),
} as const satisfies CommandSpec;

export const stats = {
  name: 'stats',
  description: 'counts per agent, source and split; affinity totals',
  flags: [JSON_FLAG, memoirFlag()],
  load: () => import('./stats.js'),
} as const satisfies CommandSpec;

export const verify = {
  name: 'verify',
  description: 'check schema, splits, append-only integrity, torn tails and duplicate ids (exit 1 on problems)',
  flags: [JSON_FLAG, memoirFlag()],
  load: () => import('./verify.js'),
} as const satisfies CommandSpec;

export const repair = {
  name: 'repair',
  description: 'quarantine torn fragments at the end of memoirs (nothing is deleted)',
  flags: [{ flags: '--dry-run', help: 'say what would be done, change nothing' }, JSON_FLAG, memoirFlag()],
  load: () => import('./repair.js'),
} as const satisfies CommandSpec;

export const index = {
  name: 'index',
  description: 'bring the SQLite index up to date (incremental), or --rebuild it from the memoirs',
  flags: [
    { flags: '--rebuild', help: 'forget and re-read everything' },
    {
      flags: '--full-text',
      help: 'also build the full-text index now (a large load leaves it to the first search)',
    },
    JSON_FLAG,
    memoirFlag(),
  ],
  load: () => import('./index-cmd.js'),
} as const satisfies CommandSpec;

export const players = {
  name: 'players',
  description:
    'player metrics of real forges: affinity gain per session (federated or not), Sovereignty Moment choices, Council of Sisters attendance, bonded relationships, the Stoa Falls',
  flags: [{ flags: '--player <name>', help: 'only this player (repeatable)', repeat: true }, JSON_FLAG, memoirFlag()],
  load: () => import('./players.js'),
} as const satisfies CommandSpec;

export const synth = {
  name: 'synth',
  description: 'write the sample forge: a realistic multi-session memoir with every agent',
  flags: [
    { flags: '--home <dir>', help: 'KOURAI_HOME to write into (default: $KOURAI_HOME)' },
    {
      flags: '--player <name>',
      help: 'player name; also picks the planted preferences (README: ariadne, daedalus, icarus, or seeded from the name)',
      default: 'ariadne',
    },
    {
      flags: '--preferences <list>',
      help: 'the player’s planted preferences instead, comma-separated (e.g. early-returns,typed-signatures), or none',
    },
    { flags: '--project <name>', help: 'project name', default: 'sample-forge' },
    { flags: '--sessions <n>', help: 'number of sessions', default: '4' },
    { flags: '--turns <n>', help: 'pipeline turns per session', default: '12' },
    { flags: '--seed <n>', help: 'random seed (same seed, same forge)', default: '7' },
    { flags: '--out <file>', help: 'write one memoir file here instead (for benchmarks)' },
    { flags: '--entries <n>', help: 'with --out: stop after n entries' },
    { flags: '--force', help: 'add sessions even if the project already has memoirs' },
    JSON_FLAG,
  ],
  load: () => import('./synth.js'),
} as const satisfies CommandSpec;

export const replay = {
  name: 'replay',
  description:
    'play the memoir as a story: an interactive screen in a terminal, text (or NDJSON with --json) otherwise',
  flags: [
    { flags: '--agent <agent>', help: 'only this agent’s beats (repeatable)', repeat: true },
    { flags: '--at <entry-id>', help: 'start the screen at this entry (id or unique prefix)' },
    { flags: '--ndjson', help: 'session, scene, beat and session_end records, one a line (never interactive)' },
    { flags: '--json', help: 'the same as --ndjson (replay only streams)' },
    memoirFlag(),
  ],
  load: () => import('./replay.js'),
} as const satisfies CommandSpec;

export const supersede = {
  name: 'supersede',
  description: 'correct an entry: append a revision that names the entry it replaces (never more shareable than it)',
  args: [
    {
      name: '<id>',
      help: 'the entry to correct (a ULID or a derived py_ id; an old id corrects its newest revision)',
    },
    {
      name: '[patch]',
      help: 'the correction as JSON: the fields to change, merged over the entry (or a whole entry)',
    },
  ],
  flags: [
    { flags: '--file <path>', help: 'read the correction from a file (- for stdin)' },
    { flags: '--reason <text>', help: 'why the entry is corrected (stored as revision_reason)', required: true },
    { flags: '--no-fsync', help: 'do not fsync after writing (faster, not crash-safe)' },
    JSON_FLAG,
    memoirFlag(),
  ],
  load: () => import('./supersede.js'),
} as const satisfies CommandSpec;

export const search = {
  name: 'search',
  description: 'full-text search, ranked by relevance (bm25), then newest; newest revisions only',
  args: [
    {
      name: '<query...>',
      help: 'words to look for (any may match; more and rarer matches rank higher; the last word also matches as a prefix)',
    },
  ],
  flags: [
    ...FILTER_FLAGS,
    { flags: '--limit <n>', help: 'at most n results (default 20, capped at 200)' },
    { flags: '--all-revisions', help: 'search superseded entries too' },
    JSON_FLAG,
    memoirFlag(),
  ],
  load: () => import('./search.js'),
} as const satisfies CommandSpec;

export const episodes = {
  name: 'episodes',
  description: 'what happened and what was learned: one episode per scene (or session), with its lessons',
  flags: [
    {
      flags: '--by <grouping>',
      help: 'one episode per scene or per session',
      choices: ['scene', 'session'],
      default: 'scene',
    },
    { flags: '--scene <prefix>', help: 'only scenes with this id prefix, e.g. session-1a2b3c4d' },
    { flags: '--write', help: 'append the episodes as private episode entries (skips those already written)' },
    { flags: '--no-fsync', help: 'with --write: do not fsync (faster, not crash-safe)' },
    JSON_FLAG,
    memoirFlag(),
  ],
  load: () => import('./episodes.js'),
} as const satisfies CommandSpec;

export const buffer = {
  name: 'buffer',
  description: 'choose a bounded replay buffer for training: every load-bearing entry, then the most informative',
  flags: [
    {
      flags: '--max <n>',
      help: 'the bound: how many entries to keep (load-bearing ones are kept even beyond it)',
      required: true,
    },
    ...FILTER_FLAGS,
    { flags: '--dry-run', help: 'show what would be kept and dropped, and why; write nothing' },
    { flags: '--out <file>', help: 'where to write the manifest (default $KOURAI_HOME/cache/replay-buffer.json)' },
    JSON_FLAG,
    memoirFlag(),
  ],
  load: () => import('./buffer.js'),
} as const satisfies CommandSpec;

export const exportCommand = {
  name: 'export',
  description:
    'write the preference pairs for training elsewhere, one file per agent (shareable pairs only unless --include-private)',
  flags: [
    {
      flags: '--format <format>',
      help: 'trl-dpo: TRL’s DPO format, {"prompt","chosen","rejected"} JSONL of strings; trl-dpo-chat: the same as messages with roles, for instruct models',
      choices: ['trl-dpo', 'trl-dpo-chat'],
    },
    {
      flags: '--agent <agent>',
      help: 'only this agent (repeatable; default: every agent with pairs)',
      repeat: true,
    },
    { flags: '--out <dir>', help: 'directory for the files (default ./trl-dpo or ./trl-dpo-chat)' },
    {
      flags: '--include-private',
      help: 'also private entries and the player’s own words: revisions, task descriptions (warns on stderr)',
    },
    JSON_FLAG,
    memoirFlag(),
  ],
  load: () => import('./export.js'),
} as const satisfies CommandSpec;

export const memoirCommands: CommandSpec = {
  name: 'memoir',
  description: 'write, inspect, verify and repair Forge Memoirs',
  commands: [
    append,
    inspect,
    show,
    stats,
    verify,
    repair,
    index,
    players,
    synth,
    replay,
    supersede,
    search,
    episodes,
    buffer,
    exportCommand,
  ],
};
