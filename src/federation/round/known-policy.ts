/**
 * The council's privacy policy as this forge last saw it (S and σ of a round's status), kept in
 * `$KOURAI_HOME/federation/council-policy.json` so that commands which do not ask the council —
 * `kourai whisper` — can price the next release at the σ the council will charge, and say from
 * which round it is. Written by `federate join` and by each `federate round` that reaches the
 * plan (not by dry runs or reading commands); forgotten by `federate leave`. Local knowledge only:
 * the council may publish another policy next round, which `whisper --next-round` asks for.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { fsError } from '../../errors.js';
import { readPrivateFile, writePrivateFile } from '../../runtime/private-file.js';

export const KNOWN_POLICY_FORMAT = 'kourai.council-policy/1';

const KnownPolicySchema = z
  .object({
    format: z.literal(KNOWN_POLICY_FORMAT),
    /** Which council (membership council_key): a policy of another council is never used. */
    council_key: z.string(),
    round: z.number().int(),
    clip_norm: z.number().positive(),
    noise_multiplier: z.number().min(0),
    seen_at: z.string(),
  })
  .strict();
export type KnownPolicy = z.infer<typeof KnownPolicySchema>;

export function knownPolicyPath(home: string): string {
  return join(home, 'federation', 'council-policy.json');
}

/** The last policy seen from this council, or null (none recorded, another council's, or unreadable: it is only a hint). */
export function readKnownPolicy(home: string, councilKey: string): KnownPolicy | null {
  let bytes: Buffer | null;
  try {
    bytes = readPrivateFile(knownPolicyPath(home), 'the council policy file');
  } catch {
    return null;
  }
  if (bytes === null) return null;
  try {
    const p = KnownPolicySchema.parse(JSON.parse(bytes.toString('utf8')));
    return p.council_key === councilKey ? p : null;
  } catch {
    return null;
  }
}

export function writeKnownPolicy(home: string, p: Omit<KnownPolicy, 'format'>): void {
  writePrivateFile(
    knownPolicyPath(home),
    `${JSON.stringify({ format: KNOWN_POLICY_FORMAT, ...p })}\n`,
    'the council policy file',
    { overwrite: true },
  );
}

export function forgetKnownPolicy(home: string): void {
  const path = knownPolicyPath(home);
  try {
    rmSync(path, { force: true });
  } catch (err) {
    throw fsError(err, 'the council policy file', path);
  }
}
