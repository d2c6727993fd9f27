import { memoirFlag, BUDGET_FLAGS, JSON_FLAG, AGENT_LIST_FLAG, type CommandSpec } from './spec.js';

export const feedbackCommand = {
  name: 'feedback',
  description:
    'ask the player how an agent’s proposal felt (1–5) and record it in the memoir; asks only when affinity and cooldown allow',
  flags: [
    memoirFlag('the session’s memoir.jsonl (or its session directory)'),
    { flags: '--agent <agent>', help: 'the agent who proposed' },
    { flags: '--scene <scene-id>', help: 'the scene the proposal belongs to (must be in the memoir)' },
    { flags: '--proposed <text>', help: 'the proposal text' },
    { flags: '--proposed-file <file>', help: 'read the proposal from a file (- for stdin when not interactive)' },
    { flags: '--revised-file <file>', help: 'the player’s revision: makes a preference pair (proposed 0, revised 1)' },
    { flags: '--rating <1-5>', help: 'how right it felt: 1 way off … 5 exactly right (no prompt with --kind)' },
    {
      flags: '--kind <kind>',
      help: 'what the player did with it',
      choices: ['accepted', 'modified', 'rejected', 'deferred'],
    },
    { flags: '--comment <text>', help: 'an optional comment' },
    { flags: '--force', help: 'ask even when affinity or the cooldown say not to' },
    { flags: '--check', help: 'only say whether it would ask; write nothing' },
    { flags: '--min-tier <tier>', help: 'affinity tier needed to ask: stranger, familiar (default), trusted, bonded' },
    {
      flags: '--cooldown <n>',
      help: 'entries of the agent needed since its last feedback (default 5; doubled per skip)',
    },
    { flags: '--json', help: 'JSON result (includes entry_id, or asked:false and the reason)' },
  ],
  load: () => import('./feedback.js'),
} as const satisfies CommandSpec;

export const affinityCommand = {
  name: 'affinity',
  description: 'per-agent affinity: sum of affinity deltas, tier, next tier, trend and last change',
  flags: [AGENT_LIST_FLAG, JSON_FLAG, memoirFlag()],
  load: () => import('./affinity.js'),
} as const satisfies CommandSpec;

export const whisperCommand = {
  name: 'whisper',
  description: 'the Whisper Limit: privacy capacity left, who speaks next round and why, past contributions',
  flags: [
    { flags: '--round <id>', help: 'the round about to run (agents that already spoke in it are shown silent)' },
    {
      flags: '--next-round',
      help: 'ask the joined council and show exactly what its next round would send (the plan `federate round --dry-run` prints)',
    },
    JSON_FLAG,
    ...BUDGET_FLAGS,
    memoirFlag(),
  ],
  load: () => import('./whisper.js'),
} as const satisfies CommandSpec;

export const scoreCommand = {
  name: 'score',
  description: 'rank candidate texts as an agent’s adapters prefer them (arguments, --file, or NDJSON on stdin)',
  args: [{ name: '[candidates...]', help: 'the candidate texts' }],
  flags: [
    { flags: '--agent <agent>', help: 'whose preference model', required: true },
    {
      flags: '--file <path>',
      help: 'candidates as JSON: ["…", …] or {"candidates": [...], "task_type": "…", "prompt": "…"}',
    },
    {
      flags: '--stdin',
      help: 'stream: one {"id", "candidates", "task_type", "prompt", "lean"} per line in, one ranking per line out (NDJSON)',
    },
    { flags: '--task-type <type>', help: 'the task type (selects its lean)' },
    { flags: '--prompt <text>', help: 'what the candidates answer (the task or question), when the host has it' },
    { flags: '--prompt-file <path>', help: 'the same, read from a file' },
    {
      flags: '--use <adapters>',
      help: 'adapters applied: both (mixed by the lean), bond or council',
      choices: ['both', 'bond', 'council'],
    },
    {
      flags: '--lean <x>',
      help: '0 personal (bond only) … 1 federated (council only); default learn.lean in config.json, else the lean chosen on your held-out scenes',
    },
    JSON_FLAG,
  ],
  load: () => import('./score.js'),
} as const satisfies CommandSpec;

export const routeCommand = {
  name: 'route',
  description: 'Hephaestus’s routing head: which specialist should take the task (a distribution)',
  args: [{ name: '[task]', help: 'the task description' }],
  flags: [
    { flags: '--task-type <type>', help: 'the task type' },
    {
      flags: '--use <adapters>',
      help: 'adapters applied: both (mixed by the lean), bond or council',
      choices: ['both', 'bond', 'council'],
    },
    {
      flags: '--lean <x>',
      help: '0 personal (bond only) … 1 federated (council only); default learn.lean in config.json, else the lean chosen on your held-out scenes',
    },
    JSON_FLAG,
  ],
  load: () => import('./route.js'),
} as const satisfies CommandSpec;

export const doctorCommand = {
  name: 'doctor',
  description: 'check the environment, paths and index health; print the command that fixes each problem',
  flags: [JSON_FLAG],
  load: () => import('./doctor.js'),
} as const satisfies CommandSpec;
