import { Argument, Command, Help, Option, type CommanderError } from 'commander';
import { createRequire } from 'node:module';
import type { Command as KouraiCommand } from './commands/types.js';
import type { Ctx } from './context.js';
import { UsageError } from './errors.js';
import { helpFooter } from './help.js';
import type { CompletionNode } from './output/completion.js';
import { runCommand } from './run-command.js';

/**
 * The whole command tree. Actions lazy-import their command module, so `kourai --help` and
 * `--version` load neither Ink, React, SQLite nor the server.
 */
const pkg = createRequire(import.meta.url)('../package.json') as { version: string };
export const KOURAI_VERSION = pkg.version;
/**
 * `-V, --version` is answered by main.ts only as the first argument: a root option would be
 * recognised after a command too and swallow that command's own `--version <n>`.
 */
export const isVersionRequest = (args: readonly string[]): boolean => args[0] === '--version' || args[0] === '-V';
const versionOption = new Option('-V, --version', 'output the version number');

type MakeCtx = (globals: { noInput: boolean; noColor: boolean; quiet: boolean }) => Ctx;

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function buildCli(
  makeCtx: MakeCtx,
  setExitCode: (code: number) => void,
  runner: typeof runCommand = runCommand,
  onCommand?: (cmd: KouraiCommand<never, unknown>) => void,
): Command {
  const program = new Command('kourai')
    .description('Operate a Kourai forge: the Forge Memoir, feedback, privacy (the Whisper Limit) and the council.')
    .option('--no-color', 'disable colour (also NO_COLOR=1)')
    .option('--no-input', 'never prompt; fail and name the flags to pass instead')
    .option('-q, --quiet', 'no progress or notes on stderr (warnings and errors still print)');
  // Commander's own errors are reported by main.ts like every other error (see usageErrors).
  program.configureOutput({ outputError: () => undefined });

  const act =
    (load: () => Promise<{ default: unknown }>, argNames: readonly string[] = []) =>
    async (...args: unknown[]): Promise<void> => {
      const cmd = args[args.length - 1] as Command;
      const opts = cmd.optsWithGlobals<Record<string, unknown>>();
      const positional: Record<string, unknown> = {};
      argNames.forEach((name, i) => {
        if (args[i] !== undefined) positional[name] = args[i];
      });
      const ctx = makeCtx({ noInput: opts.input === false, noColor: opts.color === false, quiet: opts.quiet === true });
      const code = await runner(load as never, { ...opts, ...positional }, ctx, onCommand as never);
      setExitCode(code);
    };

  const memoir = program.command('memoir').description('write, inspect, verify and repair Forge Memoirs');
  const withMemoir = (
    c: Command,
    desc = 'memoir file or directory (repeatable; default: every memoir under $KOURAI_HOME)',
  ): Command => c.option('--memoir <path>', desc, collect, []);

  withMemoir(
    memoir
      .command('append')
      .description(
        'append entries: one JSON argument, --file (JSON, array or NDJSON), or NDJSON on stdin; all validated before anything is written',
      )
      .argument('[entry]', 'one entry as JSON')
      .option('--file <path>', 'read entries from a file (- for stdin)')
      .option('--no-fsync', 'do not fsync after writing (faster, not crash-safe)')
      .option('--json', 'print the written entries as JSON'),
    'the memoir file to append to (created if missing) or its forge directory',
  ).action(act(() => import('./commands/memoir/append.js'), ['entry']));

  withMemoir(
    memoir
      .command('inspect')
      .description('list entries, filtered, from the index')
      .option('--agent <agent>', 'only this agent (repeatable)', collect, [])
      .option('--source <source>', 'only this source (repeatable)', collect, [])
      .option('--type <type>', 'only this entry type (repeatable)', collect, [])
      .addOption(new Option('--split <split>', 'shared or private, by the strict rule').choices(['shared', 'private']))
      .option('--scene <prefix>', 'scene id prefix, e.g. session-1a2b3c4d')
      .option('--since <time>', 'recorded at or after (ISO date/time)')
      .option('--until <time>', 'recorded before (ISO date/time)')
      .option('--text <words>', 'full-text match on proposals, beats, responses and labels')
      .option('--limit <n>', 'at most n entries (default 50; 0 for all)')
      .option('--all-revisions', 'list superseded entries too')
      .option('--json', 'one JSON document')
      .option('--ndjson', 'one entry per line (streams; every entry carries entry_id)'),
  ).action(act(() => import('./commands/memoir/inspect.js')));

  withMemoir(
    memoir
      .command('show')
      .description('show one entry by id (Python lines have derived py_ ids)')
      .argument('<id>', 'entry id')
      .option('--history', 'show the whole revision chain')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/memoir/show.js'), ['id']));

  withMemoir(
    memoir
      .command('stats')
      .description('counts per agent, source and split; affinity totals')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/memoir/stats.js')));

  withMemoir(
    memoir
      .command('verify')
      .description('check schema, splits, append-only integrity, torn tails and duplicate ids (exit 1 on problems)')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/memoir/verify.js')));

  withMemoir(
    memoir
      .command('repair')
      .description('quarantine torn fragments at the end of memoirs (nothing is deleted)')
      .option('--dry-run', 'say what would be done, change nothing')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/memoir/repair.js')));

  withMemoir(
    memoir
      .command('index')
      .description('bring the SQLite index up to date (incremental), or --rebuild it from the memoirs')
      .option('--rebuild', 'forget and re-read everything')
      .option('--full-text', 'also build the full-text index now (a large load leaves it to the first search)')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/memoir/index-cmd.js')));

  // --- player metrics ---
  withMemoir(
    memoir
      .command('players')
      .description(
        'player metrics of real forges: affinity gain per session (federated or not), Sovereignty Moment choices, Council of Sisters attendance, bonded relationships, the Stoa Falls',
      )
      .option('--player <name>', 'only this player (repeatable)', collect, [])
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/memoir/players.js')));

  memoir
    .command('synth')
    .description('write the sample forge: a realistic multi-session memoir with every agent')
    .option('--home <dir>', 'KOURAI_HOME to write into (default: $KOURAI_HOME)')
    .option(
      '--player <name>',
      'player name; also picks the planted preferences (README: ariadne, daedalus, icarus, or seeded from the name)',
      'ariadne',
    )
    .option(
      '--preferences <list>',
      'the player’s planted preferences instead, comma-separated (e.g. early-returns,typed-signatures), or none',
    )
    .option('--project <name>', 'project name', 'sample-forge')
    .option('--sessions <n>', 'number of sessions', '4')
    .option('--turns <n>', 'pipeline turns per session', '12')
    .option('--seed <n>', 'random seed (same seed, same forge)', '7')
    .option('--out <file>', 'write one memoir file here instead (for benchmarks)')
    .option('--entries <n>', 'with --out: stop after n entries')
    .option('--force', 'add sessions even if the project already has memoirs')
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/memoir/synth.js')));

  // --- replay, feedback, affinity ---
  withMemoir(
    memoir
      .command('replay')
      .description(
        'play the memoir as a story: an interactive screen in a terminal, text (or NDJSON with --json) otherwise',
      )
      .option('--agent <agent>', 'only this agent’s beats (repeatable)', collect, [])
      .option('--at <entry-id>', 'start the screen at this entry (id or unique prefix)')
      .option('--ndjson', 'session, scene, beat and session_end records, one a line (never interactive)')
      .option('--json', 'the same as --ndjson (replay only streams)'),
  ).action(act(() => import('./commands/memoir/replay.js')));

  program
    .command('feedback')
    .description(
      'ask the player how an agent’s proposal felt (1–5) and record it in the memoir; asks only when affinity and cooldown allow',
    )
    .option('--memoir <path>', 'the session’s memoir.jsonl (or its session directory)', collect, [])
    .option('--agent <agent>', 'the agent who proposed')
    .option('--scene <scene-id>', 'the scene the proposal belongs to (must be in the memoir)')
    .option('--proposed <text>', 'the proposal text')
    .option('--proposed-file <file>', 'read the proposal from a file (- for stdin when not interactive)')
    .option('--revised-file <file>', 'the player’s revision: makes a preference pair (proposed 0, revised 1)')
    .option('--rating <1-5>', 'how right it felt: 1 way off … 5 exactly right (no prompt with --kind)')
    .addOption(
      new Option('--kind <kind>', 'what the player did with it').choices([
        'accepted',
        'modified',
        'rejected',
        'deferred',
      ]),
    )
    .option('--comment <text>', 'an optional comment')
    .option('--force', 'ask even when affinity or the cooldown say not to')
    .option('--check', 'only say whether it would ask; write nothing')
    .option('--min-tier <tier>', 'affinity tier needed to ask: stranger, familiar (default), trusted, bonded')
    .option('--cooldown <n>', 'entries of the agent needed since its last feedback (default 5; doubled per skip)')
    .option('--json', 'JSON result (includes entry_id, or asked:false and the reason)')
    .action(act(() => import('./commands/feedback.js')));

  withMemoir(
    program
      .command('affinity')
      .description('per-agent affinity: sum of affinity deltas, tier, next tier, trend and last change')
      .option('--agent <agent>', 'only this agent (repeatable)', collect, [])
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/affinity.js')));

  // --- supersede, search, episodes, buffer ---
  const withFilters = (c: Command): Command =>
    c
      .option('--agent <agent>', 'only this agent (repeatable)', collect, [])
      .option('--source <source>', 'only this source (repeatable)', collect, [])
      .option('--type <type>', 'only this entry type (repeatable)', collect, [])
      .addOption(new Option('--split <split>', 'shared or private, by the strict rule').choices(['shared', 'private']))
      .option('--scene <prefix>', 'scene id prefix, e.g. session-1a2b3c4d')
      .option('--since <time>', 'recorded at or after (ISO date/time)')
      .option('--until <time>', 'recorded before (ISO date/time)');

  withMemoir(
    memoir
      .command('supersede')
      .description(
        'correct an entry: append a revision that names the entry it replaces (never more shareable than it)',
      )
      .argument('<id>', 'the entry to correct (a ULID or a derived py_ id; an old id corrects its newest revision)')
      .argument('[patch]', 'the correction as JSON: the fields to change, merged over the entry (or a whole entry)')
      .option('--file <path>', 'read the correction from a file (- for stdin)')
      .requiredOption('--reason <text>', 'why the entry is corrected (stored as revision_reason)')
      .option('--no-fsync', 'do not fsync after writing (faster, not crash-safe)')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/memoir/supersede.js'), ['id', 'patch']));

  withMemoir(
    withFilters(
      memoir
        .command('search')
        .description('full-text search, ranked by relevance (bm25), then newest; newest revisions only')
        .argument(
          '<query...>',
          'words to look for (any may match; more and rarer matches rank higher; the last word also matches as a prefix)',
        ),
    )
      .option('--limit <n>', 'at most n results (default 20, capped at 200)')
      .option('--all-revisions', 'search superseded entries too')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/memoir/search.js'), ['query']));

  withMemoir(
    memoir
      .command('episodes')
      .description('what happened and what was learned: one episode per scene (or session), with its lessons')
      .addOption(
        new Option('--by <grouping>', 'one episode per scene or per session')
          .choices(['scene', 'session'])
          .default('scene'),
      )
      .option('--scene <prefix>', 'only scenes with this id prefix, e.g. session-1a2b3c4d')
      .option('--write', 'append the episodes as private episode entries (skips those already written)')
      .option('--no-fsync', 'with --write: do not fsync (faster, not crash-safe)')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/memoir/episodes.js')));

  withMemoir(
    withFilters(
      memoir
        .command('buffer')
        .description('choose a bounded replay buffer for training: every load-bearing entry, then the most informative')
        .requiredOption('--max <n>', 'the bound: how many entries to keep (load-bearing ones are kept even beyond it)'),
    )
      .option('--dry-run', 'show what would be kept and dropped, and why; write nothing')
      .option('--out <file>', 'where to write the manifest (default $KOURAI_HOME/cache/replay-buffer.json)')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/memoir/buffer.js')));

  withMemoir(
    memoir
      .command('export')
      .description(
        'write the preference pairs for training elsewhere, one file per agent (shareable pairs only unless --include-private)',
      )
      .addOption(
        new Option(
          '--format <format>',
          'trl-dpo: TRL’s DPO format, {"prompt","chosen","rejected"} JSONL of strings; trl-dpo-chat: the same as messages with roles, for instruct models',
        ).choices(['trl-dpo', 'trl-dpo-chat']),
      )
      .option('--agent <agent>', 'only this agent (repeatable; default: every agent with pairs)', collect, [])
      .option('--out <dir>', 'directory for the files (default ./trl-dpo or ./trl-dpo-chat)')
      .option(
        '--include-private',
        'also private entries and the player’s own words: revisions, task descriptions (warns on stderr)',
      )
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/memoir/export.js')));

  // --- privacy, whisper, federate consent ---
  const withBudget = (c: Command): Command =>
    c
      .option('--forge-epsilon <ε>', "the forge's lifetime ε budget (default 8)")
      .option('--agent-epsilon <ε>', "each agent's lifetime ε budget (default 8)")
      .option('--delta <δ>', 'δ of every ε (default 1e-5)')
      .option('--noise-multiplier <σ>', 'noise standard deviation as a multiple of the clip norm (default 8)')
      .option('--clip-norm <S>', 'L2 norm every released delta is clipped to (default 1)');

  const privacy = program
    .command('privacy')
    .description('differential privacy: the RDP accountant, the ledger, releases');
  privacy
    .command('epsilon')
    .description('ε after some steps of the (sampled) Gaussian mechanism (RDP accountant, Opacus orders)')
    .option('--sigma <σ>', 'noise multiplier (required)')
    .option('--sample-rate <q>', 'sampling rate in (0, 1]; a federation round is 1', '1')
    .option('--steps <n>', 'number of steps (rounds)', '1')
    .option('--delta <δ>', 'δ in (0, 1)', '1e-5')
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/privacy/epsilon.js')));
  privacy
    .command('sigma')
    .description('the smallest σ that keeps ε within a target over some steps')
    .option('--epsilon <ε>', 'target ε (required)')
    .option('--sample-rate <q>', 'sampling rate in (0, 1]; a federation round is 1', '1')
    .option('--steps <n>', 'number of steps (rounds)', '1')
    .option('--delta <δ>', 'δ in (0, 1)', '1e-5')
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/privacy/sigma.js')));
  withBudget(
    privacy
      .command('ledger')
      .description('every release recorded in the privacy ledger, with cumulative ε (exit 8 if the ledger is corrupt)')
      .option('--agent <agent>', 'only this agent (repeatable)', collect, [])
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/privacy/ledger.js')));
  withBudget(
    privacy
      .command('release')
      .description("clip and noise one agent's council delta, spending its budget first (exit 4 when exhausted)")
      .option('--agent <agent>', 'the agent that speaks')
      .option('--round <id>', 'the federation round id')
      .option(
        '--file <path>',
        'the delta: JSON {"tensors": [{"name", "shape", "dtype": "F32", "data": base64 | [numbers]}]}',
      )
      .option(
        '--out <path>',
        'write the release (exactly what the council client sends) here: JSON, or a safetensors body when the name ends in .safetensors',
      )
      .option(
        '--base-fingerprint <sha>',
        "the base model's fingerprint (default: the one recorded when the forge joined its council)",
      )
      .option('--json', 'JSON output (includes the release document unless --out)'),
  ).action(act(() => import('./commands/privacy/release.js')));

  withMemoir(
    withBudget(
      program
        .command('whisper')
        .description('the Whisper Limit: privacy capacity left, who speaks next round and why, past contributions')
        .option('--round <id>', 'the round about to run (agents that already spoke in it are shown silent)')
        .option(
          '--next-round',
          'ask the joined council and show exactly what its next round would send (the plan `federate round --dry-run` prints)',
        )
        .option('--json', 'JSON output'),
    ),
  ).action(act(() => import('./commands/whisper.js')));

  const federate = program
    .command('federate')
    .description('the federation: join a council, consent (the Sovereignty Moment), rounds, status, simulation');
  federate
    .command('join')
    .description(
      'join a council: checks its protocol, the token and the base model, then stores the URL and token in a file only you can read',
    )
    .option('--server <url>', 'the council, e.g. https://council.example.org')
    .option(
      '--token <token>',
      "this forge's token from the council operator (- reads it from stdin; or KOURAI_COUNCIL_TOKEN)",
    )
    .option('--token-file <file>', 'read the token from a file')
    .option(
      '--retry-for <duration>',
      'how long to keep retrying a council that is down, silent or failing (default 1m)',
    )
    .option('--json', 'JSON output (never includes the token)')
    .action(act(() => import('./commands/federate/join.js')));
  federate
    .command('leave')
    .description("forget the council's URL and this forge's token (spent budget, consent and council events stay)")
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/federate/leave.js')));
  withMemoir(
    withBudget(
      federate
        .command('round')
        .description(
          'one federation round: each consenting agent trains her council adapter on shareable entries, clipped and noised within the Whisper Limit, is sent, and the aggregate comes home',
        )
        .option(
          '--dry-run',
          'print exactly what would be sent (per agent: tensors, clip, σ, ε, the envelope) and send nothing',
        )
        .option('--no-wait', 'send and seal, then return: the next run brings the round home')
        .option('--wait-for <duration>', 'how long to wait for the council to aggregate, e.g. 30m, 2h (default 30m)')
        .option('--retry-for <duration>', 'how long to keep retrying a council that is down or failing (default 10m)')
        .addOption(
          new Option('--encoding <form>', 'how updates travel (default json)').choices(['json', 'safetensors']),
        )
        .option('--json', 'JSON output'),
    ),
    'memoirs to learn from (repeatable; default: every memoir under $KOURAI_HOME)',
  ).action(act(() => import('./commands/federate/round.js')));
  federate
    .command('scene')
    .description(
      "a round's Council of Sisters (and the Stoa Falls when a forge fell), from the memoir: a scene in a terminal, text elsewhere",
    )
    .option('--round <n>', 'which round (default: the latest)')
    .option('--memoir <path>', "read council events from this memoir (default: the joined council's)")
    .option('--json', 'the scene as JSON')
    .action(act(() => import('./commands/federate/scene.js')));
  withBudget(
    federate
      .command('status')
      .description(
        'the council, the current round, trust and exile, consent and whisper capacity per agent, the last rounds (exit 8 if the ledger lost its anchors)',
      )
      .option('--offline', 'do not ask the council; show what the forge knows')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/federate/status.js')));
  federate
    .command('consent')
    .description('the Sovereignty Moment: choose which agents may speak for the forge (Cupid and Puck never do)')
    .option('--allow <agents>', 'agents that may speak, comma-separated, or "all" (repeatable)', collect, [])
    .option('--deny <agents>', 'agents that may not speak (repeatable)', collect, [])
    .option('--show', 'show the current consent, change nothing')
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/federate/consent.js')));
  // --- the evaluation harness ---
  federate
    .command('simulate')
    .description(
      'simulate a federation with the real trainer, privacy and council: Byzantine robustness, personalization, split, privacy/utility',
    )
    .option('--forges <n>', 'forges in the federation (default 11; at most 1000)')
    .option(
      '--cohort <k>',
      'forges sampled per round (default: all of them; Poisson at rate k/forges in cells with noise)',
    )
    .option('--byzantine <f>', 'how many of them attack (default 2; with --forges alone: 20%, rounded down)')
    .option('--rounds <n>', 'federation rounds per run (default 4)')
    .option('--agents <list>', 'agents to federate and measure, comma-separated (default techne)')
    .option('--sessions <n>', 'sample-forge sessions per forge (default 4)')
    .option('--turns <n>', 'pipeline turns per session (default 12)')
    .option(
      '--strategies <list>',
      'aggregation strategies to compare (default fedavg-naive,fedavg,multikrum+lora-fair,bulyan+lora-fair)',
    )
    .option('--attacks <list>', 'attacks to compare (default: none and all six)')
    .option('--epsilon <e>', 'ε of the Byzantine grid and the split comparison (default inf: clipping, no noise)')
    .option('--epsilons <list>', 'ε values of the privacy/utility sweep (default 0.5,1,4,8,inf)')
    .option(
      '--reference <strategy>',
      'strategy of the privacy, split and personalization runs (default multikrum+lora-fair)',
    )
    .option('--seeds <list>', 'seeds, comma-separated (default 1,2,3)')
    .option('--local-epochs <n>', 'council training epochs per round (default 3)')
    .option('--clip-norm <s>', 'S: every release is clipped to this L2 norm (default 1)')
    .option('--held-out <n>', 'held-out evaluation pairs per preference (default 200)')
    .option('--personal-sample <n>', 'honest forges whose personal quality is measured, at most (default 24)')
    .option(
      '--cold-start <list>',
      'session counts of late-joining newcomers measured on the clean reference run (default 1,2,4,8; none: skip)',
    )
    .option('--newcomers <n>', 'newcomers per session count (default 4)')
    .option('--threads <n>', 'worker threads for the trainings (default: the cores; 0: train on the main thread)')
    .option('--out <dir>', 'write report.html (self-contained) and results.json here')
    .option('--http', 'run every council as a real `kourai council serve` process on 127.0.0.1 (fidelity check)')
    .option('--fresh', 'ignore finished cells of an earlier run of the same experiment')
    .option('--json', 'one JSON document: summary, targets, every cell')
    .action(act(() => import('./commands/federate/simulate.js')));

  // --- council ---
  const council = program
    .command('council')
    .description('the council: the aggregation server federation rounds talk to, its forges, rounds and trust');
  const withLocation = (c: Command): Command =>
    c
      .option(
        '--data-dir <dir>',
        'where the council keeps council.db (default $KOURAI_HOME/council; env KOURAI_COUNCIL_DATA_DIR)',
      )
      .option(
        '--database <url>',
        'keep the council state in PostgreSQL instead, e.g. postgres://user:pw@host/db (env KOURAI_COUNCIL_DATABASE)',
      )
      .option('--config <file>', 'council config file (JSON; default $KOURAI_HOME/council/council.json if present)');

  withLocation(
    council
      .command('serve')
      .description(
        'run the council server until SIGINT/SIGTERM (plain HTTP: put TLS in a reverse proxy); logs to stderr',
      )
      .option('--host <host>', 'address to listen on (default 127.0.0.1)')
      .option('--port <port>', 'port (default 7470; 0 picks a free one)')
      .option(
        '--base-fingerprint <sha>',
        'base-model fingerprint updates must be for (repeatable; required unless --layouts derives from the built-in base, whose fingerprint is then the accepted one)',
        collect,
        [],
      )
      .addOption(
        new Option('--strategy <rule>', 'aggregation rule (default lora-fair)').choices([
          'fedavg',
          'median',
          'trimmed-mean',
          'krum',
          'multikrum',
          'bulyan',
          'lora-fair',
        ]),
      )
      .option('--byzantine <f>', 'Byzantine forges to tolerate (default 0)')
      .option('--trim <k>', 'trimmed-mean: values dropped at each end (default f)')
      .option('--multikrum-m <m>', 'multikrum: updates averaged (default n - f)')
      .addOption(
        new Option('--selection <rule>', 'lora-fair: robust selection first (default multikrum if f > 0)').choices([
          'none',
          'multikrum',
          'bulyan',
        ]),
      )
      .option('--min-forges <n>', 'sealed forges that close a round (default 3)')
      .option(
        '--round-deadline <duration>',
        'a round closes at the latest after this long, e.g. 30m, 24h (default 24h)',
      )
      .option('--payload-limit <size>', 'largest request body, e.g. 64MiB (default 64MiB)')
      .option('--max-in-flight <n>', 'submissions read at once; more get 503 busy (default 8)')
      .addOption(
        new Option(
          '--weights <mode>',
          'weigh updates uniformly or by the (noised) counts forges send (default uniform)',
        ).choices(['uniform', 'counts']),
      )
      .option('--tail-margin <t>', 'norm check: accept up to S(1 + sigma(sqrt(d) + t)) (default 10)')
      .option('--clip-norm <range>', 'privacy policy: clip norms S forges may declare, e.g. 1 or 0.5..1 (default 0..1)')
      .option(
        '--noise-multiplier <range>',
        'privacy policy: noise multipliers sigma forges may declare, e.g. 8 or 4..16 (default 8)',
      )
      .option(
        '--layouts <file|json>',
        'adapter layout per agent, a JSON file or inline JSON: {"derive": {"base": "builtin", "rank": 8}}, or tensors {"*": [{"name", "shape"}]} for all agents or per agent (required)',
      )
      .option('--max-uploads-per-forge <n>', 'uploads one forge may have in progress; more get 429 (default 2)')
      .option('--upload-grace <duration>', 'every upload gets this long plus its size at --upload-rate (default 10s)')
      .option('--upload-rate <size>', 'the slowest upload waited for, bytes per second, e.g. 128KiB (default 128KiB)')
      .option('--trust-alpha <a>', 'trust EMA rate (default 0.3)')
      .option('--trust-threshold <x>', 'exile below this trust (default 0.4)')
      .option('--trust-warmup <rounds>', 'scored rounds before a forge can be exiled (default 3)')
      .option(
        '--trust-tolerance <tau>',
        'distance to the aggregate, relative to the median, that still counts as similarity 1 (default 1.5)',
      )
      .option('--lora-fair-lambda <x>', 'LoRA-FAIR penalty (default 0.01)')
      .option('--lora-fair-lr <x>', 'LoRA-FAIR step size (default 0.01)')
      .option('--lora-fair-steps <n>', 'LoRA-FAIR gradient steps (default 1000)')
      .addOption(new Option('--lora-fair-solver <s>', 'LoRA-FAIR solver (default gd)').choices(['gd', 'ridge']))
      .option(
        '--cohort <k>',
        'forges sampled per round, by a secret seed kept in the council database (default: every forge)',
      )
      .option(
        '--aggregation-lease <duration>',
        'with several processes: how long a silent aggregator keeps a closed round before another takes over (default 30s)',
      )
      .option('--threads <n>', 'threads for pairwise distances (default: all cores)')
      .option('--ndjson', 'events on stdout, one a line (listening, stopped)')
      .option('--json', 'the same as --ndjson (serve only streams)'),
  ).action(act(() => import('./commands/council/serve.js')));

  const forge = council.command('forge').description('forges the council accepts updates from');
  withLocation(
    forge
      .command('add')
      .description('register a forge and print its token (shown once; the council stores only a hash)')
      .argument('<name>', 'forge name (letters, digits, . _ -)')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/council/forge-add.js'), ['name']));
  withLocation(
    forge
      .command('list')
      .description('every forge: status (active, revoked, exiled), trust, accepted updates, last seen')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/council/forge-list.js')));
  withLocation(
    forge
      .command('revoke')
      .description("stop accepting a forge's token at once (403 forge_revoked); its accepted updates stay")
      .argument('<name>', 'forge name')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/council/forge-revoke.js'), ['name']));
  withLocation(
    forge
      .command('rotate')
      .description('issue a new token for a forge (printed once); the old one stops working, a revocation is lifted')
      .argument('<name>', 'forge name')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/council/forge-rotate.js'), ['name']));

  const layout = council
    .command('layout')
    .description('the adapter layout (tensor names and shapes) the council accepts per agent');
  withLocation(
    layout
      .command('show')
      .description('the configured layout and the one in council.db, per agent, and whether they agree')
      .argument('[agent]', 'one agent (default: all)')
      .option('--layouts <file>', 'adapter layouts (JSON), as for council serve')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/council/layout-show.js'), ['agent']));
  withLocation(
    layout
      .command('reset')
      .description(
        'adopt the configured layout of an agent from the open round on (retires its old globals; drops its updates not yet aggregated)',
      )
      .argument('<agent>', 'agent')
      .option('--layouts <file>', 'adapter layouts (JSON), as for council serve')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/council/layout-reset.js'), ['agent']));

  withLocation(
    council
      .command('rounds')
      .description('the rounds, newest first: state, forges, what each agent aggregated')
      .option('--limit <n>', 'at most n rounds (default 20)')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/council/rounds.js')));

  withLocation(
    council
      .command('migrate')
      .description("bring the council database's schema up to date (PostgreSQL: run once before `serve`)")
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/council/migrate.js')));
  withLocation(
    council
      .command('status')
      .description('the council processes sharing the database and their last heartbeat, and the current round')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/council/status.js')));

  withLocation(
    council
      .command('trust')
      .description('trust score and status of every forge, and the Stoa Falls (exiles)')
      .option('--json', 'JSON output'),
  ).action(act(() => import('./commands/council/trust.js')));

  council
    .command('aggregate')
    .description('aggregate update files offline (one safetensors file per forge) with any council rule')
    .argument('<updates...>', 'UPDATE.safetensors files (same tensor names and shapes)')
    .addOption(
      new Option('--strategy <rule>', 'aggregation rule')
        .choices(['fedavg', 'median', 'trimmed-mean', 'krum', 'multikrum', 'bulyan', 'lora-fair'])
        .makeOptionMandatory(),
    )
    .option('--byzantine <f>', 'Byzantine updates to tolerate (default 0)')
    .option('--trim <k>', 'trimmed-mean: values dropped at each end (default f)')
    .option('--multikrum-m <m>', 'multikrum: updates averaged (default n - f)')
    .addOption(
      new Option('--selection <rule>', 'lora-fair: robust selection first (default multikrum if f > 0)').choices([
        'none',
        'multikrum',
        'bulyan',
      ]),
    )
    .addOption(
      new Option(
        '--weights <mode>',
        'weigh updates uniformly or by each file\'s __metadata__ "weight" (default uniform)',
      ).choices(['uniform', 'counts']),
    )
    .option('--weight-values <w1,w2,...>', 'explicit per-update weights, in file order (instead of --weights)')
    .option('--base <file>', 'lora-fair: the global adapter the updates are deltas from')
    .option('--lora-fair-lambda <x>', 'LoRA-FAIR penalty (default 0.01)')
    .option('--lora-fair-lr <x>', 'LoRA-FAIR step size (default 0.01)')
    .option('--lora-fair-steps <n>', 'LoRA-FAIR gradient steps (default 1000)')
    .addOption(new Option('--lora-fair-solver <s>', 'LoRA-FAIR solver (default gd)').choices(['gd', 'ridge']))
    .requiredOption('-o, --out <file>', 'output safetensors file (never one of the inputs)')
    .option('--force', 'replace the output file if it exists')
    .addOption(new Option('--dtype <dtype>', 'output dtype (default F32)').choices(['F32', 'F64']))
    .option('--threads <n>', 'threads for pairwise distances (default: all cores)')
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/council/aggregate.js'), ['updates']));

  // --- local learning (bond adapters, adapters, score, route) ---
  const useOpt = (): Option =>
    new Option('--use <adapters>', 'adapters applied: both (mixed by the lean), bond or council').choices([
      'both',
      'bond',
      'council',
    ]);
  const leanOpt =
    '0 personal (bond only) … 1 federated (council only); default learn.lean in config.json, else the lean chosen on your held-out scenes';
  const agentOpt = (c: Command): Command => c.option('--agent <agent>', 'only this agent (repeatable)', collect, []);
  const kindOpt = (): Option =>
    new Option('--kind <kind>', 'bond or council (default bond)').choices(['bond', 'council']);

  const trainCmd = program.command('train').description('train adapters from the memoir on this machine');
  withMemoir(
    agentOpt(
      trainCmd
        .command('bond')
        .description(
          'train every agent’s bond adapter (private entries included; it never leaves this machine) and make it current',
        ),
    )
      .option('--epochs <n>', 'most epochs of the nonlinear path (early stopping may end sooner; default 20)')
      .option('--patience <n>', 'epochs without a better validation pairwise accuracy before stopping (default 5)')
      .option('--l2 <x>', 'the direct path’s L2 penalty (default: chosen by cross-validation on the training scenes)')
      .option('--rank <r>', 'LoRA rank (default 8)')
      .option('--lr <x>', 'learning rate (default 0.01)')
      .option('--seed <n>', 'seed: same data and seed, byte-identical adapters (default 7)')
      .option(
        '--buffer <n>',
        'replay buffer per agent: load-bearing entries, then the most informative up to n (default 5000)',
      )
      .option('--json', 'print the final report as JSON'),
  ).action(act(() => import('./commands/train/bond.js')));

  const adapters = program
    .command('adapters')
    .description('adapter versions: list, inspect, compare, export, roll back, prune');
  agentOpt(
    adapters.command('list').description('every adapter version, the current ones marked, with validation metrics'),
  )
    .addOption(kindOpt())
    .option('--all', 'include pruned versions')
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/adapters/list.js')));
  adapters
    .command('show')
    .description('one version in detail: PEFT config, tensors, metrics, data window (checked whole)')
    .argument('<agent>', 'the agent')
    .addOption(kindOpt())
    .option('--version <n>', 'the version (default: current)')
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/adapters/show.js'), ['agent']));
  adapters
    .command('diff')
    .description('how two versions differ: norms of their effective updates and of the difference, metrics')
    .argument('<agent>', 'the agent')
    .addOption(kindOpt())
    .option('--from <n>', 'the older version (default: the one --to was trained after)')
    .option('--to <n>', 'the newer version (default: current)')
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/adapters/diff.js'), ['agent']));
  adapters
    .command('export')
    .description(
      'copy a version to a directory in PEFT’s file layout (adapter_model.safetensors + adapter_config.json)',
    )
    .argument('<agent>', 'the agent')
    .addOption(kindOpt())
    .option('--version <n>', 'the version (default: current)')
    .requiredOption('--out <dir>', 'a new or empty directory')
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/adapters/export.js'), ['agent']));
  adapters
    .command('rollback')
    .description('make an earlier version current again (default: the one the current version was trained after)')
    .argument('<agent>', 'the agent')
    .addOption(kindOpt())
    .option('--to <n>', 'the version to make current')
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/adapters/rollback.js'), ['agent']));
  agentOpt(
    adapters
      .command('prune')
      .description('delete the files of old versions (the current one and --keep more stay; history stays)'),
  )
    .addOption(kindOpt())
    .option('--keep <n>', 'versions kept besides the current one (default 3)')
    .option('--dry-run', 'say what would be deleted')
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/adapters/prune.js')));

  program
    .command('score')
    .description('rank candidate texts as an agent’s adapters prefer them (arguments, --file, or NDJSON on stdin)')
    .argument('[candidates...]', 'the candidate texts')
    .requiredOption('--agent <agent>', 'whose preference model')
    .option('--file <path>', 'candidates as JSON: ["…", …] or {"candidates": [...], "task_type": "…", "prompt": "…"}')
    .option(
      '--stdin',
      'stream: one {"id", "candidates", "task_type", "prompt", "lean"} per line in, one ranking per line out (NDJSON)',
    )
    .option('--task-type <type>', 'the task type (selects its lean)')
    .option('--prompt <text>', 'what the candidates answer (the task or question), when the host has it')
    .option('--prompt-file <path>', 'the same, read from a file')
    .addOption(useOpt())
    .option('--lean <x>', leanOpt)
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/score.js'), ['candidates']));

  program
    .command('route')
    .description('Hephaestus’s routing head: which specialist should take the task (a distribution)')
    .argument('[task]', 'the task description')
    .option('--task-type <type>', 'the task type')
    .addOption(useOpt())
    .option('--lean <x>', leanOpt)
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/route.js'), ['task']));

  program
    .command('doctor')
    .description('check the environment, paths and index health; print the command that fixes each problem')
    .option('--json', 'JSON output')
    .action(act(() => import('./commands/doctor.js')));

  program
    .command('completion')
    .description('print a shell completion script (commands, options and their choices)')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .option('--json', 'JSON output: {"shell", "script"}')
    .action(async (shell: string, _opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<Record<string, unknown>>();
      const ctx = makeCtx({ noInput: opts.input === false, noColor: opts.color === false, quiet: opts.quiet === true });
      setExitCode(
        await runner(
          (() => import('./commands/completion.js')) as never,
          { ...opts, shell, tree: describeTree(program) },
          ctx,
          onCommand as never,
        ),
      );
    });

  // `kourai help council serve` is the help of `council serve` (commander's own help command
  // only looks one level down).
  program.helpCommand(false);
  program
    .command('help')
    .description('help for a command, e.g. kourai help council serve')
    .argument('[command...]', 'the command')
    .action((names: string[]) => {
      let target: Command = program;
      for (const n of names) {
        const next = target.commands.find((c) => c.name() === n || c.aliases().includes(n));
        if (!next) throw new UsageError(`unknown command "${names.join(' ')}"`, 'see `kourai --help`');
        target = next;
      }
      target.outputHelp();
    });

  helpText(program);
  usageErrors(program);
  return program;
}

/**
 * Every help ends with examples, exit codes and (for a screen) its keys (src/help.ts); a default
 * is shown once, as typed (`(default: 4)`), and never as an empty list.
 */
function helpText(root: Command): void {
  const visit = (c: Command): void => {
    const path = commandPath(c).replace(/^kourai ?/, '');
    c.configureHelp({
      optionDescription: optionDescription,
      sortSubcommands: false,
      visibleOptions: (cmd: Command) =>
        cmd === root ? [versionOption, ...new Help().visibleOptions(cmd)] : new Help().visibleOptions(cmd),
    });
    c.addHelpText(
      'after',
      () =>
        `${helpFooter(
          path,
          c.commands.map((x) => x.name()).filter((n) => n !== 'help'),
        )}\n`,
    );
    c.commands.forEach(visit);
  };
  visit(root);
}

function optionDescription(option: Option): string {
  const base = new Help().optionDescription(
    Object.assign(Object.create(Object.getPrototypeOf(option) as object) as Option, option, {
      defaultValue: undefined,
    }),
  );
  const d: unknown = option.defaultValue;
  const shown =
    (typeof d === 'string' || typeof d === 'number') && !/\(default\b|default:/.test(option.description)
      ? String(d)
      : undefined;
  return shown === undefined ? base : `${base} (default: ${shown})`;
}

/** The tree as the completion scripts see it (src/output/completion.ts). */
function describeTree(c: Command): CompletionNode {
  return {
    name: c.name(),
    description: c.description(),
    options: [
      ...c.options.map((o) => ({
        flags: [o.short, o.long].filter((f): f is string => typeof f === 'string'),
        description: o.description,
        takesValue: o.required || o.optional,
        ...(o.argChoices ? { choices: o.argChoices } : {}),
      })),
      { flags: ['-h', '--help'], description: 'display help', takesValue: false },
    ],
    commands: c.commands.filter((x) => x.name() !== 'help').map(describeTree),
  };
}

/**
 * Commander's errors (unknown option, missing argument, bad choice…) become kourai usage errors
 * (exit 2): one line on stderr after `kourai: `, the JSON error document under --json, and a
 * hint naming the help of the command that refused the input.
 */
function usageErrors(root: Command): void {
  const visit = (c: Command): void => {
    c.exitOverride((err: CommanderError) => {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help' ||
        err.exitCode === 0
      )
        throw err;
      // The root's -V/--version is listed in its help only (see isVersionRequest): never suggest it below the root.
      const message = err.message.replace(/^error: /, '').replace(/\s*\(Did you mean --version\?\)/, '');
      const versionAsked = c !== root && err.code === 'commander.unknownOption' && /'(--version|-V)'/.test(message);
      throw new UsageError(
        message,
        versionAsked
          ? 'the program version is `kourai --version` (first on the line)'
          : `see \`${commandPath(c)} --help\``,
      );
    });
    c.commands.forEach(visit);
  };
  visit(root);
}

function commandPath(c: Command): string {
  const names: string[] = [];
  for (let x: Command | null = c; x; x = x.parent) names.unshift(x.name());
  return names.join(' ');
}
