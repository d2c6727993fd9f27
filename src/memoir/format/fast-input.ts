import { isValidLine } from './fast-validate.js';
import { EXTENSION_KEYS, STANDARD_KEYS, type MemoirInput } from './schema.js';

/**
 * The hot path of `append`: fills upstream defaults and checks a new entry without zod. Returns
 * undefined when anything is off, and the caller falls back to `MemoirInputSchema` (the schema of
 * record, which words the error). A property test holds the two in agreement.
 */
const INPUT_KEYS: ReadonlySet<string> = new Set<string>([...STANDARD_KEYS, ...EXTENSION_KEYS]);

type Obj = Record<string, unknown>;
/** Extension keys after id, time and type (`interrupt` first, as written). */
const LATER_EXTENSIONS = EXTENSION_KEYS.filter((k) => k !== 'entry_id' && k !== 'recorded_at' && k !== 'entry_type');
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export type FastInput = Omit<MemoirInput, 'split'> & {
  split?: { shared_eligible: boolean; private_only: boolean };
} & Record<string, unknown>;

/** The two flags (each false when left out, as upstream), nothing else (as zod strips other keys). */
function splitOf(s: Obj): Obj {
  if (s.shared_eligible !== undefined && s.private_only !== undefined && Object.keys(s).length === 2) return s;
  return { shared_eligible: s.shared_eligible ?? false, private_only: s.private_only ?? false };
}

export function fastInput(v: unknown): FastInput | undefined {
  if (!isObj(v)) return undefined;
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) if (!INPUT_KEYS.has(keys[i] as string)) return undefined;
  const ctx = v.context;
  const pr = v.player_response;
  const tl = v.training_label;
  // In the order of a written entry (split, id, time and type are filled in by append): the
  // caller completes this object in place instead of copying it.
  const out: Obj = {
    scene_id: v.scene_id,
    agent: v.agent,
    source: v.source,
    context: ctx === undefined ? null : ctx, // kept as given: every key, in its order (py-object.ts)
    narrative_beat: v.narrative_beat === undefined ? null : v.narrative_beat,
    agent_proposed: v.agent_proposed === undefined ? null : v.agent_proposed,
    player_response:
      pr === undefined
        ? null
        : isObj(pr) && (pr.delta === undefined || pr.felt === undefined)
          ? { ...pr, delta: pr.delta === undefined ? null : pr.delta, felt: pr.felt === undefined ? null : pr.felt }
          : pr,
    affinity_delta: v.affinity_delta === undefined ? 0 : v.affinity_delta,
    training_label:
      tl === undefined
        ? null
        : isObj(tl) && (tl.weight === undefined || tl.preference_pair === undefined)
          ? { preference_pair: tl.preference_pair ?? null, ...tl, weight: tl.weight ?? 1 }
          : tl,
    split: isObj(v.split) ? splitOf(v.split) : v.split,
    entry_id: v.entry_id,
    recorded_at: v.recorded_at,
    entry_type: v.entry_type,
  };
  for (let i = 0; i < LATER_EXTENSIONS.length; i++) {
    const k = LATER_EXTENSIONS[i] as string;
    if (v[k] !== undefined) out[k] = v[k];
  }
  if (!isValidLine(out)) return undefined;
  // a new entry's floats are finite: pydantic would write NaN or Infinity as null, which no reader takes
  if (!Number.isFinite(out.affinity_delta)) return undefined;
  if (isObj(out.training_label) && !Number.isFinite(out.training_label.weight)) return undefined;
  return out as FastInput;
}
