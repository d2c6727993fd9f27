/**
 * Revision chains. The memoir is append-only: a correction is a new entry whose `supersedes`
 * names the entry it replaces. Entries linked that way form a chain (or, when something went
 * wrong, a tree or a cycle). This module is pure: it takes nodes (id, predecessor, time, order)
 * and answers
 *   - which entry a read of any id resolves to (the newest revision, the chain's head),
 *   - the whole history of a chain,
 *   - what is wrong: cycles, dangling references, forks (two revisions of one entry),
 *     revisions that change the entry type or widen privacy.
 *
 * "Newest" is decided by `recorded_at`, then by `order` (position in the memoirs), then by id,
 * so the answer never depends on the order nodes were given in.
 */

export interface RevisionNode {
  entry_id: string;
  /** The id this entry replaces, or null for an original. */
  supersedes: string | null;
  /** ISO timestamp, or null (Python-written lines carry none). */
  recorded_at: string | null;
  /** Position in the memoirs (e.g. index seq): a later line is newer when times tie or are missing. */
  order: number;
  entry_type?: string;
  /** The entry's own split verdict (strict rule, this line alone). */
  shareable?: boolean;
}

export type RevisionProblemKind = 'cycle' | 'dangling' | 'fork' | 'type_change' | 'widens_privacy';

export interface RevisionProblem {
  kind: RevisionProblemKind;
  /** The entry the problem is reported on (the revision that is wrong, or the forked original). */
  entry_id: string;
  /** Every id involved (the cycle, the fork's revisions, the missing target…). */
  ids: string[];
  message: string;
}

export interface Resolution {
  /** The id asked for. */
  requested: string;
  /** The newest revision reachable from it (itself when nothing supersedes it). */
  head: string;
  /** Ids from `requested` to `head`, both included. */
  path: string[];
  /** More than one revision was found somewhere on the way (the newest branch was taken). */
  forked: boolean;
  /** The chain loops: `head` is where the walk stopped. */
  cycle: boolean;
}

export interface HistoryItem<N extends RevisionNode = RevisionNode> {
  node: N;
  /** 0 for the original, 1 for its revision… */
  depth: number;
  /** The newest revision of the chain (what reads resolve to). */
  head: boolean;
}

/** Compare two nodes by age: negative when `a` is older than `b`. */
export function compareAge(a: RevisionNode, b: RevisionNode): number {
  const ta = a.recorded_at === null ? Number.NEGATIVE_INFINITY : Date.parse(a.recorded_at);
  const tb = b.recorded_at === null ? Number.NEGATIVE_INFINITY : Date.parse(b.recorded_at);
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (a.order !== b.order) return a.order < b.order ? -1 : 1;
  return a.entry_id < b.entry_id ? -1 : a.entry_id > b.entry_id ? 1 : 0;
}

export class RevisionGraph<N extends RevisionNode = RevisionNode> {
  private readonly nodes = new Map<string, N>();
  /** id -> the revisions that name it, oldest first. */
  private readonly children = new Map<string, N[]>();

  constructor(nodes: Iterable<N>) {
    for (const n of nodes) {
      // Duplicate ids are verify's `duplicate_id` problem; keep the first occurrence here.
      if (!this.nodes.has(n.entry_id)) this.nodes.set(n.entry_id, n);
    }
    for (const n of this.nodes.values()) {
      if (n.supersedes === null) continue;
      const list = this.children.get(n.supersedes);
      if (list) list.push(n);
      else this.children.set(n.supersedes, [n]);
    }
    for (const list of this.children.values()) list.sort(compareAge);
  }

  get(id: string): N | undefined {
    return this.nodes.get(id);
  }

  has(id: string): boolean {
    return this.nodes.has(id);
  }

  /** The revisions that name `id` (more than one is a fork), oldest first. */
  revisionsOf(id: string): readonly N[] {
    return this.children.get(id) ?? [];
  }

  isSuperseded(id: string): boolean {
    return this.revisionsOf(id).length > 0;
  }

  /**
   * The newest revision reachable from `id`: every branch below it is followed and the newest
   * leaf wins. In a cycle with no leaf, the newest entry on it is taken (and `cycle` is set).
   */
  resolve(id: string): Resolution {
    let forked = this.revisionsOf(id).length > 1;
    let cycle = false;
    let bestLeaf: N | undefined;
    let bestAny: N | undefined;
    const seen = new Set<string>([id]);
    const stack = [...this.revisionsOf(id)];
    while (stack.length > 0) {
      const n = stack.pop() as N;
      if (seen.has(n.entry_id)) {
        cycle = true;
        continue;
      }
      seen.add(n.entry_id);
      if (!bestAny || compareAge(bestAny, n) < 0) bestAny = n;
      const kids = this.revisionsOf(n.entry_id);
      if (kids.length > 1) forked = true;
      if (kids.length === 0) {
        if (!bestLeaf || compareAge(bestLeaf, n) < 0) bestLeaf = n;
      } else stack.push(...kids);
    }
    const head = (bestLeaf ?? bestAny)?.entry_id ?? id;
    // Each entry names one predecessor, so walking back from the head leads to `id`.
    const path: string[] = [];
    let cur: string | null = head;
    const back = new Set<string>();
    while (cur !== null && !back.has(cur)) {
      back.add(cur);
      path.push(cur);
      if (cur === id) break;
      cur = this.nodes.get(cur)?.supersedes ?? null;
    }
    path.reverse();
    return { requested: id, head, path, forked, cycle };
  }

  /** The original of the chain `id` belongs to: follow `supersedes` back (cycle-safe). */
  root(id: string): string {
    let cur = id;
    const seen = new Set<string>([id]);
    for (;;) {
      const n = this.nodes.get(cur);
      if (!n || n.supersedes === null || !this.nodes.has(n.supersedes) || seen.has(n.supersedes)) return cur;
      cur = n.supersedes;
      seen.add(cur);
    }
  }

  /**
   * The whole chain `id` belongs to, original first: every entry below the root, parents
   * before their revisions, siblings (a fork) oldest first. The head is the newest leaf.
   */
  history(id: string): HistoryItem<N>[] {
    const rootId = this.root(id);
    const head = this.resolve(rootId).head;
    const out: HistoryItem<N>[] = [];
    const seen = new Set<string>();
    const visit = (nid: string, depth: number): void => {
      if (seen.has(nid)) return;
      seen.add(nid);
      const node = this.nodes.get(nid);
      if (node) out.push({ node, depth, head: nid === head });
      for (const child of this.revisionsOf(nid)) visit(child.entry_id, depth + 1);
    };
    visit(rootId, 0);
    return out;
  }

  /**
   * Whether an entry may leave the forge once its chain is taken into account: a revision is
   * never more shareable than anything it replaces (its own verdict AND every ancestor's).
   * Unknown shareability counts as private.
   */
  effectiveShareable(id: string): boolean {
    let cur = this.nodes.get(id);
    const seen = new Set<string>();
    while (cur) {
      if (cur.shareable !== true) return false;
      if (cur.supersedes === null || seen.has(cur.entry_id)) return true;
      seen.add(cur.entry_id);
      cur = this.nodes.get(cur.supersedes);
    }
    return true;
  }

  /** Every problem with the chains: cycles, dangling references, forks, type changes, widening. */
  problems(): RevisionProblem[] {
    const out: RevisionProblem[] = [];
    const sorted = [...this.nodes.values()].sort(compareAge);
    // Cycles: follow supersedes from every node; colour nodes to report each cycle once.
    const state = new Map<string, 'walking' | 'done'>();
    for (const start of sorted) {
      const trail: string[] = [];
      let cur: N | undefined = start;
      while (cur && state.get(cur.entry_id) === undefined) {
        state.set(cur.entry_id, 'walking');
        trail.push(cur.entry_id);
        cur = cur.supersedes === null ? undefined : this.nodes.get(cur.supersedes);
      }
      if (cur && state.get(cur.entry_id) === 'walking') {
        const loop = trail.slice(trail.indexOf(cur.entry_id));
        const first = [...loop].sort()[0] as string;
        out.push({
          kind: 'cycle',
          entry_id: first,
          ids: loop,
          message: `revision cycle: ${[...loop, loop[0]].join(' -> ')} (each names the next as the entry it replaces); reads cannot resolve it`,
        });
      }
      for (const id of trail) state.set(id, 'done');
    }
    for (const n of sorted) {
      if (n.supersedes === null) continue;
      if (n.supersedes === n.entry_id) continue; // reported as a cycle of one
      const target = this.nodes.get(n.supersedes);
      if (!target) {
        out.push({
          kind: 'dangling',
          entry_id: n.entry_id,
          ids: [n.entry_id, n.supersedes],
          message: `supersedes ${n.supersedes}, which is not in the memoirs checked`,
        });
        continue;
      }
      if (n.entry_type !== undefined && target.entry_type !== undefined && n.entry_type !== target.entry_type) {
        out.push({
          kind: 'type_change',
          entry_id: n.entry_id,
          ids: [n.entry_id, target.entry_id],
          message: `a revision must keep the entry type: ${target.entry_id} is "${target.entry_type}", this revision is "${n.entry_type}"`,
        });
      }
      if (n.shareable === true && !this.effectiveShareable(target.entry_id)) {
        out.push({
          kind: 'widens_privacy',
          entry_id: n.entry_id,
          ids: [n.entry_id, target.entry_id],
          message: `this revision is marked shareable but replaces ${target.entry_id}, which is private: a revision can never widen privacy; kourai treats it as private`,
        });
      }
    }
    for (const [id, kids] of this.children) {
      if (kids.length < 2 || !this.nodes.has(id)) continue;
      const ids = kids.map((k) => k.entry_id);
      out.push({
        kind: 'fork',
        entry_id: id,
        ids,
        message: `${kids.length} revisions replace this entry (${ids.join(', ')}); reads take the newest, ${ids[ids.length - 1] as string}`,
      });
    }
    return out;
  }
}
