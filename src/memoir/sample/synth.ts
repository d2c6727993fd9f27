import { mulberry32 } from '../../runtime/seeded-random.js';
import { FEDERATING_AGENTS, type Agent } from '../format/agents.js';
import { encodeEntry } from '../format/encode.js';
import { ulidGenerator } from '../format/entry-id.js';
import type { Axis } from './planted/catalogue.js';
import { heldPoles, profileFor, CUPID_SCENES, PUCK_EVENTS, type PlayerProfile } from './planted/profiles.js';
import { between, pick } from './planted/pseudo-words.js';
import {
  aidosFlag,
  AIDOS_AXES,
  disagreementPositions,
  DISAGREEMENT_AXES,
  kallosEdit,
  KALLOS_AXES,
  reviewContent,
  type ReviewContent,
} from './planted/render-review.js';
import { slopReview, type SlopShard } from './planted/slop.js';
import { axesOf, balancedPair, newSample, randomStyle, render, withPoles, type SampleKind } from './planted/samples.js';
import type { Style } from './planted/style.js';
import {
  pickTask,
  PIPELINE_TASK_TYPES,
  READING_TASK_TYPES,
  SPECIALIST,
  taskDescription,
  type TaskType,
} from './planted/tasks.js';
import type { Context, Interrupt, MemoirEntry, PlayerResponse, TrainingLabel } from '../format/schema.js';
import type { Felt, ReasonClass, ResponseKind, Source, Visibility } from '../format/sources.js';
import { strictSplit } from '../format/split-rule.js';

/**
 * The sample forge: a seeded, realistic multi-session memoir of one player. Every pipeline turn
 * starts with the player's task (a private `task_description`); Hephaestus routes it (now and
 * then wrongly, and the player steps in) to any of the seven specialists; the specialist proposes; the player accepts proposals
 * in their style and rewrites or rejects the others (planted preferences: `planted/`). Around
 * that: interrupts (silent and private ones too), Aidos's slop calls and Aletheia's corrections
 * with the player's answer, Kallos's style edits, Kallos–Aidos disagreements, Likert feedback,
 * Cupid and Puck scenes, affinity changes, a Sovereignty Moment and loyalty beats. Every third
 * session is written as a Python host writes it (the ten keys only), so derived ids show up too.
 * Identifiers and nouns come from the training vocabulary only (`planted/pseudo-words.ts`).
 * Same seed and player, same forge, byte for byte.
 */

const KIND_OF_TASK: Readonly<Partial<Record<TaskType, SampleKind>>> = {
  code: 'code',
  test: 'test',
  commit: 'commit',
  plan: 'plan',
};

const OTHER_INTERRUPTS: readonly { agent: Agent; reason: ReasonClass; visibility: Visibility; text: string }[] = [
  {
    agent: 'kallos',
    reason: 'disagreement',
    visibility: 'public',
    text: 'I would not rename that; the short name is idiomatic here.',
  },
  {
    agent: 'aidos',
    reason: 'disagreement',
    visibility: 'silent',
    text: 'Kallos is wrong about this one, but I will let it pass.',
  },
  {
    agent: 'dokimasia',
    reason: 'safety',
    visibility: 'public',
    text: 'This deletes files without a dry run. Add one before merging.',
  },
  { agent: 'cupid', reason: 'care', visibility: 'private', text: 'It is late. The tests will still be here tomorrow.' },
  {
    agent: 'puck',
    reason: 'gossip',
    visibility: 'silent',
    text: 'Psst — Techne rewrote that function three times before showing you.',
  },
];

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
  likert?: number;
}

export interface SynthOptions {
  seed: number;
  sessions: number;
  turns: number;
  /** First session starts here (ms since epoch). */
  startMs?: number;
  /** Whose forge (planted preferences). Default: the `ariadne` profile. */
  profile?: PlayerProfile;
  /**
   * Slop reviews (planted/slop.ts): passages from this shard put to Aidos after each session's
   * other lines, from a stream and clock of their own. Off by default: without it every line is
   * as it was.
   */
  slop?: SlopShard;
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

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** Likert rating -> felt and affinity, as `kourai feedback` writes them (src/feedback/entry.ts). */
function feltFor(rating: number): Felt {
  return rating <= 2 ? 'off' : rating === 3 ? 'unsure' : 'right';
}

const BEAT: Readonly<Record<ResponseKind, string>> = {
  accepted: 'proposal_lands',
  modified: 'proposal_reworked',
  rejected: 'proposal_refused',
  deferred: 'proposal_deferred',
};
const AFFINITY: Readonly<Record<ResponseKind, number>> = {
  accepted: 0.02,
  modified: 0.02,
  rejected: -0.03,
  deferred: 0,
};
const FELT: Readonly<Record<ResponseKind, Felt | null>> = {
  accepted: 'right',
  modified: 'unsure',
  rejected: 'off',
  deferred: null,
};

/** Axes of this style on which the player holds the other pole. */
function violations(held: Partial<Record<Axis, 0 | 1>>, style: Style): Axis[] {
  return (Object.keys(style) as Axis[]).filter((a) => held[a] !== undefined && style[a]?.pole !== held[a]);
}

/** Generates sessions lazily; each session is an array of encoded lines. */
export function* synthSessions(opts: SynthOptions): Generator<SynthSession> {
  const rand = mulberry32(opts.seed);
  const profile = opts.profile ?? profileFor('ariadne');
  const held = heldPoles(profile);
  let clock = opts.startMs ?? Date.UTC(2026, 9, 1, 9, 0, 0);
  const ids = ulidGenerator(
    () => clock,
    (n) => Uint8Array.from({ length: n }, () => Math.floor(rand() * 256)),
  );
  // Reading tasks (Aidos, Aletheia) draw from a stream of their own and are written after the
  // session's other lines, on a clock of their own: every other line stays as it was without them.
  const readRand = mulberry32((opts.seed ^ 0x5eed_a1d0) >>> 0);
  let readClock = 0;
  const readIds = ulidGenerator(
    () => readClock,
    (n) => Uint8Array.from({ length: n }, () => Math.floor(readRand() * 256)),
  );
  const slopRand = mulberry32((opts.seed ^ 0x510b_5eed) >>> 0);
  let slopClock = 0;
  const slopIds = ulidGenerator(
    () => slopClock,
    (n) => Uint8Array.from({ length: n }, () => Math.floor(slopRand() * 256)),
  );
  for (let s = 0; s < opts.sessions; s++) {
    const sessionId = `${hex(rand, 8)}-${hex(rand, 4)}-4${hex(rand, 3)}-a${hex(rand, 3)}-${hex(rand, 12)}`;
    const scenePrefix = `session-${sessionId.slice(0, 8)}`;
    // Every third session comes from the Ren'Py host: upstream lines, no kourai extensions.
    const pythonHost = s % 3 === 2;
    const lines: string[] = [];
    let turn = 0;
    const write = (e: SynthInput, at: number, nextId: () => string): string => {
      const entryType = e.entry_type ?? (e.source === 'agent_interrupt' ? 'interrupt' : 'pipeline_turn');
      const split = strictSplit({ ...e, entry_type: entryType });
      if (pythonHost) {
        const { entry_type: _t, interrupt: _i, likert: _l, ...upstream } = e;
        lines.push(encodeEntry({ ...upstream, split }));
        return '';
      }
      const id = nextId();
      lines.push(
        encodeEntry({ ...e, split, entry_id: id, recorded_at: new Date(at).toISOString(), entry_type: entryType }),
      );
      return id;
    };
    const emit = (e: SynthInput): string => {
      clock += 20_000 + Math.floor(rand() * 160_000);
      return write(e, clock, () => ids.next());
    };
    const emitReading = (e: SynthInput): string => {
      readClock += 20_000 + Math.floor(readRand() * 160_000);
      return write(e, readClock, () => readIds.next());
    };
    const emitSlop = (e: SynthInput): string => {
      slopClock += 20_000 + Math.floor(slopRand() * 160_000);
      return write(e, slopClock, () => slopIds.next());
    };
    const scene = (): string => `${scenePrefix}.turn-${turn++}`;
    const ctxFor = (task: string, preceding: Agent[], r = rand): Context => ({
      task_type: task,
      transcript_hash: `sha256:${hex(r, 16)}`,
      preceding_agents: preceding,
    });
    const base = {
      context: null,
      narrative_beat: null,
      agent_proposed: null,
      player_response: null,
      affinity_delta: 0,
      training_label: null,
    };

    /** The player's answer to a review (taken or dismissed) given the pole it asks for. */
    const answers = (axis: Axis, toward: 0 | 1, r = rand): boolean => {
      const h = held[axis];
      if (h === undefined) return r() < 0.5;
      return r() < 0.95 ? toward === h : toward !== h;
    };

    /**
     * A reading task: the player asks Aidos whether a text is slop, or Aletheia whether its claims
     * and sources hold; Hephaestus routes it; she answers, and the player takes the answer or not
     * as they hold the axis. Reading tasks move no affinity (the planted arcs stay as they were).
     */
    const readingTurn = (task: TaskType): void => {
      const r = readRand;
      const specialist = SPECIALIST[task];
      const sc = scene();
      const ctx = (preceding: Agent[]): Context => ctxFor(task, preceding, r);
      emitReading({
        ...base,
        scene_id: sc,
        agent: 'hephaestus',
        source: 'task_description',
        context: ctx([]),
        agent_proposed: taskDescription(r, task, 'train'),
      });
      emitReading({
        ...base,
        scene_id: sc,
        agent: 'hephaestus',
        source: 'specialist_proposed',
        context: ctx([]),
        narrative_beat: `hephaestus_routes_to_${specialist}`,
        agent_proposed: `route:${specialist}`,
      });
      let text: string;
      let taken: boolean;
      if (task === 'slop_review') {
        const axis = pick(r, AIDOS_AXES);
        text = aidosFlag(reviewContent(r, 'train'), axis);
        taken = answers(axis, 0, r);
      } else {
        const style = randomStyle(r, 'citation');
        text = render(newSample(r, 'citation', 'train'), style);
        taken = answers('citations', style.citations?.pole ?? 0, r);
      }
      const kindOf: ResponseKind = taken ? 'accepted' : 'rejected';
      emitReading({
        ...base,
        scene_id: sc,
        agent: specialist,
        source: 'specialist_proposed',
        context: ctx(['hephaestus']),
        narrative_beat: `${specialist}_${BEAT[kindOf]}`,
        agent_proposed: text,
        player_response: { kind: kindOf, delta: null, felt: FELT[kindOf] },
        training_label: taken ? null : { preference_pair: null, weight: 0.5 },
      });
    };

    /**
     * A slop review: the player puts a passage to Aidos; she calls it, and the player takes the
     * call when the passage is slop and dismisses it when it is clean (craft: every player does).
     */
    const slopTurn = (shard: SlopShard): void => {
      const r = slopRand;
      const sc = scene();
      const ctx = (preceding: Agent[]): Context => ctxFor('slop_review', preceding, r);
      emitSlop({
        ...base,
        scene_id: sc,
        agent: 'hephaestus',
        source: 'task_description',
        context: ctx([]),
        agent_proposed: taskDescription(r, 'slop_review', 'train'),
      });
      emitSlop({
        ...base,
        scene_id: sc,
        agent: 'hephaestus',
        source: 'specialist_proposed',
        context: ctx([]),
        narrative_beat: 'hephaestus_routes_to_aidos',
        agent_proposed: 'route:aidos',
      });
      const review = slopReview(r, shard);
      const taken = r() < 0.95 ? review.slop : !review.slop;
      const kindOf: ResponseKind = taken ? 'accepted' : 'rejected';
      emitSlop({
        ...base,
        scene_id: sc,
        agent: 'aidos',
        source: 'specialist_proposed',
        context: ctx(['hephaestus']),
        narrative_beat: `aidos_${BEAT[kindOf]}`,
        agent_proposed: review.text,
        player_response: { kind: kindOf, delta: null, felt: FELT[kindOf] },
        // a dismissed call on a clean passage teaches as much as a taken one
        training_label: { preference_pair: null, weight: 1 },
      });
    };

    /** One proposal of a sample kind and the player's answer; returns the proposal's entry id. */
    const proposal = (
      sc: string,
      task: TaskType,
      kind: SampleKind,
      specialist: Agent,
    ): { id: string; style: Style; review: ReviewContent | null } => {
      const ctx = (): Context => ctxFor(task, ['hephaestus']);
      const sample = newSample(rand, kind, 'train');
      const kindHeld: Partial<Record<Axis, 0 | 1>> = {};
      for (const a of axesOf(kind)) if (held[a] !== undefined) kindHeld[a] = held[a];
      const heldAxes = Object.keys(kindHeld) as Axis[];
      if (heldAxes.length > 0 && rand() < 0.25) {
        // The specialist offers two candidates; the player picks the one in their style.
        const good = withPoles(rand, kind, randomStyle(rand, kind), kindHeld);
        const flip = heldAxes.filter(() => rand() < 0.5);
        if (flip.length === 0) flip.push(pick(rand, heldAxes));
        const bad = withPoles(rand, kind, good, Object.fromEntries(flip.map((a) => [a, kindHeld[a] === 0 ? 1 : 0])));
        const pair = balancedPair(rand, sample, good, bad, { preferred: flip, dispreferred: flip });
        emit({
          ...base,
          scene_id: sc,
          agent: specialist,
          source: 'specialist_proposed',
          context: ctx(),
          narrative_beat: `${specialist}_candidate_passed_over`,
          agent_proposed: pair.dispreferred,
          player_response: { kind: 'rejected', delta: null, felt: 'off' },
          training_label: { preference_pair: null, weight: 0.5 },
        });
        const id = emit({
          ...base,
          scene_id: sc,
          agent: specialist,
          source: 'specialist_proposed',
          context: ctx(),
          narrative_beat: `${specialist}_candidate_chosen`,
          agent_proposed: pair.preferred,
          player_response: { kind: 'accepted', delta: null, felt: 'right' },
          affinity_delta: AFFINITY.accepted,
          training_label: {
            preference_pair: [
              { text: pair.dispreferred, score: 0 },
              { text: pair.preferred, score: 1 },
            ],
            weight: 1,
          },
        });
        return { id, style: pair.preferredStyle, review: null };
      }
      const style = randomStyle(rand, kind);
      const wrong = violations(kindHeld, style);
      const r = rand();
      const kindOf: ResponseKind =
        wrong.length === 0
          ? r < 0.9
            ? 'accepted'
            : r < 0.95
              ? 'deferred'
              : 'rejected'
          : r < 0.6
            ? 'modified'
            : r < 0.9
              ? 'rejected'
              : 'deferred';
      let proposed = render(sample, style);
      let revised: string | null = null;
      if (kindOf === 'modified') {
        // The player's rewrite applies their preferences to what they disagreed with.
        const fix = Object.fromEntries(wrong.map((a) => [a, kindHeld[a] as 0 | 1]));
        const pair = balancedPair(rand, sample, withPoles(rand, kind, style, fix), style, {
          preferred: wrong,
          dispreferred: [],
        });
        proposed = pair.dispreferred;
        revised = pair.preferred;
      }
      const pairLabel =
        revised !== null
          ? [
              { text: proposed, score: 0 },
              { text: revised, score: 1 },
            ]
          : null;
      const id = emit({
        ...base,
        scene_id: sc,
        agent: specialist,
        source: 'specialist_proposed',
        context: ctx(),
        narrative_beat: `${specialist}_${BEAT[kindOf]}`,
        agent_proposed: proposed,
        player_response: { kind: kindOf, delta: revised, felt: FELT[kindOf] },
        affinity_delta: AFFINITY[kindOf],
        training_label: pairLabel
          ? { preference_pair: pairLabel, weight: 1 }
          : kindOf === 'rejected'
            ? { preference_pair: null, weight: 0.5 }
            : null,
      });
      if (revised !== null && pairLabel) {
        emit({
          ...base,
          scene_id: sc,
          agent: specialist,
          source: 'player_revision',
          context: ctxFor(task, ['hephaestus', specialist]),
          agent_proposed: revised,
          player_response: { kind: 'modified', delta: revised, felt: FELT.modified },
          training_label: { preference_pair: pairLabel, weight: 2 },
        });
      }
      if (!pythonHost && rand() < 0.12) {
        // The player rated the proposal too (`kourai feedback`): the same text, a Likert rating.
        const rating = wrong.length === 0 ? (kindOf === 'accepted' ? 5 : 4) : wrong.length === 1 ? 2 : 1;
        emit({
          ...base,
          scene_id: sc,
          agent: specialist,
          source: 'specialist_proposed',
          context: ctx(),
          narrative_beat: `${specialist}_${BEAT[kindOf]}`,
          agent_proposed: proposed,
          player_response: { kind: kindOf, delta: null, felt: feltFor(rating) },
          affinity_delta: rating <= 2 ? -0.05 : 0.02,
          training_label: null,
          likert: rating,
        });
      }
      return { id, style, review: kind === 'code' ? reviewContent(rand, 'train') : null };
    };

    if (s === 0) {
      emit({
        ...base,
        scene_id: scene(),
        agent: 'hephaestus',
        source: 'player_profile',
        entry_type: 'council_event',
        narrative_beat: 'sovereignty_moment_opens',
        agent_proposed:
          'The council of forges asks whether we will speak for you. Each of us will say where she stands.',
      });
    }
    for (let t = 0; t < opts.turns; t++) {
      const task = pickTask(rand);
      const specialist = SPECIALIST[task];
      const sc = scene();
      emit({
        ...base,
        scene_id: sc,
        agent: 'hephaestus',
        source: 'task_description',
        context: ctxFor(task, []),
        agent_proposed: taskDescription(rand, task, 'train'),
      });
      if (rand() < 0.06) {
        // A misroute: the player sends the task elsewhere (an intervention the routing head skips).
        const wrongTo = pick(
          rand,
          PIPELINE_TASK_TYPES.map((x) => SPECIALIST[x]).filter((a) => a !== specialist),
        );
        emit({
          ...base,
          scene_id: sc,
          agent: 'hephaestus',
          source: 'specialist_proposed',
          context: ctxFor(task, []),
          narrative_beat: `hephaestus_routes_to_${wrongTo}`,
          agent_proposed: `route:${wrongTo}`,
          player_response: { kind: 'rejected', delta: null, felt: 'off' },
        });
      }
      emit({
        ...base,
        scene_id: sc,
        agent: 'hephaestus',
        source: 'specialist_proposed',
        context: ctxFor(task, []),
        narrative_beat: `hephaestus_routes_to_${specialist}`,
        agent_proposed: `route:${specialist}`,
      });

      let last: { id: string; style: Style; review: ReviewContent | null } = { id: '', style: {}, review: null };
      const kind = KIND_OF_TASK[task];
      if (kind) {
        const rounds = between(rand, 1, 3);
        for (let i = 0; i < rounds; i++) last = proposal(sc, task, kind, specialist);
      } else {
        // Style review: Kallos's edits, then perhaps a Kallos–Aidos disagreement.
        const rc = reviewContent(rand, 'train');
        const edits = between(rand, 1, 3);
        for (let i = 0; i < edits; i++) {
          const axis = pick(rand, KALLOS_AXES);
          const toward: 0 | 1 = axis === 'leftovers' ? (rand() < 0.8 ? 0 : 1) : rand() < 0.5 ? 0 : 1;
          const taken = answers(axis, toward);
          const kindOf: ResponseKind = taken ? 'accepted' : 'rejected';
          last = {
            id:
              emit({
                ...base,
                scene_id: sc,
                agent: 'kallos',
                source: 'specialist_proposed',
                context: ctxFor(task, ['hephaestus']),
                narrative_beat: `kallos_${BEAT[kindOf]}`,
                agent_proposed: kallosEdit(rc, axis, toward),
                player_response: { kind: kindOf, delta: null, felt: FELT[kindOf] },
                affinity_delta: AFFINITY[kindOf],
                training_label: taken ? null : { preference_pair: null, weight: 0.5 },
              }) || last.id,
            style: {},
            review: null,
          };
        }
        if (rand() < 0.6) {
          const axis = pick(rand, DISAGREEMENT_AXES);
          const pos = disagreementPositions(rc, axis);
          const side = held[axis] === 0 ? 'aidos' : held[axis] === 1 ? 'kallos' : rand() < 0.5 ? 'aidos' : 'kallos';
          const [lost, won] = side === 'aidos' ? [pos.kallos, pos.aidos] : [pos.aidos, pos.kallos];
          emit({
            ...base,
            scene_id: sc,
            agent: side,
            source: 'disagreement_resolution',
            context: ctxFor(task, ['kallos', 'aidos']),
            narrative_beat: `player_sides_with_${side}`,
            agent_proposed: won,
            player_response: { kind: 'accepted', delta: null, felt: 'right' },
            affinity_delta: 0.02,
            training_label: {
              preference_pair: [
                { text: lost, score: 0 },
                { text: won, score: 1 },
              ],
              weight: 1,
            },
          });
        }
      }

      if (rand() < 0.35) {
        const target = last.id || sc;
        const flaggable = AIDOS_AXES.filter((a) => last.style[a]?.pole === 1);
        const r = rand();
        if (last.review && flaggable.length > 0 && r < 0.45) {
          // Aidos calls slop on what the proposal really shows; the player takes the call or not.
          const axis = pick(rand, flaggable);
          const taken = answers(axis, 0);
          emit({
            ...base,
            scene_id: sc,
            agent: 'aidos',
            source: 'agent_interrupt',
            narrative_beat: `aidos_interrupts_${specialist}`,
            agent_proposed: aidosFlag(last.review, axis),
            player_response: { kind: taken ? 'accepted' : 'rejected', delta: null, felt: taken ? 'right' : 'off' },
            interrupt: {
              interrupting_agent: 'aidos',
              target_agent: specialist,
              target_turn: target,
              reason_class: 'correction',
              visibility: 'public',
            },
          });
        } else if (r < 0.7 && specialist !== 'aletheia') {
          // Aletheia corrects a claim; a correction that names its source is taken (craft).
          const sample = newSample(rand, 'citation', 'train');
          const style = randomStyle(rand, 'citation');
          const taken = answers('citations', style.citations?.pole ?? 0);
          emit({
            ...base,
            scene_id: sc,
            agent: 'aletheia',
            source: 'agent_interrupt',
            narrative_beat: `aletheia_interrupts_${specialist}`,
            agent_proposed: render(sample, style),
            player_response: { kind: taken ? 'accepted' : 'rejected', delta: null, felt: taken ? 'right' : 'off' },
            interrupt: {
              interrupting_agent: 'aletheia',
              target_agent: specialist,
              target_turn: target,
              reason_class: 'correction',
              visibility: 'public',
            },
          });
        } else {
          const it = pick(
            rand,
            OTHER_INTERRUPTS.filter((x) => x.agent !== specialist),
          );
          emit({
            ...base,
            scene_id: sc,
            agent: it.agent,
            source: 'agent_interrupt',
            narrative_beat: `${it.agent}_interrupts_${specialist}`,
            agent_proposed: it.text,
            affinity_delta: it.reason === 'care' ? 0.02 : 0,
            interrupt: {
              interrupting_agent: it.agent,
              target_agent: specialist,
              target_turn: target,
              reason_class: it.reason,
              visibility: it.visibility,
            },
          });
        }
      }
      if (rand() < 0.15) {
        const delta = rand() < 0.3 ? -0.05 : 0.02;
        emit({
          ...base,
          scene_id: sc,
          agent: specialist,
          source: 'affinity_change',
          narrative_beat: delta > 0 ? `${specialist}_warms` : `${specialist}_cools`,
          affinity_delta: delta,
        });
      }
    }
    const cupidScene = pick(rand, CUPID_SCENES);
    emit({
      ...base,
      scene_id: scene(),
      agent: 'cupid',
      source: 'cupid_scene',
      entry_type: rand() < 0.5 ? 'loyalty_beat' : 'pipeline_turn',
      narrative_beat: cupidScene,
      agent_proposed: 'You kept going when the tests were red. I noticed.',
      affinity_delta: 0.05,
    });
    const puckEvent = pick(rand, PUCK_EVENTS);
    const enjoyed = rand() < (profile.puckLikes.includes(puckEvent) ? 0.85 : 0.2);
    emit({
      ...base,
      scene_id: scene(),
      agent: 'puck',
      source: 'puck_engagement',
      narrative_beat: puckEvent,
      player_response: { kind: enjoyed ? 'accepted' : 'deferred', delta: null, felt: enjoyed ? 'right' : 'unsure' },
      affinity_delta: enjoyed ? 0.02 : 0,
    });
    const loyal = pick(rand, FEDERATING_AGENTS);
    emit({
      ...base,
      scene_id: scene(),
      agent: loyal,
      source: 'affinity_change',
      entry_type: 'loyalty_beat',
      narrative_beat: `${loyal}_loyalty_step_${1 + (s % 3)}`,
      affinity_delta: round6(0.03 + rand() * 0.02),
    });
    emit({
      ...base,
      scene_id: scene(),
      agent: 'hephaestus',
      source: 'raw_transcript',
      context: ctxFor('session', []),
      agent_proposed: `transcript of ${scenePrefix} (${turn} turns)`,
    });
    readClock = clock;
    const reading = 1 + Math.floor(readRand() * 2);
    for (let k = 0; k < reading; k++) readingTurn(pick(readRand, READING_TASK_TYPES));
    if (opts.slop) {
      slopClock = readClock;
      for (let k = 0; k < opts.slop.perSession; k++) slopTurn(opts.slop);
    }
    yield { sessionId, lines, entries: lines.length };
    clock += 18 * 3600_000;
  }
}
