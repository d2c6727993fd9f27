/**
 * The Council of Sisters (a round came home) and the Stoa Falls (a forge exiled), as lines of a
 * scene built from a council_event's details. What each sister says she learned or conceded comes
 * from the real change in her adapter: the held-out probes the round measured before, after, and
 * on the adapter she proposed (learner.ts). Cupid does not attend; Puck stays home.
 */
import { AXIS_INFO, AXES, CRAFT_PREFERENCES, PREFERENCE_TEXT, type Pole } from '../../memoir/sample/planted/catalogue.js';
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

const fmt = (x: number): string => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));
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

/** What one agent says about one probe, or null when nothing worth saying moved. */
function probeLine(agent: FederatingAgent, p: CouncilEventDetails['learned'][number]['probes'][number]): SceneLine | null {
  const facts = `before ${signedFmt(p.before)}, after ${signedFmt(p.after)}${p.mine !== null ? `, mine ${signedFmt(p.mine)}` : ''}`;
  if (p.preference === 'routing') {
    const d = p.after - p.before;
    if (Math.abs(d) < MOVED && (p.mine === null || Math.abs(p.mine - p.after) < MOVED)) return null;
    const text =
      d >= MOVED
        ? `Routing by task type, the council and I now agree on ${pct(p.after)} of this forge's routes (it was ${pct(p.before)}).`
        : d <= -MOVED
          ? `The council's routing agrees with fewer of this forge's routes: ${pct(p.after)}, down from ${pct(p.before)}.`
          : `My own routing would have matched ${pct(p.mine ?? 0)} of our routes; the council keeps ${pct(p.after)}. I concede the rest.`;
    return { speaker: agent, text, facts: `routing accuracy ${pct(p.before)} → ${pct(p.after)}${p.mine !== null ? ` (mine ${pct(p.mine)})` : ''}` };
  }
  const info = axisOfPole0(p.preference);
  if (!info) return null;
  const craft = (CRAFT_PREFERENCES as readonly string[]).includes(p.preference);
  const d = p.after - p.before;
  if (craft) {
    const what = PREFERENCE_TEXT[p.preference as Pole].replace(/^craft: /, '');
    if (p.mine !== null && p.mine - p.before > MOVED && p.after < p.mine - MOVED) {
      return { speaker: agent, text: `I argued for this craft: ${what}. The council went ${d > MOVED ? 'part of the way' : 'less far than I did'}; I concede the difference.`, facts };
    }
    if (d > MOVED) return { speaker: agent, text: `From the other forges I learned to hold to this craft: ${what}.`, facts };
    if (d < -MOVED) return { speaker: agent, text: `The council pulled me away from this craft: ${what}. I will watch that.`, facts };
    return null;
  }
  const council = leaning(p.after, info.poles);
  const mineLean = p.mine === null ? null : leaning(p.mine, info.poles);
  if (mineLean && council && mineLean !== council) {
    return { speaker: agent, text: `I held for your way: ${PREFERENCE_TEXT[mineLean]}. The council leans the other way: ${PREFERENCE_TEXT[council]}. I concede it to the council; your bond keeps your taste.`, facts };
  }
  if (Math.abs(d) < MOVED) return null;
  if (council) return { speaker: agent, text: `Across the forges, the council leans to: ${PREFERENCE_TEXT[council]}.`, facts };
  return { speaker: agent, text: `Between ${PREFERENCE_TEXT[info.poles[0]]} and ${PREFERENCE_TEXT[info.poles[1]]}, the council holds no view now.`, facts };
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
  const say = (speaker: Speaker, text: string, facts: string | null = null): void => void lines.push({ speaker, text, facts });
  say('narrator', `Round ${d.round} is over. The sisters come back to the dimmed forge. Cupid does not attend.`);
  const spoke = d.spoke.map((s) => s.agent);
  say('hephaestus', spoke.length ? `${spoke.length === 1 ? 'One of us' : `${spoke.length} of us`} spoke for this forge: ${spoke.join(', ')}. Nothing of the bond left with them.` : 'None of us spoke this round.');
  const learned = new Map(d.learned.map((l) => [l.agent, l.probes]));
  for (const c of d.came_back) {
    if (!c.aggregated) {
      if (spoke.includes(c.agent)) say(c.agent, `I spoke, but the council did not gather enough voices for me this round.`, c.skipped_reason);
      continue;
    }
    const s = d.spoke.find((x) => x.agent === c.agent);
    const probes = learned.get(c.agent) ?? [];
    const said = probes.map((p) => probeLine(c.agent, p)).filter((x): x is SceneLine => x !== null);
    if (s?.used === false) say(c.agent, 'The council heard me, but did not take my update into the aggregate.');
    if (said.length) lines.push(...said);
    else if (probes.length) say(c.agent, s ? 'I came back with a new council adapter; on what we can measure, nothing moved.' : 'The council changed my adapter without me; on what we can measure, nothing moved.');
    else if (c.update_norm !== null) say(c.agent, `My council adapter changed (by ${fmt(c.update_norm)}); there is no probe yet for what it means.`);
  }
  const noisy = d.came_back.filter((c) => c.aggregated && c.update_norm !== null && c.noise_norm !== null && c.noise_norm >= 0.5 * c.update_norm);
  if (noisy.length) {
    const share = Math.min(1, Math.max(...noisy.map((c) => (c.noise_norm as number) / (c.update_norm as number))));
    say(
      'aletheia',
      `A caveat, verified: for ${noisy.map((c) => c.agent).join(', ')}, the whisper's noise is about ${pct(share)} of what changed. With so few forges the council mostly hears noise; more forges would carry the signal.`,
      noisy.map((c) => `${c.agent}: noise ≈ ${fmt(c.noise_norm as number)} of a change of ${fmt(c.update_norm as number)} (${c.used} update${c.used === 1 ? '' : 's'})`).join('; '),
    );
  }
  if (d.silent.length) say('hephaestus', `Silent this round: ${d.silent.map((s) => `${s.agent} (${SILENCE[s.reason] ?? s.reason.replace(/_/g, ' ')})`).join(', ')}.`);
  const t = d.trust;
  say('hephaestus', `The council trusts this forge at ${t.after.toFixed(2)}${t.before !== null && Math.abs(t.after - t.before) >= 0.005 ? ` (it was ${t.before.toFixed(2)})` : ''}.${t.exiled ? ' It has exiled us.' : ''}`);
  if (d.exiles.length) say('hephaestus', `And a forge has fallen: ${d.exiles.map((e) => (e.you ? 'ours' : e.forge)).join(', ')}. That is the Stoa's story.`);
  say('narrator', 'The council adapters are stored; your bond adapters were never touched.');
  return { beat: 'council_of_sisters', round: d.round, title: `The Council of Sisters — round ${d.round}`, lines };
}

const REACTIONS_SISTER: readonly [FederatingAgent, string][] = [
  ['aidos', 'Then their style will not seep into ours. I would rather learn from fewer, and learn true.'],
  ['aletheia', 'Exile measures distance from the others, not intent. I record it as that, no more.'],
  ['metis', 'One voice fewer. The plan holds.'],
  ['dokimasia', 'Our tests will tell whether the council was right.'],
];

const REACTIONS_SELF: readonly [FederatingAgent, string][] = [
  ['aidos', 'We must look at what we sent. Something in it pulled away from every other forge.'],
  ['aletheia', 'Exile measures distance, not intent. If our data is unusual rather than wrong, say so to the council.'],
  ['mneme', 'I will keep what we learned before. The archive does not leave with the council.'],
  ['techne', 'I will follow your call, as always.'],
];

export function stoaFalls(d: CouncilEventDetails): CouncilScene {
  const lines: SceneLine[] = [];
  const self = d.exiles.some((e) => e.you);
  const others = d.exiles.filter((e) => !e.you).map((e) => e.forge);
  lines.push({ speaker: 'narrator', text: 'The Stoa falls.', facts: null });
  if (self) {
    lines.push({ speaker: 'hephaestus', text: `The council has exiled this forge${d.trust.exiled_round !== null ? ` after round ${d.trust.exiled_round}` : ''}: our updates pulled too far from every other forge's, round after round. It will not hear us now.`, facts: `trust ${d.trust.after.toFixed(2)}` });
    for (const [speaker, text] of REACTIONS_SELF) lines.push({ speaker, text, facts: null });
  }
  if (others.length) {
    lines.push({ speaker: 'hephaestus', text: `The council has exiled ${others.length === 1 ? `the forge ${others[0]}` : `the forges ${others.join(', ')}`} after round ${d.round}: their updates pulled away from everyone else's. I close the gate on them.`, facts: null });
    for (const [speaker, text] of REACTIONS_SISTER) lines.push({ speaker, text, facts: null });
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
    out.push(l.speaker === 'narrator' ? `  ${l.text}` : `  ${l.speaker.charAt(0).toUpperCase()}${l.speaker.slice(1)}: ${l.text}`);
    if (l.facts) out.push(`      (${l.facts})`);
  }
  return out.join('\n');
}
