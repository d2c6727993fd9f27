import type { Agent } from '../../memoir/format/agents.js';
import { LEXICON, LEXICON_ORDER } from './lexicon.js';
import { SPECIALIST_ROLES, type SpecialistRole } from './roles.js';

/**
 * The routing prior: the specialists' written roles (roles.ts) turned into logits for a task.
 *
 *   score[s] = Σ weight of each of s's cues the task contains (once each; a word inside a longer
 *              cue of the same specialist counts only for the longer one)  + TASK_TYPE_WEIGHT if
 *              the host's task type names s's work
 *   logit[s] = β · score[s] + bias[s]
 *
 * Words are matched on light stems (plural, -ing, -ed), and a word of six letters or more that
 * is one letter missing or extra from a cue word (a typo: "implment", "funtion"), or of seven
 * letters or more with one letter changed, is read as that word. β is the inverse temperature of
 * least log-loss (calibration.ts) on labelled tasks the cues had not been tuned on (test/fixtures/
 * route/README.md): a temperature fitted on the tasks the cues were tuned on comes out ~30% more
 * confident than unseen text bears out. With no cue at all the task goes, weakly, to Techne, as
 * the most common kind of work. Building the index takes a few milliseconds of CPU, so `kourai
 * route` builds it per call.
 */
export const PRIOR_BETA = 1.8;
/** How far the lexicon (lexicon.ts) moves the cues' logits. */
export const LEXICON_WEIGHT = 0.75;
const TASK_TYPE_WEIGHT = 4;
/** A specialist is asked for outright when her own (not `about`) cues reach this. */
const ASKED = 4;
const ABOUT_DISCOUNT = 0.4;
const BIAS: Readonly<Partial<Record<Agent, number>>> = { techne: 0.5 };

export interface CueHit {
  agent: Agent;
  cue: string;
  weight: number;
}

export interface PriorResult {
  /** One logit per specialist, in the order the prior was built with. */
  logits: Float64Array;
  /** The cues that fired, strongest first. */
  hits: CueHit[];
}

/** Lower-case word stems of a text: letters and digits, with `-`, `'` and `_` joining parts of one word. */
export function stems(text: string): string[] {
  const words = text.toLowerCase().match(/[a-z0-9]+(?:['’_-][a-z0-9]+)*/g) ?? [];
  const out: string[] = [];
  for (const w of words) {
    out.push(stem(w.replace(/’/g, "'")));
    // "property-based" and "snake_case" also count as their parts
    if (/[-_]/.test(w)) for (const part of w.split(/[-_]/)) if (part) out.push(stem(part));
  }
  return out;
}

/** A light stemmer: enough that a cue and its inflections meet, not a linguistic one. */
export function stem(w: string): string {
  let s = w.endsWith("'s") ? w.slice(0, -2) : w;
  if (s.length > 4 && s.endsWith('ies')) s = `${s.slice(0, -3)}y`;
  else if (s.length > 4 && /(ss|x|ch|sh)es$/.test(s)) s = s.slice(0, -2);
  else if (s.length > 3 && s.endsWith('s') && !/(ss|us|is)$/.test(s)) s = s.slice(0, -1);
  if (s.length > 5 && s.endsWith('ing')) s = undouble(s.slice(0, -3));
  else if (s.length > 4 && s.endsWith('ed')) s = undouble(s.slice(0, -2));
  if (s.length > 4 && s.endsWith('e')) s = s.slice(0, -1);
  return s;
}

function undouble(s: string): string {
  return s.length > 3 && s[s.length - 1] === s[s.length - 2] && !/[lsz]/.test(s[s.length - 1] as string)
    ? s.slice(0, -1)
    : s;
}

interface Cue {
  agent: number;
  text: string;
  words: string[];
  weight: number;
  /** It names material other specialists work on too (role.about). */
  about: boolean;
}

export class RoutePrior {
  readonly specialists: readonly Agent[];
  private readonly byFirst = new Map<string, Cue[]>();
  private readonly vocab = new Set<string>();
  /** One-letter-deleted forms of cue words (five letters or more) -> the word. */
  private readonly near = new Map<string, string>();
  private readonly taskTypes = new Map<string, number>();
  private readonly bias: Float64Array;
  /** The lexicon's columns -> this prior's specialists (-1: not one of them). */
  private readonly lexiconAt: Int32Array;

  constructor(
    specialists: readonly Agent[],
    roles: Readonly<Partial<Record<Agent, SpecialistRole>>> = SPECIALIST_ROLES,
  ) {
    this.specialists = specialists;
    this.bias = Float64Array.from(specialists, (a) => BIAS[a] ?? 0);
    this.lexiconAt = Int32Array.from(LEXICON_ORDER, (a) => specialists.indexOf(a));
    specialists.forEach((agent, i) => {
      const role = roles[agent];
      if (!role) return;
      for (const t of role.taskTypes) this.taskTypes.set(normalType(t), i);
      // Cues that stem alike ("format", "formatting") are one cue, with the larger weight.
      const own = new Map<string, Cue>();
      const about = new Set((role.about ?? []).map((t) => stems(t).join(' ')));
      for (const [text, weight] of role.cues) {
        const words = stems(text);
        if (words.length === 0) continue;
        const key = words.join(' ');
        const had = own.get(key);
        if (had) had.weight = Math.max(had.weight, weight);
        else own.set(key, { agent: i, text, words, weight, about: about.has(key) });
      }
      for (const cue of own.values()) {
        const list = this.byFirst.get(cue.words[0] as string) ?? [];
        list.push(cue);
        this.byFirst.set(cue.words[0] as string, list);
        for (const w of cue.words) this.vocab.add(w);
      }
    });
    for (const w of this.vocab) {
      if (w.length < 5) continue;
      for (let k = 0; k < w.length; k++) {
        const d = w.slice(0, k) + w.slice(k + 1);
        if (!this.vocab.has(d) && !this.near.has(d)) this.near.set(d, w);
      }
    }
  }

  /**
   * A typo of a cue word is read as the word (one letter missing, extra or changed), in words of
   * six letters or more: shorter ones are too often another real word ("print" is not "sprint").
   */
  private correct(w: string): string {
    if (w.length < 6 || this.vocab.has(w)) return w;
    const missing = this.near.get(w);
    if (missing !== undefined) return missing;
    for (let k = 0; k < w.length; k++) {
      const d = w.slice(0, k) + w.slice(k + 1);
      if (this.vocab.has(d)) return d;
      // A changed letter only in longer words: "entry" is not "retry", "server" is not "semver".
      const changed = w.length >= 7 ? this.near.get(d) : undefined;
      if (changed !== undefined) return changed;
    }
    return w;
  }

  score(description: string | null, taskType: string | null = null): PriorResult {
    const n = this.specialists.length;
    const score = new Float64Array(n);
    const hits: CueHit[] = [];
    const words = stems(description ?? '').map((w) => this.correct(w));
    // Every place a cue matches; then the longest first, and a word already inside one of the same
    // specialist's matches is not counted again ("commit message" does not also score "commit").
    const found: { cue: Cue; at: number }[] = [];
    for (let i = 0; i < words.length; i++) {
      for (const cue of this.byFirst.get(words[i] as string) ?? []) {
        if (i + cue.words.length > words.length) continue;
        let ok = true;
        for (let k = 1; k < cue.words.length && ok; k++) ok = words[i + k] === cue.words[k];
        if (ok) found.push({ cue, at: i });
      }
    }
    found.sort((a, b) => b.cue.words.length - a.cue.words.length || b.cue.weight - a.cue.weight || a.at - b.at);
    const fired: Cue[] = [];
    const covered = this.specialists.map(() => new Set<number>());
    const asked = new Float64Array(n);
    for (const { cue, at } of found) {
      const own = covered[cue.agent] as Set<number>;
      if (fired.includes(cue)) continue;
      let free = true;
      for (let k = 0; k < cue.words.length && free; k++) free = !own.has(at + k);
      if (!free) continue;
      fired.push(cue);
      for (let k = 0; k < cue.words.length; k++) own.add(at + k);
      if (!cue.about) asked[cue.agent] = (asked[cue.agent] as number) + cue.weight;
    }
    // When one specialist's craft is asked for outright, words that only name the material (the
    // bug a test is for, the changelog a slop check reads) count less for the others.
    for (const cue of fired) {
      const w =
        cue.about && asked.some((v, s) => s !== cue.agent && v >= ASKED) ? cue.weight * ABOUT_DISCOUNT : cue.weight;
      score[cue.agent] = (score[cue.agent] as number) + w;
      hits.push({ agent: this.specialists[cue.agent] as Agent, cue: cue.text, weight: w });
    }
    if (taskType !== null) {
      const at = this.taskTypes.get(normalType(taskType));
      if (at !== undefined) {
        score[at] = (score[at] as number) + TASK_TYPE_WEIGHT;
        hits.push({
          agent: this.specialists[at] as Agent,
          cue: `task type: ${taskType.trim()}`,
          weight: TASK_TYPE_WEIGHT,
        });
      }
    }
    const logits = new Float64Array(n);
    for (let s = 0; s < n; s++) logits[s] = PRIOR_BETA * (score[s] as number) + (this.bias[s] as number);
    const raw = stems(description ?? '');
    const grams = new Set([...raw, ...raw.slice(1).map((w, i) => `${raw[i] as string} ${w}`)]);
    for (const g of grams) {
      const w = LEXICON[g];
      if (w === undefined) continue;
      for (let k = 0; k < w.length; k++) {
        const s = this.lexiconAt[k] as number;
        if (s >= 0) logits[s] = (logits[s] as number) + LEXICON_WEIGHT * (w[k] as number);
      }
    }
    hits.sort((a, b) => b.weight - a.weight);
    return { logits, hits };
  }
}

function normalType(t: string): string {
  return t
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}
