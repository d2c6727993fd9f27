import { mulberry32 } from '../runtime/seeded-random.js';
import { FEDERATING_AGENTS, type Agent } from './agents.js';
import { encodeEntry } from './encode.js';
import { ulidGenerator } from './entry-id.js';
import type { Context, Interrupt, MemoirEntry, PlayerResponse, TrainingLabel } from './schema.js';
import type { ReasonClass, ResponseKind, Source, Visibility } from './sources.js';
import { strictSplit } from './split-rule.js';

/**
 * The sample forge: a seeded, realistic multi-session memoir. Sessions follow the pipeline
 * (Hephaestus routes, specialists propose, the player responds), with revisions and preference
 * pairs, interrupts (including silent and private ones), disagreements, Cupid and Puck scenes,
 * affinity changes, a Sovereignty Moment and loyalty beats. Some sessions are written as a
 * Python host writes them (the ten keys only) so derived ids show up too.
 * Same seed, same forge, byte for byte.
 */

const TASKS = ['plan', 'code', 'test', 'style_review', 'commit'] as const;
const SPECIALIST: Record<(typeof TASKS)[number], Agent> = { plan: 'metis', code: 'techne', test: 'dokimasia', style_review: 'kallos', commit: 'mneme' };

const PROPOSALS: Record<(typeof TASKS)[number], readonly string[]> = {
  plan: [
    '1. Extract the parser into its own module\n2. Add a streaming reader\n3. Cover torn tails with a property test',
    'Split the work: schema first, then the index, then the CLI on top',
    'Plan: measure before optimising; the index is a cache, rebuildable from the memoir',
  ],
  code: [
    'def load(path):\n    with open(path) as f:\n        return [json.loads(l) for l in f]',
    'export function clip(v: Float32Array, s: number) { const n = norm(v); return n > s ? scale(v, s / n) : v; }',
    'for (const line of lines) { if (!line.trim()) continue; out.push(JSON.parse(line)); }',
    'x = compute()  # TODO naming',
  ],
  test: [
    'def test_roundtrip():\n    assert parse(dump(e)) == e',
    "it('rejects NaN anywhere', () => { expect(() => ingest([NaN])).toThrow(/NaN/); });",
    'property: append then crash at any byte keeps every acknowledged entry',
  ],
  style_review: [
    'rename `x` to `entryCount`; prefer early returns over nested ifs',
    'line 42: 120 columns; wrap the call arguments',
    'naming: `tmp2` says nothing about what it holds — café-grade names only',
  ],
  commit: [
    'memoir: stream verify in bounded memory',
    'fix(index): rebuild when a file shrinks instead of reading past its end',
    'feat: Whisper Limit gauge 🔥',
  ],
};

const REVISIONS: readonly string[] = [
  'entry_count = compute()',
  'export function clip(v: Float32Array, bound: number) { const n = l2(v); return n > bound ? scale(v, bound / n) : v; }',
  'memoir: verify streams in bounded memory (200 MB at 1M entries)',
  'Plan: schema, index, CLI — and a benchmark before any optimisation',
  "it('rejects NaN and Infinity anywhere in the update', ...)",
];

const INTERRUPTS: readonly { agent: Agent; reason: ReasonClass; visibility: Visibility; text: string }[] = [
  { agent: 'aidos', reason: 'correction', visibility: 'public', text: 'That docstring restates the code. Slop. Cut it.' },
  { agent: 'aletheia', reason: 'correction', visibility: 'public', text: 'Citation needed: that RDP bound is from Mironov 2017, not Abadi.' },
  { agent: 'kallos', reason: 'disagreement', visibility: 'public', text: 'I would not rename that; the short name is idiomatic here.' },
  { agent: 'aidos', reason: 'disagreement', visibility: 'silent', text: 'Kallos is wrong about this one, but I will let it pass.' },
  { agent: 'dokimasia', reason: 'safety', visibility: 'public', text: 'This deletes files without a dry run. Add one before merging.' },
  { agent: 'cupid', reason: 'care', visibility: 'private', text: 'It is late. The tests will still be here tomorrow.' },
  { agent: 'puck', reason: 'gossip', visibility: 'silent', text: 'Psst — Techne rewrote that function three times before showing you.' },
];

const CUPID_SCENES = ['cupid_late_night_check_in', 'cupid_remembers_your_first_commit', 'cupid_quiet_encouragement'];
const PUCK_EVENTS = ['puck_minigame_refactor_race', 'puck_tutorial_shortcuts', 'puck_riddle_of_the_flaky_test'];

interface SynthInput {
  scene_id: string;
  agent: Agent;
  source: Source;
  context: Context | null;
  narrative_beat: string | null;
  agent_proposed: string | null;
  player_response: PlayerResponse | null;
  affinity_delta: number;
  training_label: TrainingLabel | null;
  entry_type?: MemoirEntry['entry_type'];
  interrupt?: Interrupt;
}

export interface SynthOptions {
  seed: number;
  sessions: number;
  turns: number;
  /** First session starts here (ms since epoch). */
  startMs?: number;
}

export interface SynthSession {
  sessionId: string;
  lines: string[];
  entries: number;
}

function hex(rand: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor(rand() * 16).toString(16);
  return s;
}

function pick<T>(rand: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)] as T;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** Generates sessions lazily; each session is an array of encoded lines. */
export function* synthSessions(opts: SynthOptions): Generator<SynthSession> {
  const rand = mulberry32(opts.seed);
  let clock = opts.startMs ?? Date.UTC(2026, 9, 1, 9, 0, 0);
  const ids = ulidGenerator(() => clock, (n) => Uint8Array.from({ length: n }, () => Math.floor(rand() * 256)));
  for (let s = 0; s < opts.sessions; s++) {
    const sessionId = `${hex(rand, 8)}-${hex(rand, 4)}-4${hex(rand, 3)}-a${hex(rand, 3)}-${hex(rand, 12)}`;
    const scenePrefix = `session-${sessionId.slice(0, 8)}`;
    // Every third session comes from the Ren'Py host: upstream lines, no kourai extensions.
    const pythonHost = s % 3 === 2;
    const lines: string[] = [];
    let turn = 0;
    let lastTurnId = '';
    const emit = (e: SynthInput): string => {
      clock += 20_000 + Math.floor(rand() * 160_000);
      const entryType = e.entry_type ?? (e.source === 'agent_interrupt' ? 'interrupt' : 'pipeline_turn');
      const split = strictSplit({ ...e, entry_type: entryType });
      if (pythonHost) {
        const { entry_type: _t, interrupt: _i, ...upstream } = e;
        lines.push(encodeEntry({ ...upstream, split }));
        return '';
      }
      const id = ids.next();
      lines.push(encodeEntry({ ...e, split, entry_id: id, recorded_at: new Date(clock).toISOString(), entry_type: entryType }));
      return id;
    };
    const scene = (): string => `${scenePrefix}.turn-${turn++}`;
    const ctxFor = (task: string, preceding: Agent[]) => ({ task_type: task, transcript_hash: `sha256:${hex(rand, 16)}`, preceding_agents: preceding });
    const base = { context: null, narrative_beat: null, agent_proposed: null, player_response: null, affinity_delta: 0, training_label: null };

    if (s === 0) {
      emit({ ...base, scene_id: scene(), agent: 'hephaestus', source: 'player_profile', entry_type: 'council_event', narrative_beat: 'sovereignty_moment_opens', agent_proposed: 'The council of forges asks whether we will speak for you. Each of us will say where she stands.' });
    }
    emit({ ...base, scene_id: scene(), agent: 'hephaestus', source: 'task_description', context: ctxFor('plan', []), agent_proposed: pick(rand, ['Add a torn-tail repair to the memoir writer', 'Make the council server survive restarts', 'Teach the CLI to replay a session']) });
    for (let t = 0; t < opts.turns; t++) {
      const task = TASKS[t % TASKS.length] as (typeof TASKS)[number];
      const specialist = SPECIALIST[task];
      const sc = scene();
      emit({ ...base, scene_id: sc, agent: 'hephaestus', source: 'specialist_proposed', context: ctxFor(task, []), narrative_beat: `hephaestus_routes_to_${specialist}`, agent_proposed: `route:${specialist}` });
      const proposal = pick(rand, PROPOSALS[task]);
      const r = rand();
      const kind: ResponseKind = r < 0.5 ? 'accepted' : r < 0.75 ? 'modified' : r < 0.9 ? 'rejected' : 'deferred';
      const felt = kind === 'accepted' ? 'right' : kind === 'modified' ? pick(rand, ['unsure', 'right'] as const) : kind === 'rejected' ? 'off' : null;
      const revised = kind === 'modified' ? pick(rand, REVISIONS) : null;
      const affinity = kind === 'accepted' ? 0.02 : kind === 'modified' ? 0.01 : kind === 'rejected' ? -0.05 : 0;
      lastTurnId = emit({
        ...base,
        scene_id: sc,
        agent: specialist,
        source: 'specialist_proposed',
        context: ctxFor(task, ['hephaestus']),
        narrative_beat: `${specialist}_${kind === 'accepted' ? 'proposal_lands' : kind === 'rejected' ? 'proposal_refused' : 'proposal_reworked'}`,
        agent_proposed: proposal,
        player_response: { kind, delta: revised, felt },
        affinity_delta: affinity,
        training_label: revised ? { preference_pair: [{ text: proposal, score: 0 }, { text: revised, score: 1 }], weight: 1 } : kind === 'rejected' ? { preference_pair: null, weight: 0.5 } : null,
      }) || lastTurnId;
      if (revised) {
        emit({ ...base, scene_id: sc, agent: specialist, source: 'player_revision', context: ctxFor(task, ['hephaestus', specialist]), agent_proposed: revised, player_response: { kind: 'modified', delta: revised, felt }, training_label: { preference_pair: [{ text: proposal, score: 0 }, { text: revised, score: 1 }], weight: 2 } });
      }
      if (rand() < 0.35) {
        const it = pick(rand, INTERRUPTS);
        emit({
          ...base,
          scene_id: sc,
          agent: it.agent,
          source: 'agent_interrupt',
          narrative_beat: `${it.agent}_interrupts_${specialist}`,
          agent_proposed: it.text,
          affinity_delta: it.reason === 'care' ? 0.02 : 0,
          interrupt: { interrupting_agent: it.agent, target_agent: specialist, target_turn: lastTurnId || sc, reason_class: it.reason, visibility: it.visibility },
        });
      }
      if (task === 'style_review' && rand() < 0.6) {
        const side = pick(rand, ['aidos', 'kallos'] as const);
        emit({ ...base, scene_id: sc, agent: side, source: 'disagreement_resolution', context: ctxFor(task, ['kallos', 'aidos']), narrative_beat: `player_sides_with_${side}`, agent_proposed: `${side === 'aidos' ? 'Aidos: cut the filler comment' : 'Kallos: keep the idiomatic short name'}`, player_response: { kind: 'accepted', delta: null, felt: 'right' }, affinity_delta: 0.02, training_label: { preference_pair: [{ text: side === 'aidos' ? 'keep comment' : 'rename', score: 0 }, { text: side === 'aidos' ? 'cut comment' : 'keep name', score: 1 }], weight: 1 } });
      }
      if (rand() < 0.15) {
        const delta = kind === 'rejected' ? -0.05 : 0.02;
        emit({ ...base, scene_id: sc, agent: specialist, source: 'affinity_change', narrative_beat: delta > 0 ? `${specialist}_warms` : `${specialist}_cools`, affinity_delta: delta });
      }
    }
    const cupidScene = pick(rand, CUPID_SCENES);
    emit({ ...base, scene_id: scene(), agent: 'cupid', source: 'cupid_scene', entry_type: rand() < 0.5 ? 'loyalty_beat' : 'pipeline_turn', narrative_beat: cupidScene, agent_proposed: 'You kept going when the tests were red. I noticed.', affinity_delta: 0.05 });
    emit({ ...base, scene_id: scene(), agent: 'puck', source: 'puck_engagement', narrative_beat: pick(rand, PUCK_EVENTS), player_response: { kind: rand() < 0.7 ? 'accepted' : 'deferred', delta: null, felt: 'right' }, affinity_delta: 0.02 });
    const loyal = pick(rand, FEDERATING_AGENTS);
    emit({ ...base, scene_id: scene(), agent: loyal, source: 'affinity_change', entry_type: 'loyalty_beat', narrative_beat: `${loyal}_loyalty_step_${1 + (s % 3)}`, affinity_delta: round6(0.03 + rand() * 0.02) });
    emit({ ...base, scene_id: scene(), agent: 'hephaestus', source: 'raw_transcript', context: ctxFor('session', []), agent_proposed: `transcript of ${scenePrefix} (${turn} turns)` });
    yield { sessionId, lines, entries: lines.length };
    clock += 18 * 3600_000;
  }
}
