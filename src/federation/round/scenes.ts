/**
 * The Council of Sisters (a round came home) and the Stoa Falls (a forge exiled), as lines of a
 * scene built from a council_event's details. What each sister says she learned or conceded comes
 * from the real change in her adapter: the held-out probes the round measured before, after, and
 * on the adapter she proposed (learner.ts). Cupid does not attend; Puck stays home.
 */
import {
  AXIS_INFO,
  AXES,
  CRAFT_PREFERENCES,
  PREFERENCE_TEXT,
  type Pole,
} from '../../memoir/sample/planted/catalogue.js';
import type { CouncilEventDetails } from '../../memoir/derive/council-event.js';
import type { FederatingAgent } from '../../memoir/format/agents.js';

export type Speaker = FederatingAgent | 'narrator';

export interface SceneLine {
  speaker: Speaker;
  text: string;
  /** The figures the line rests on (shown dimmed). */
  facts: string | null;
}

export interface CouncilScene {
  beat: CouncilEventDetails['beat'];
  round: number;
  title: string;
  lines: SceneLine[];
}

/** A change of a probe smaller than this is "nothing moved" (score margins and accuracies alike). */
export const MOVED = 0.05;

const fmt = (x: number): string =>
  Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2);
const signedFmt = (x: number): string => `${x >= 0 ? '+' : ''}${fmt(x)}`;
const pct = (x: number): string => `${Math.round(x * 100)}%`;

function axisOfPole0(pole: string): (typeof AXIS_INFO)[keyof typeof AXIS_INFO] | null {
  for (const a of AXES) if (AXIS_INFO[a].poles[0] === pole) return AXIS_INFO[a];
  return null;
}

function leaning(v: number, poles: readonly [Pole, Pole]): Pole | null {
  if (v > MOVED) return poles[0];
  if (v < -MOVED) return poles[1];
  return null;
}

type ProbeRecord = CouncilEventDetails['learned'][number]['probes'][number];

/** How far an accuracy over n pairs may sit from another by chance (95%): one share against 0.5, or two shares apart. */
function band(n: number | null, two: boolean): number {
  if (!n || n <= 0) return MOVED;
  return 1.96 * Math.sqrt((two ? 0.5 : 0.25) / n);
}

/** The pole an accuracy leans to beyond chance (0.5 is none). */
function leansTo(v: number | null, n: number | null, poles: readonly [Pole, Pole]): Pole | null {
  if (v === null) return null;
  const b = band(n, false);
  if (v - 0.5 > b) return poles[0];
  if (v - 0.5 < -b) return poles[1];
  return null;
}

/**
 * A preference the player shows: what they apply ranks at least 80% of the fresh pairs one way,
 * and beyond chance. A model leans a little on axes its data never spoke to; that is not a taste.
 */
export const SHOWN = 0.3;

function shownBy(v: number | null, n: number | null, poles: readonly [Pole, Pole]): Pole | null {
  return v !== null && Math.abs(v - 0.5) >= SHOWN ? leansTo(v, n, poles) : null;
}

/** What one agent says about one probe, or null when nothing worth saying moved. */
function probeLine(agent: FederatingAgent, p: ProbeRecord, forges: number | null): SceneLine | null {
  if (p.measure === 'margin') return marginLine(agent, p);
  const alone = forges === 1;
  const yoursFacts = p.yours !== null ? `, yours ${pct(p.yours)}` : '';
  const facts = `${p.n ?? '?'} fresh pairs: before ${pct(p.before)}, after ${pct(p.after)}${p.mine !== null ? `, mine ${pct(p.mine)}` : ''}${yoursFacts}`;
  const moved = band(p.n, true);
  const d = p.after - p.before;
  if (p.preference === 'routing') {
    if (Math.abs(d) < moved) return null;
    const text =
      d > 0
        ? `Routing by task type, the council and I now agree on ${pct(p.after)} of this forge's routes (it was ${pct(p.before)}).`
        : `The council's routing agrees with fewer of this forge's routes: ${pct(p.after)}, down from ${pct(p.before)}.`;
    return {
      speaker: agent,
      text,
      facts: `routing accuracy ${pct(p.before)} → ${pct(p.after)}${p.mine !== null ? ` (mine ${pct(p.mine)})` : ''}`,
    };
  }
  const info = axisOfPole0(p.preference);
  if (!info) return null;
  if ((CRAFT_PREFERENCES as readonly string[]).includes(p.preference)) {
    const what = PREFERENCE_TEXT[p.preference as Pole].replace(/^craft: /, '');
    const holds = leansTo(p.after, p.n, info.poles) === info.poles[0];
    if (d > moved && holds) {
      // Alone, the council adapter is this forge's update plus noise: "our lesson" only if the update held it.
      const ours = leansTo(p.mine, p.n, info.poles) === info.poles[0];
      return {
        speaker: agent,
        text: !alone
          ? `From the other forges I learned to hold to this craft: ${what}.`
          : ours
            ? `The council adapter came back holding to this craft: ${what}. No other forge was there: it is our own lesson, returned.`
            : `The council adapter came back holding to this craft: ${what}, though my own update did not: with no other forge, that is the whisper's noise.`,
        facts,
      };
    }
    if (d < -moved && !holds)
      return {
        speaker: agent,
        text: `The council adapter came back further from this craft: ${what}. I will watch that.`,
        facts,
      };
    return null;
  }
  const council = leansTo(p.after, p.n, info.poles);
  const yours = shownBy(p.yours, p.n, info.poles);
  const mine = shownBy(p.mine, p.n, info.poles);
  // "Your way" only where what this player applies shows a preference beyond chance.
  if (yours && council && yours !== council) {
    return {
      speaker: agent,
      text: `${mine === yours ? 'I held for your way' : 'Your way'}: ${PREFERENCE_TEXT[yours]}. The council leans the other way: ${PREFERENCE_TEXT[council]}. Your bond keeps your taste.`,
      facts,
    };
  }
  if (Math.abs(d) < moved) return null;
  if (council)
    return {
      speaker: agent,
      text: !alone
        ? `Across the forges, the council leans to: ${PREFERENCE_TEXT[council]}.`
        : leansTo(p.mine, p.n, info.poles) === council
          ? `The council adapter came back leaning to: ${PREFERENCE_TEXT[council]} (from this forge's own update and the noise).`
          : `The council adapter came back leaning to: ${PREFERENCE_TEXT[council]}, though my own update did not lean that way: with no other forge, that is the whisper's noise.`,
      facts,
    };
  return {
    speaker: agent,
    text: `The council now holds no view between “${PREFERENCE_TEXT[info.poles[0]]}” and “${PREFERENCE_TEXT[info.poles[1]]}”.`,
    facts,
  };
}

/** Rounds recorded before probes were accuracies: mean score margins, with no measure of the player. */
function marginLine(agent: FederatingAgent, p: ProbeRecord): SceneLine | null {
  const facts = `before ${signedFmt(p.before)}, after ${signedFmt(p.after)}${p.mine !== null ? `, mine ${signedFmt(p.mine)}` : ''}`;
  const d = p.after - p.before;
  if (p.preference === 'routing') {
    if (Math.abs(d) < MOVED) return null;
    const text =
      d > 0
        ? `Routing by task type, the council and I now agree on ${pct(p.after)} of this forge's routes (it was ${pct(p.before)}).`
        : `The council's routing agrees with fewer of this forge's routes: ${pct(p.after)}, down from ${pct(p.before)}.`;
    return {
      speaker: agent,
      text,
      facts: `routing accuracy ${pct(p.before)} → ${pct(p.after)}${p.mine !== null ? ` (mine ${pct(p.mine)})` : ''}`,
    };
  }
  const info = axisOfPole0(p.preference);
  if (!info) return null;
  if ((CRAFT_PREFERENCES as readonly string[]).includes(p.preference)) {
    const what = PREFERENCE_TEXT[p.preference as Pole].replace(/^craft: /, '');
    if (d > MOVED)
      return { speaker: agent, text: `The council adapter came back holding to this craft: ${what}.`, facts };
    if (d < -MOVED)
      return {
        speaker: agent,
        text: `The council adapter came back further from this craft: ${what}. I will watch that.`,
        facts,
      };
    return null;
  }
  const council = leaning(p.after, info.poles);
  const mine = p.mine === null ? null : leaning(p.mine, info.poles);
  if (mine && council && mine !== council) {
    return {
      speaker: agent,
      text: `My proposal leaned to: ${PREFERENCE_TEXT[mine]}. The council leans the other way: ${PREFERENCE_TEXT[council]}. I concede it to the council; your bond keeps your taste.`,
      facts,
    };
  }
  if (Math.abs(d) < MOVED) return null;
  if (council)
    return { speaker: agent, text: `The council adapter came back leaning to: ${PREFERENCE_TEXT[council]}.`, facts };
  return {
    speaker: agent,
    text: `The council now holds no view between “${PREFERENCE_TEXT[info.poles[0]]}” and “${PREFERENCE_TEXT[info.poles[1]]}”.`,
    facts,
  };
}

type Validation = NonNullable<CouncilEventDetails['came_back'][number]['validation']>;

const LEAN_TEXT = (lean: number): string =>
  lean === 0
    ? 'bond only'
    : lean === 1
      ? 'council only'
      : lean === 0.5
        ? 'bond and council'
        : `bond and council at lean ${lean}`;

/** What the council adapter does on the player's held-out scenes, and how far it is applied. */
function validationLine(agent: FederatingAgent, v: Validation, hasBond: boolean): SceneLine {
  const on = `On ${v.examples} held-out example${v.examples === 1 ? '' : 's'} of yours (${v.scenes} scene${v.scenes === 1 ? '' : 's'})`;
  const facts = `held-out accuracy: before the round ${v.before === null ? '—' : pct(v.before)} · bond only ${pct(v.bond_only)} · both ${pct(v.both)} · council only ${pct(v.council_only)} → applied: ${LEAN_TEXT(v.lean)} (${pct(v.after)})`;
  if (v.passed) {
    return {
      speaker: agent,
      text: `${on}, the council adapter helps: ${v.before === null ? '' : `${pct(v.before)} before the round, `}${pct(v.after)} now. I apply it: ${LEAN_TEXT(v.lean)}.`,
      facts,
    };
  }
  const rest = hasBond ? 'your bond answers as before' : 'the base answers as before';
  return {
    speaker: agent,
    text: `${on}, the council adapter does not help (${pct(v.council_only)} alone, against ${pct(v.bond_only)} without it). I leave it unapplied: ${rest}.`,
    facts,
  };
}

const SILENCE: Readonly<Record<string, string>> = {
  no_consent: 'you did not let her speak',
  no_shareable_entries: 'nothing shareable to learn from',
  too_little_data: 'too little shareable data',
  agent_budget: 'her whisper capacity is spent',
  forge_budget: "the forge's whisper capacity is spent",
  round_closed: 'the round closed before she spoke',
  refused: 'the council refused her update',
  not_accepted: 'the council takes no counsel from her',
};

export function councilOfSisters(d: CouncilEventDetails): CouncilScene {
  const lines: SceneLine[] = [];
  const say = (speaker: Speaker, text: string, facts: string | null = null): void =>
    void lines.push({ speaker, text, facts });
  say('narrator', `Round ${d.round} is over. The sisters come back to the dimmed forge. Cupid does not attend.`);
  const spoke = d.spoke.map((s) => s.agent);
  say(
    'hephaestus',
    spoke.length
      ? `${spoke.length === 1 ? 'One of us' : `${spoke.length} of us`} spoke for this forge: ${spoke.join(', ')}. Nothing of the bond left with them.`
      : 'None of us spoke this round.',
  );
  const used =
    d.came_back
      .filter((c) => c.aggregated)
      .map((c) => `${c.agent}: ${c.used} update${c.used === 1 ? '' : 's'}`)
      .join(', ') || null;
  if (d.forges === 1)
    say(
      'hephaestus',
      'Only this forge took part in this round. What came back is our own update and the whisper’s noise: there were no other forges to learn from.',
      used,
    );
  else if (d.forges !== null) say('hephaestus', `${d.forges} forges took part in this round.`, used);
  const learned = new Map(d.learned.map((l) => [l.agent, l.probes]));
  for (const c of d.came_back) {
    if (!c.aggregated) {
      if (spoke.includes(c.agent))
        say(c.agent, `I spoke, but the council did not gather enough voices for me this round.`, c.skipped_reason);
      continue;
    }
    const s = d.spoke.find((x) => x.agent === c.agent);
    const probes = learned.get(c.agent) ?? [];
    if (s?.used === false) say(c.agent, 'The council heard me, but did not take my update into the aggregate.');
    if (c.validation) lines.push(validationLine(c.agent, c.validation, c.validation.bond_version !== null));
    const said = probes.map((p) => probeLine(c.agent, p, d.forges)).filter((x): x is SceneLine => x !== null);
    if (said.length) lines.push(...said);
    else if (!c.validation && probes.length)
      say(
        c.agent,
        s
          ? 'I came back with a new council adapter; on what we can measure, nothing moved.'
          : 'The council changed my adapter without me; on what we can measure, nothing moved.',
      );
    else if (!c.validation && c.update_norm !== null)
      say(c.agent, `My council adapter changed (by ${fmt(c.update_norm)}); there is no probe yet for what it means.`);
  }
  const noisy = d.came_back.filter(
    (c) => c.aggregated && c.update_norm !== null && c.noise_norm !== null && c.noise_norm >= 0.5 * c.update_norm,
  );
  if (noisy.length) {
    const share = Math.min(1, Math.max(...noisy.map((c) => (c.noise_norm as number) / (c.update_norm as number))));
    say(
      'aletheia',
      `A caveat, verified: for ${noisy.map((c) => c.agent).join(', ')}, the whisper's noise is about ${pct(share)} of what changed. ${d.forges === 1 ? 'With one forge' : 'With so few forges'} the council mostly hears noise; more forges would carry the signal.`,
      noisy
        .map(
          (c) =>
            `${c.agent}: noise ≈ ${fmt(c.noise_norm as number)} of a change of ${fmt(c.update_norm as number)} (${c.used} update${c.used === 1 ? '' : 's'})`,
        )
        .join('; '),
    );
  }
  if (d.silent.length)
    say(
      'hephaestus',
      `Silent this round: ${d.silent.map((s) => `${s.agent} (${SILENCE[s.reason] ?? s.reason.replace(/_/g, ' ')})`).join(', ')}.`,
    );
  const t = d.trust;
  say(
    'hephaestus',
    `The council trusts this forge at ${t.after.toFixed(2)}${t.before !== null && Math.abs(t.after - t.before) >= 0.005 ? ` (it was ${t.before.toFixed(2)})` : ''}.${t.exiled ? ' It has exiled us.' : ''}`,
  );
  if (d.exiles.length)
    say(
      'hephaestus',
      `And a forge has fallen: ${d.exiles.map((e) => (e.you ? 'ours' : e.forge)).join(', ')}. That is the Stoa's story.`,
    );
  const measured = d.came_back.some((c) => c.validation !== null);
  say(
    'narrator',
    `The council adapters are stored; your bond adapters were never touched.${measured ? ' Each council adapter is applied only as far as it helped on your held-out scenes.' : ''}`,
  );
  return { beat: 'council_of_sisters', round: d.round, title: `The Council of Sisters — round ${d.round}`, lines };
}

const REACTIONS_SISTER: readonly [FederatingAgent, string][] = [
  ['aidos', 'Then their style will not seep into ours. I would rather learn from fewer, and learn true.'],
  ['aletheia', 'Exile measures how an update looks beside the others, not intent. I record it as that, no more.'],
  ['metis', 'One voice fewer. The plan holds.'],
  ['dokimasia', 'Our tests will tell whether the council was right.'],
];

const REACTIONS_SELF: readonly [FederatingAgent, string][] = [
  ['aidos', 'We must look at what we sent. Something in it was no forge’s own work.'],
  [
    'aletheia',
    'Exile measures how an update looks, not intent. If our data is unusual rather than wrong, say so to the council.',
  ],
  ['mneme', 'I will keep what we learned before. The archive does not leave with the council.'],
  ['techne', 'I will follow your call, as always.'],
];

export function stoaFalls(d: CouncilEventDetails): CouncilScene {
  const lines: SceneLine[] = [];
  const self = d.exiles.some((e) => e.you);
  const others = d.exiles.filter((e) => !e.you).map((e) => e.forge);
  lines.push({ speaker: 'narrator', text: 'The Stoa falls.', facts: null });
  if (self) {
    lines.push({
      speaker: 'hephaestus',
      text: `The council has exiled this forge${d.trust.exiled_round !== null ? ` after round ${d.trust.exiled_round}` : ''}: round after round our updates were too far from every other forge's, a copy of another forge's, or noise with no pattern in it. It will not hear us now.`,
      facts: `trust ${d.trust.after.toFixed(2)}`,
    });
    for (const [speaker, text] of REACTIONS_SELF) lines.push({ speaker, text, facts: null });
  }
  if (others.length) {
    lines.push({
      speaker: 'hephaestus',
      text: `The council has exiled ${others.length === 1 ? `the forge ${others[0]}` : `the forges ${others.join(', ')}`} after round ${d.round}: round after round their updates were too far from everyone else's, copies of another forge's, or noise with no pattern in it. I close the gate on them.`,
      facts: null,
    });
    if (d.forges !== null)
      lines.push({
        speaker: 'hephaestus',
        text: `${d.forges} forge${d.forges === 1 ? '' : 's'} took part in round ${d.round}; from the next round, ${Math.max(0, d.forges - others.length)} of them remain${self ? ', not counting us' : ''}.`,
        facts: null,
      });
    for (const [speaker, text] of REACTIONS_SISTER) lines.push({ speaker, text, facts: null });
  }
  const measured = d.came_back.filter((c) => c.validation !== null);
  if (measured.length) {
    const v = measured.map((c) => c.validation as Validation);
    lines.push({
      speaker: 'aletheia',
      text: `On your held-out scenes, this round's council adapters ${
        v.some((x) => x.passed)
          ? `help ${measured
              .filter((c) => c.validation?.passed)
              .map((c) => c.agent)
              .join(', ')} and are applied there`
          : 'helped none of us, and none is applied'
      }.`,
      facts: measured
        .map(
          (c) =>
            `${c.agent}: ${c.validation?.before === null ? '—' : pct(c.validation?.before ?? 0)} → ${pct(c.validation?.after ?? 0)}`,
        )
        .join('; '),
    });
  } else if (self) {
    lines.push({
      speaker: 'aletheia',
      text: 'Nothing more comes back from the council. What this forge applies stays as it was.',
      facts: null,
    });
  }
  lines.push({ speaker: 'narrator', text: 'Cupid does not attend. Your bond is untouched.', facts: null });
  return { beat: 'stoa_falls', round: d.round, title: `The Stoa Falls — round ${d.round}`, lines };
}

export function sceneOf(d: CouncilEventDetails): CouncilScene {
  return d.beat === 'stoa_falls' ? stoaFalls(d) : councilOfSisters(d);
}

/** A scene as plain text (non-interactive runs, `--no-input`, pipes). */
export function sceneText(s: CouncilScene): string {
  const out = [s.title, ''];
  for (const l of s.lines) {
    out.push(
      l.speaker === 'narrator'
        ? `  ${l.text}`
        : `  ${l.speaker.charAt(0).toUpperCase()}${l.speaker.slice(1)}: ${l.text}`,
    );
    if (l.facts) out.push(`      (${l.facts})`);
  }
  return out.join('\n');
}
