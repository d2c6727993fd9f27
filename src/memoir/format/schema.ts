import { z } from 'zod';
import { AGENTS, type Agent } from './agents.js';
import { EXTENSION_FIELDS, type ExtensionKind } from './fields.js';
import { ENTRY_TYPES, FELT, REASON_CLASSES, RESPONSE_KINDS, SOURCES, VISIBILITIES } from './sources.js';

/**
 * The Forge Memoir entry: the ten upstream keys (pydantic `MemoirEntry`, in this order) and the
 * kourai extensions that Python hosts ignore. Two schemas:
 * - `MemoirLineSchema` reads a stored line: all ten keys required, unknown keys kept.
 * - `MemoirInputSchema` takes a new entry for `append`: optional keys defaulted, unknown keys
 *   rejected; `append` first leaves out the keys no model declares, as pydantic does, and refuses
 *   a near miss of a field name (undeclared.ts).
 */

export { CONTEXT_KEYS, EXTENSION_FIELDS, EXTENSION_KEYS, STANDARD_KEYS } from './fields.js';

export function closest(value: string, options: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const o of options) {
    const d = levenshtein(value.toLowerCase(), o);
    if (d < bestD) {
      bestD = d;
      best = o;
    }
  }
  return bestD <= Math.max(2, Math.floor(value.length / 3)) ? best : undefined;
}

function levenshtein(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0] ?? 0;
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j] ?? 0;
      dp[j] = Math.min((dp[j] ?? 0) + 1, (dp[j - 1] ?? 0) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length] ?? 0;
}

function enumOf<const T extends readonly [string, ...string[]]>(values: T, what: string) {
  return z.enum(values, {
    error: (iss) => {
      if (typeof iss.input !== 'string') return `${what} must be a string, one of: ${values.join(', ')}`;
      const hint = closest(iss.input, values);
      return `unknown ${what} "${iss.input}"${hint ? ` (did you mean "${hint}"?)` : ''}; expected one of: ${values.join(', ')}`;
    },
  });
}

export const AgentSchema = enumOf(AGENTS as unknown as readonly [Agent, ...Agent[]], 'agent');
export const SourceSchema = enumOf(SOURCES, 'source');
export const EntryTypeSchema = enumOf(ENTRY_TYPES, 'entry_type');

/** A new entry's float: finite (pydantic would write NaN or Infinity as null, which no reader takes). */
const finiteFloat = (what: string) =>
  z
    .number({
      error: (iss) =>
        iss.input === undefined
          ? `${what} is required`
          : typeof iss.input === 'number'
            ? `${what} must be a finite number, not ${String(iss.input)} (a line would hold null, which no reader takes)`
            : `${what} must be a number`,
    })
    .refine(Number.isFinite, {
      message: `${what} must be a finite number (a line would hold null, which no reader takes)`,
    });

const nullableString = (what: string) => z.string({ error: `${what} must be a string or null` }).nullable();

/** The context keys kourai reads; a line may hold any others (kept, py-object.ts). */
export interface Context {
  task_type?: string;
  transcript_hash?: string;
  preceding_agents?: Agent[];
  [key: string]: unknown;
}

const isJsonObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Upstream declares `context: dict[str, Any] | None`: any JSON object, taken as it is (the same
 * object, so py-object.ts can attach its raw encoding). The keys kourai reads are typed when
 * present; a value of another type under one of them is kept for re-encoding but left out of the
 * typed view (py-object.ts RawObject.hidden).
 */
export const ContextSchema = z.custom<Context>(isJsonObject, {
  error: (iss) => `context must be a JSON object or null, not ${jsonKind(iss.input)}`,
});

/** What a JSON value is, in words (for errors). */
export function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'number') return 'a number';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return typeof v;
}

export const PlayerResponseSchema = z.object({
  kind: enumOf(RESPONSE_KINDS, 'player_response.kind'),
  delta: nullableString('player_response.delta').default(null),
  felt: enumOf(FELT, 'player_response.felt').nullable().default(null),
});

/**
 * One item of a preference list: upstream `dict[str, Any]`, any JSON object, every key kept. The
 * trainer reads the items it understands (format/preference.ts): `text` and a numeric `score`.
 */
export type PreferenceItem = Record<string, unknown>;
export const PreferenceItemSchema = z.custom<PreferenceItem>(isJsonObject, {
  error: (iss) => `must be a JSON object, not ${jsonKind(iss.input)}`,
});

/**
 * A float as a stored line may hold it: pydantic reads NaN and ±Infinity (the JSON tokens, or
 * strings such as "inf") and keeps them; it writes them as null.
 */
const storedFloat = (what: string) =>
  z.custom<number>((v) => typeof v === 'number', {
    error: (iss) => (iss.input === undefined ? `${what} is required` : `${what} must be a number`),
  });

function trainingLabelSchema(float: (what: string) => z.ZodType<number>) {
  return z.object({
    preference_pair: z
      .array(PreferenceItemSchema, { error: 'training_label.preference_pair must be a list of objects or null' })
      .nullable()
      .default(null),
    weight: float('training_label.weight').default(1),
  });
}
export const TrainingLabelSchema = trainingLabelSchema(storedFloat);

export const SplitSchema = z
  .object({
    shared_eligible: z.boolean({ error: 'split.shared_eligible must be true or false' }).default(false),
    private_only: z.boolean({ error: 'split.private_only must be true or false' }).default(false),
  })
  .refine((s) => !(s.shared_eligible && s.private_only), {
    message:
      'split has both shared_eligible and private_only true; an entry is either shareable or private: set one of them to false',
  });

export const InterruptSchema = z.object({
  interrupting_agent: AgentSchema,
  target_agent: AgentSchema,
  target_turn: z.string({ error: 'interrupt.target_turn must be a string (the entry id or scene id interrupted)' }),
  reason_class: enumOf(REASON_CLASSES, 'interrupt.reason_class'),
  visibility: enumOf(VISIBILITIES, 'interrupt.visibility'),
});

export const EpisodeSchema = z.looseObject({});
/** A council_event's details (src/memoir/derive/council-event.ts reads them strictly). */
export const CouncilDetailsSchema = z.looseObject({});

export const RecordedAtSchema = z.iso.datetime({
  offset: true,
  error: 'recorded_at must be an ISO 8601 timestamp with seconds and a zone, e.g. 2026-11-22T10:00:00.000Z',
});

/** The zod schema of each kind of extension field (fields.ts). */
const EXTENSION_KINDS = {
  id: z.string().min(1).max(64),
  timestamp: RecordedAtSchema,
  entry_type: EntryTypeSchema,
  interrupt: InterruptSchema.nullable(),
  ref: z.string().min(1),
  text: z.string(),
  likert: z.number().int().min(1).max(5),
  object: z.looseObject({}),
} satisfies Record<ExtensionKind, z.ZodType>;
type ExtensionShape = {
  [F in (typeof EXTENSION_FIELDS)[number] as F['key']]: z.ZodOptional<(typeof EXTENSION_KINDS)[F['kind']]>;
};
const extensionShape = Object.fromEntries(
  EXTENSION_FIELDS.map((f) => [f.key, EXTENSION_KINDS[f.kind].optional()]),
) as ExtensionShape;

/** The ten keys; `float` reads affinity_delta and weight (any number stored, finite for a new entry). */
const standardShapeOf = (float: (what: string) => z.ZodType<number>) => ({
  scene_id: z.string({
    error: (iss) => (iss.input === undefined ? 'scene_id is required' : 'scene_id must be a string'),
  }),
  agent: AgentSchema,
  source: SourceSchema,
  // upstream's defaults: a line may leave these out
  context: ContextSchema.nullable().default(null),
  narrative_beat: nullableString('narrative_beat').default(null),
  agent_proposed: nullableString('agent_proposed').default(null),
  player_response: PlayerResponseSchema.nullable().default(null),
  affinity_delta: float('affinity_delta').default(0),
  training_label: trainingLabelSchema(float).nullable().default(null),
  // no split: no claim to be shared (upstream decides by its lenient rule; kourai never widens)
  split: SplitSchema.default({ shared_eligible: false, private_only: false }),
});

function interruptConsistency(e: { entry_type?: string | undefined; interrupt?: unknown }, ctx: z.RefinementCtx): void {
  if (e.interrupt && e.entry_type !== undefined && e.entry_type !== 'interrupt') {
    ctx.addIssue({
      code: 'custom',
      path: ['interrupt'],
      message: `interrupt is set but entry_type is "${e.entry_type}"; interrupt details belong to entry_type "interrupt"`,
    });
  }
}

/** A stored line (written by kourai or by a Python host). */
export const MemoirLineSchema = z
  .looseObject({ ...standardShapeOf(storedFloat), ...extensionShape })
  .superRefine(interruptConsistency);

/** A new entry given to `append`: upstream defaults; `split` omitted means "decide by the rule" (append decides it). */
export const MemoirInputSchema = z
  .strictObject(
    {
      ...standardShapeOf(finiteFloat),
      split: SplitSchema.optional(),
      ...extensionShape,
    },
    {
      error: (iss) =>
        iss.code === 'unrecognized_keys'
          ? `unknown key${iss.keys.length > 1 ? 's' : ''} ${iss.keys.map((k) => `"${k}"`).join(', ')} (not a memoir field)`
          : undefined,
    },
  )
  .superRefine(interruptConsistency);

export type MemoirLine = z.infer<typeof MemoirLineSchema>;
export type MemoirInput = z.input<typeof MemoirInputSchema>;
export type PlayerResponse = z.infer<typeof PlayerResponseSchema>;
export type TrainingLabel = z.infer<typeof TrainingLabelSchema>;
export type Interrupt = z.infer<typeof InterruptSchema>;
export type Split = z.infer<typeof SplitSchema>;

/**
 * A fully-formed entry as kourai writes it: the ten keys, then an id, a timestamp and a type.
 * `entry_id` is always set on entries kourai handles; for Python lines it is derived.
 */
export type MemoirEntry = MemoirLine & { entry_id: string };

/** Formats the first zod issue as `field: message` (one line, no stack). */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid entry';
  const path = issue.path
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');
  const msg = issue.message;
  if (!path || msg.startsWith(path.split('[')[0] ?? '\u0000')) return msg;
  return `${path}: ${msg}`;
}
