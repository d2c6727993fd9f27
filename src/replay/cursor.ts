import type { Agent } from '../memoir/format/agents.js';
import { loadEntryAt } from '../memoir/file/reader.js';
import type { AffinitySum, StoryIndex, StoryRow } from '../memoir-index/story-queries.js';
import { roundAffinity } from '../affinity/affinity.js';
import {
  toBeat,
  type AffinityTotals,
  type Beat,
  type BeatRef,
  type SceneWindow,
  type SessionInfo,
  type StoryFilter,
  type StoryNav,
} from './story.js';

/**
 * A windowed cursor over the memoir index. It holds a few keyset pages of light rows (line,
 * offset, scene, agent) and a small cache of loaded beats; a 100k-entry memoir costs the same
 * memory as a short one. Every fetch is `line > ?`/`line < ?` ... `LIMIT n` in one memoir.
 */
export const PAGE_SIZE = 200;
const MAX_PAGES = 8;
const MAX_BEATS = 256;

interface Page {
  key: string;
  session: number;
  /** Every filtered row with lo < line <= hi is in `rows` (ascending). */
  lo: number;
  hi: number;
  rows: StoryRow[];
}

const filterKey = (f: StoryFilter): string => [...f.agents].sort().join(',');

export class StoryCursor implements StoryNav {
  readonly sessions: readonly SessionInfo[];
  private readonly q: StoryIndex;
  private readonly pageSize: number;
  private pages: Page[] = [];
  private readonly beats = new Map<string, Beat>();
  private readonly counts = new Map<string, number[]>();
  private sessionAffinity: Map<Agent, AffinitySum>[] | undefined;
  private affinityMemo: { session: number; line: number; totals: Map<Agent, AffinitySum> } | undefined;
  private readonly positionMemo = new Map<string, { ref: BeatRef; pos: number }>();
  private readonly maxLines = new Map<number, number>();
  private agentList: Agent[] | undefined;
  /** Matches per session of the last search (keyed by filter and query). */
  private lastSearch: { key: string; counts: number[] } | undefined;

  constructor(q: StoryIndex, opts: { pageSize?: number } = {}) {
    this.q = q;
    this.sessions = q.sessions;
    this.pageSize = Math.max(2, opts.pageSize ?? PAGE_SIZE);
  }

  agents(): Agent[] {
    this.agentList ??= this.q.agentsPresent();
    return this.agentList;
  }

  private countsFor(filter: StoryFilter): number[] {
    const key = filterKey(filter);
    let c = this.counts.get(key);
    if (!c) {
      c = this.q.countsBySession(filter.agents);
      this.counts.set(key, c);
    }
    return c;
  }

  count(filter: StoryFilter): number {
    return this.countsFor(filter).reduce((a, b) => a + b, 0);
  }

  private fetch(session: number, line: number, dir: 1 | -1, filter: StoryFilter): Page {
    const rows = this.q.rows(session, line, dir, filter.agents, this.pageSize);
    const full = rows.length === this.pageSize;
    let page: Page;
    if (dir === 1) {
      page = {
        key: filterKey(filter),
        session,
        lo: line,
        hi: full ? (rows[rows.length - 1] as StoryRow).line : Number.POSITIVE_INFINITY,
        rows,
      };
    } else {
      rows.reverse();
      page = {
        key: filterKey(filter),
        session,
        lo: full ? (rows[0] as StoryRow).line : Number.NEGATIVE_INFINITY,
        hi: line - 1,
        rows,
      };
    }
    this.pages.unshift(page);
    if (this.pages.length > MAX_PAGES) this.pages.pop();
    return page;
  }

  /** The neighbour of `line` in one session from a cached page, 'none' when the session has no more, undefined when unknown. */
  private fromPages(session: number, line: number, dir: 1 | -1, filter: StoryFilter): StoryRow | 'none' | undefined {
    const key = filterKey(filter);
    for (const p of this.pages) {
      if (p.key !== key || p.session !== session) continue;
      if (dir === 1 && line >= p.lo && line <= p.hi) {
        const r = p.rows.find((x) => x.line > line);
        if (r) return r;
        if (p.hi === Number.POSITIVE_INFINITY) return 'none';
      }
      if (dir === -1 && line - 1 <= p.hi && line - 1 >= p.lo) {
        let r: StoryRow | undefined;
        for (const x of p.rows) if (x.line < line) r = x;
        if (r) return r;
        if (p.lo === Number.NEGATIVE_INFINITY) return 'none';
      }
    }
    return undefined;
  }

  private neighbour(session: number, line: number, dir: 1 | -1, filter: StoryFilter): StoryRow | null {
    const cached = this.fromPages(session, line, dir, filter);
    if (cached === 'none') return null;
    if (cached) return cached;
    const page = this.fetch(session, line, dir, filter);
    if (dir === 1) return page.rows[0] ?? null;
    return page.rows[page.rows.length - 1] ?? null;
  }

  step(from: BeatRef, dir: 1 | -1, filter: StoryFilter): BeatRef | null {
    let session = from.session;
    let line = from.line;
    for (;;) {
      const r = this.neighbour(session, line, dir, filter);
      if (r) return { session, line: r.line };
      session += dir;
      if (session < 0 || session >= this.sessions.length) return null;
      line = dir === 1 ? 0 : Number.MAX_SAFE_INTEGER;
    }
  }

  edge(which: 'first' | 'last', filter: StoryFilter): BeatRef | null {
    if (this.sessions.length === 0) return null;
    if (which === 'first') return this.step({ session: 0, line: 0 }, 1, filter);
    return this.step({ session: this.sessions.length - 1, line: Number.MAX_SAFE_INTEGER }, -1, filter);
  }

  private row(ref: BeatRef): (StoryRow & { superseded: number }) | undefined {
    if (ref.session < 0 || ref.session >= this.sessions.length) return undefined;
    for (const p of this.pages) {
      if (p.session !== ref.session) continue;
      const r = p.rows.find((x) => x.line === ref.line);
      if (r) return { ...r, superseded: 0 };
    }
    return this.q.rowAt(ref.session, ref.line);
  }

  matches(ref: BeatRef, filter: StoryFilter): boolean {
    const r = this.row(ref);
    if (!r || r.superseded) return false;
    return filter.agents.length === 0 || filter.agents.includes(r.agent);
  }

  sceneStart(from: BeatRef, dir: 1 | -1, filter: StoryFilter): BeatRef | null {
    const r = this.row(from);
    if (!r) return null;
    if (dir === 1) {
      const other = this.q.otherScene(from.session, from.line, r.scene_id, 1, filter.agents);
      if (other) return { session: from.session, line: other.line };
      return from.session + 1 < this.sessions.length
        ? this.step({ session: from.session + 1, line: 0 }, 1, filter)
        : null;
    }
    const start = this.startOfScene(from, r.scene_id, filter);
    if (start.line !== from.line) return start;
    const prev = this.step(start, -1, filter);
    if (!prev) return null;
    const pr = this.row(prev);
    return pr ? this.startOfScene(prev, pr.scene_id, filter) : prev;
  }

  private startOfScene(ref: BeatRef, sceneId: string, filter: StoryFilter): BeatRef {
    const boundary = this.q.otherScene(ref.session, ref.line, sceneId, -1, filter.agents);
    const first = this.q.rows(ref.session, boundary?.line ?? 0, 1, filter.agents, 1)[0];
    return first ? { session: ref.session, line: first.line } : ref;
  }

  find(entryId: string): BeatRef | null {
    const hit = this.q.locate(entryId.trim());
    return hit === 'ambiguous' || hit === null ? null : hit;
  }

  search(query: string, from: BeatRef | null, dir: 1 | -1, filter: StoryFilter): BeatRef | null {
    if (query.trim() === '' || this.sessions.length === 0) return null;
    let session = from ? from.session : dir === 1 ? 0 : this.sessions.length - 1;
    let line = from ? from.line : dir === 1 ? 0 : Number.MAX_SAFE_INTEGER;
    for (;;) {
      const r = this.q.search(session, line, dir, filter.agents, query);
      if (r) return { session, line: r.line };
      session += dir;
      if (session < 0 || session >= this.sessions.length) return null;
      line = dir === 1 ? 0 : Number.MAX_SAFE_INTEGER;
    }
  }

  searchCount(query: string, filter: StoryFilter): number {
    return this.searchCountsFor(query, filter).reduce((a, b) => a + b, 0);
  }

  searchRank(ref: BeatRef, query: string, filter: StoryFilter): number {
    const counts = this.searchCountsFor(query, filter);
    let before = 0;
    for (let s = 0; s < ref.session; s++) before += counts[s] ?? 0;
    return before + this.q.searchCountUpTo(ref.session, ref.line, filter.agents, query);
  }

  private searchCountsFor(query: string, filter: StoryFilter): number[] {
    const key = `${filterKey(filter)}\u0000${query.trim()}`;
    if (this.lastSearch?.key !== key) this.lastSearch = { key, counts: this.q.searchCounts(filter.agents, query) };
    return this.lastSearch.counts;
  }

  private maxLine(session: number): number {
    let m = this.maxLines.get(session);
    if (m === undefined) {
      m = this.q.maxLine(session);
      this.maxLines.set(session, m);
    }
    return m;
  }

  /**
   * Counts from the nearest known point (the session's start, its end, or the last position
   * asked), so stepping through a 100k-entry memoir never rescans it.
   */
  position(ref: BeatRef, filter: StoryFilter): number {
    const key = filterKey(filter);
    const counts = this.countsFor(filter);
    let prefix = 0;
    for (let s = 0; s < ref.session; s++) prefix += counts[s] ?? 0;
    const a = filter.agents;
    const end = this.maxLine(ref.session);
    const memo = this.positionMemo.get(key);
    const fromMemo =
      memo && memo.ref.session === ref.session ? Math.abs(memo.ref.line - ref.line) : Number.POSITIVE_INFINITY;
    let pos: number;
    if (memo && fromMemo <= Math.min(ref.line, end - ref.line)) {
      pos =
        ref.line >= memo.ref.line
          ? memo.pos + this.q.countBetween(ref.session, memo.ref.line - 1, ref.line, a)
          : memo.pos - this.q.countBetween(ref.session, ref.line - 1, memo.ref.line, a);
    } else if (ref.line <= end - ref.line) {
      pos = prefix + this.q.countBetween(ref.session, 0, ref.line, a);
    } else {
      pos =
        prefix +
        (counts[ref.session] ?? 0) -
        this.q.countBetween(ref.session, ref.line - 1, Number.MAX_SAFE_INTEGER, a);
    }
    this.positionMemo.set(key, { ref, pos });
    return pos;
  }

  beat(ref: BeatRef): Beat {
    const key = `${ref.session}:${ref.line}`;
    const hit = this.beats.get(key);
    if (hit) {
      this.beats.delete(key);
      this.beats.set(key, hit);
      return hit;
    }
    const r = this.row(ref);
    const s = this.sessions[ref.session];
    if (!r || !s) throw new RangeError(`no beat at session ${ref.session} line ${ref.line}`);
    const b = toBeat(ref, s.session, loadEntryAt(s.path, r.offset, r.length, r.entry_id), r.shareable === 1);
    this.beats.set(key, b);
    if (this.beats.size > MAX_BEATS) this.beats.delete(this.beats.keys().next().value as string);
    return b;
  }

  scene(ref: BeatRef, filter: StoryFilter, max: number): SceneWindow {
    const r = this.row(ref);
    if (!r) throw new RangeError(`no beat at session ${ref.session} line ${ref.line}`);
    const lo = this.q.otherScene(ref.session, ref.line, r.scene_id, -1, filter.agents)?.line ?? 0;
    const hi = this.q.otherScene(ref.session, ref.line, r.scene_id, 1, filter.agents)?.line ?? Number.MAX_SAFE_INTEGER;
    const room = Math.max(0, max - 1);
    const beforeRows = this.q.rows(ref.session, ref.line, -1, filter.agents, room).filter((x) => x.line > lo);
    const afterRows = this.q.rows(ref.session, ref.line, 1, filter.agents, room).filter((x) => x.line < hi);
    // Keep the current beat roughly in the middle; give unused room to the other side.
    let nBefore = Math.min(beforeRows.length, Math.ceil(room / 2));
    const nAfter = Math.min(afterRows.length, room - nBefore);
    nBefore = Math.min(beforeRows.length, room - nAfter);
    const before = beforeRows.slice(0, nBefore).reverse();
    const after = afterRows.slice(0, nAfter);
    const beats = [...before, r, ...after].map((x) => this.beat({ session: ref.session, line: x.line }));
    const firstLine = before[0]?.line ?? ref.line;
    const lastLine = after[after.length - 1]?.line ?? ref.line;
    return {
      beats,
      current: before.length,
      before: this.q.countBetween(ref.session, lo, firstLine, filter.agents),
      after: this.q.countBetween(ref.session, lastLine, hi, filter.agents),
    };
  }

  /** Affinity after a beat, from the nearest known point (session start, session end, or the last beat asked). */
  affinityAt(ref: BeatRef): AffinityTotals {
    if (!this.sessionAffinity) this.sessionAffinity = this.q.affinityBySession();
    const merge = (into: Map<Agent, AffinitySum>, m: Map<Agent, AffinitySum>, sign: 1 | -1): void => {
      for (const [a, v] of m) {
        const cur = into.get(a) ?? { total: 0, n: 0 };
        into.set(a, { total: cur.total + sign * v.total, n: cur.n + sign * v.n });
      }
    };
    const end = this.maxLine(ref.session);
    const memo = this.affinityMemo;
    const fromMemo = memo && memo.session === ref.session ? Math.abs(memo.line - ref.line) : Number.POSITIVE_INFINITY;
    let partial: Map<Agent, AffinitySum>;
    if (memo && fromMemo <= Math.min(ref.line, end - ref.line)) {
      partial = new Map(memo.totals);
      if (ref.line >= memo.line) merge(partial, this.q.affinityBetween(ref.session, memo.line, ref.line), 1);
      else merge(partial, this.q.affinityBetween(ref.session, ref.line, memo.line), -1);
    } else if (ref.line <= end - ref.line) {
      partial = this.q.affinityBetween(ref.session, 0, ref.line);
    } else {
      partial = new Map(this.sessionAffinity[ref.session] ?? new Map<Agent, AffinitySum>());
      merge(partial, this.q.affinityBetween(ref.session, ref.line, Number.MAX_SAFE_INTEGER), -1);
    }
    this.affinityMemo = { session: ref.session, line: ref.line, totals: partial };
    const totals = new Map<Agent, AffinitySum>();
    for (let s = 0; s < ref.session; s++) merge(totals, this.sessionAffinity[s] ?? new Map<Agent, AffinitySum>(), 1);
    merge(totals, partial, 1);
    const out: AffinityTotals = {};
    // Agents appear once their affinity has changed (a sum that cancels out to 0 still shows).
    for (const [a, v] of totals) if (v.n > 0) out[a] = roundAffinity(v.total);
    return out;
  }
}
