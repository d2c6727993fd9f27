import { roundAffinity } from '../../src/affinity/affinity.js';
import type { Agent } from '../../src/memoir/format/agents.js';
import { AGENTS } from '../../src/memoir/format/agents.js';
import type { MemoirEntry } from '../../src/memoir/format/schema.js';
import { isShareable } from '../../src/memoir/format/split-rule.js';
import {
  compareRefs,
  toBeat,
  type AffinityTotals,
  type Beat,
  type BeatRef,
  type SceneWindow,
  type SessionInfo,
  type StoryFilter,
  type StoryNav,
} from '../../src/replay/story.js';

/**
 * A story held in memory: the reference implementation of StoryNav (linear scans, obviously
 * right). Tests check the SQLite cursor against it.
 * Lines are numbered 1.. in each session; superseded entries are left out as in the cursor.
 */
export class MemoryStory implements StoryNav {
  readonly sessions: SessionInfo[];
  private readonly all: Beat[];
  private readonly text = new Map<string, string>();
  /** Every entry id, superseded ones included, and the newest revision that replaces each. */
  private readonly ids = new Set<string>();
  private readonly revisedBy = new Map<string, string>();

  constructor(sessions: readonly { session: string; entries: readonly MemoirEntry[]; path?: string }[]) {
    this.sessions = sessions.map((s, rank) => ({
      rank,
      fileId: rank + 1,
      path: s.path ?? `${s.session}/memoir.jsonl`,
      session: s.session,
      player: null,
      project: null,
      startedAt: null,
    }));
    const superseded = new Set<string>();
    for (const s of sessions) {
      for (const e of s.entries) {
        this.ids.add(e.entry_id);
        if (typeof e.supersedes === 'string') {
          superseded.add(e.supersedes);
          this.revisedBy.set(e.supersedes, e.entry_id);
        }
        // The same fields the index's full-text search covers.
        const parts = [
          e.scene_id,
          e.agent,
          e.source,
          e.narrative_beat?.replace(/_/g, ' '),
          e.agent_proposed,
          e.player_response?.delta,
          e.context?.task_type,
        ];
        for (const p of e.training_label?.preference_pair ?? []) if (typeof p.text === 'string') parts.push(p.text);
        if (typeof e.comment === 'string') parts.push(e.comment);
        if (typeof e.revision_reason === 'string') parts.push(e.revision_reason);
        this.text.set(e.entry_id, parts.filter(Boolean).join('\n').toLowerCase());
      }
    }
    this.all = sessions.flatMap((s, rank) =>
      s.entries.flatMap((e, i) =>
        superseded.has(e.entry_id)
          ? []
          : [toBeat({ session: rank, line: i + 1 }, s.session, e, isShareable({ ...e, split: e.split }))],
      ),
    );
  }

  private list(filter: StoryFilter): Beat[] {
    return filter.agents.length ? this.all.filter((b) => filter.agents.includes(b.agent)) : this.all;
  }

  private at(ref: BeatRef): Beat | undefined {
    return this.all.find((b) => b.ref.session === ref.session && b.ref.line === ref.line);
  }

  agents(): Agent[] {
    const present = new Set(this.all.map((b) => b.agent));
    return AGENTS.filter((a) => present.has(a));
  }

  count(filter: StoryFilter): number {
    return this.list(filter).length;
  }

  edge(which: 'first' | 'last', filter: StoryFilter): BeatRef | null {
    const l = this.list(filter);
    return (which === 'first' ? l[0] : l[l.length - 1])?.ref ?? null;
  }

  step(from: BeatRef, dir: 1 | -1, filter: StoryFilter): BeatRef | null {
    const l = this.list(filter);
    if (dir === 1) return l.find((b) => compareRefs(b.ref, from) > 0)?.ref ?? null;
    let out: BeatRef | null = null;
    for (const b of l) if (compareRefs(b.ref, from) < 0) out = b.ref;
    return out;
  }

  private sceneKey(b: Beat): string {
    return `${b.ref.session}\u0000${b.scene_id}`;
  }

  /** Start index (in the filtered list) of the scene run containing index i. */
  private runStart(l: Beat[], i: number): number {
    let j = i;
    while (j > 0 && this.sceneKey(l[j - 1] as Beat) === this.sceneKey(l[i] as Beat)) j--;
    return j;
  }

  sceneStart(from: BeatRef, dir: 1 | -1, filter: StoryFilter): BeatRef | null {
    const l = this.list(filter);
    const i = l.findIndex((b) => compareRefs(b.ref, from) === 0);
    if (i < 0) return null;
    const key = this.sceneKey(l[i] as Beat);
    if (dir === 1) {
      for (let j = i + 1; j < l.length; j++) if (this.sceneKey(l[j] as Beat) !== key) return (l[j] as Beat).ref;
      return null;
    }
    const start = this.runStart(l, i);
    if (start !== i) return (l[start] as Beat).ref;
    if (i === 0) return null;
    return (l[this.runStart(l, i - 1)] as Beat).ref;
  }

  find(entryId: string): BeatRef | null {
    let id = entryId.trim();
    if (!this.ids.has(id) && id.length >= 6) {
      const hits = [...this.ids].filter((x) => x.startsWith(id));
      if (hits.length === 1) id = hits[0] as string;
    }
    // A superseded entry is found as its newest revision.
    for (let hops = 0; hops < 1000 && this.revisedBy.has(id); hops++) id = this.revisedBy.get(id) as string;
    return this.all.find((b) => b.entry_id === id)?.ref ?? null;
  }

  private matcher(query: string): ((b: Beat) => boolean) | null {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    if (words.length === 0) return null;
    return (b: Beat): boolean => {
      const t = this.text.get(b.entry_id) ?? '';
      return words.every((w) => t.includes(w));
    };
  }

  searchCount(query: string, filter: StoryFilter): number {
    const hit = this.matcher(query);
    return hit ? this.list(filter).filter(hit).length : 0;
  }

  searchRank(ref: BeatRef, query: string, filter: StoryFilter): number {
    const hit = this.matcher(query);
    return hit ? this.list(filter).filter((b) => compareRefs(b.ref, ref) <= 0 && hit(b)).length : 0;
  }

  search(query: string, from: BeatRef | null, dir: 1 | -1, filter: StoryFilter): BeatRef | null {
    const hit = this.matcher(query);
    if (!hit) return null;
    const l = this.list(filter);
    if (dir === 1) return l.find((b) => (!from || compareRefs(b.ref, from) > 0) && hit(b))?.ref ?? null;
    let out: BeatRef | null = null;
    for (const b of l) if ((!from || compareRefs(b.ref, from) < 0) && hit(b)) out = b.ref;
    return out;
  }

  matches(ref: BeatRef, filter: StoryFilter): boolean {
    const b = this.at(ref);
    return b !== undefined && (filter.agents.length === 0 || filter.agents.includes(b.agent));
  }

  position(ref: BeatRef, filter: StoryFilter): number {
    return this.list(filter).filter((b) => compareRefs(b.ref, ref) < 0).length;
  }

  beat(ref: BeatRef): Beat {
    const b = this.at(ref);
    if (!b) throw new RangeError(`no beat at session ${ref.session} line ${ref.line}`);
    return b;
  }

  scene(ref: BeatRef, filter: StoryFilter, max: number): SceneWindow {
    const l = this.list(filter);
    const i = l.findIndex((b) => compareRefs(b.ref, ref) === 0);
    const cur = i >= 0 ? (l[i] as Beat) : this.beat(ref);
    const key = this.sceneKey(cur);
    const run: Beat[] = [];
    let idx = 0;
    if (i < 0) {
      run.push(cur);
    } else {
      const start = this.runStart(l, i);
      for (let j = start; j < l.length && this.sceneKey(l[j] as Beat) === key; j++) run.push(l[j] as Beat);
      idx = i - start;
    }
    const room = Math.max(0, max - 1);
    let nBefore = Math.min(idx, Math.ceil(room / 2));
    const nAfter = Math.min(run.length - idx - 1, room - nBefore);
    nBefore = Math.min(idx, room - nAfter);
    return {
      beats: run.slice(idx - nBefore, idx + nAfter + 1),
      current: nBefore,
      before: idx - nBefore,
      after: run.length - idx - 1 - nAfter,
    };
  }

  affinityAt(ref: BeatRef): AffinityTotals {
    const totals = new Map<Agent, number>();
    for (const b of this.all) {
      if (compareRefs(b.ref, ref) > 0) break;
      if (b.affinity_delta !== 0) totals.set(b.agent, (totals.get(b.agent) ?? 0) + b.affinity_delta);
    }
    const out: AffinityTotals = {};
    for (const [a, v] of totals) out[a] = roundAffinity(v);
    return out;
  }
}
