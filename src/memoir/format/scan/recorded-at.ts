/**
 * The `recorded_at` rule as a plain regular expression: exactly the pattern zod builds for
 * `z.iso.datetime({ offset: true })` (RecordedAtSchema in ../schema.ts; a test holds the two
 * identical). Kept here so the hot read paths check timestamps without going through zod.
 */
export const RECORDED_AT_RE =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$/;

export function isRecordedAt(v: unknown): boolean {
  return typeof v === 'string' && RECORDED_AT_RE.test(v);
}
