import { gunzipSync } from 'node:zlib';
import { InvalidDataError } from '../../errors.js';
import { pyLine } from './python-line.js';
import { chosenFirst } from './seeded-order.js';

/**
 * Anthropic's hh-rlhf (github:anthropics/hh-rlhf, MIT): lines {"chosen", "rejected"}, each a whole
 * dialogue "\n\nHuman: … \n\nAssistant: …" whose last assistant turn differs. One scene per line:
 * the dialogue before the last assistant turn as the task description (the prompt), and Metis's
 * proposal = one of the two answers (a fixed coin per line), accepted when it was the one the
 * person chose, rejected otherwise; the preference pair holds both, in the same coin order.
 * Context is the minimal {"task_type": "qa"}. Lines whose dialogues differ before the last turn
 * are skipped and counted.
 */
export interface Converted {
  lines: string[];
  pairs: number;
  skipped: number;
}

const LAST_TURN = '\n\nAssistant:';

function fail(path: string, what: string): InvalidDataError {
  return new InvalidDataError(
    `${path}: ${what}`,
    'expected an hh-rlhf split file (test.jsonl.gz or train.jsonl.gz from github:anthropics/hh-rlhf)',
  );
}

/** The text of a split file: gzip or plain JSON lines; refuses an LFS pointer or anything else. */
export function hhText(bytes: Buffer, path: string): string {
  if (bytes.subarray(0, 24).toString('latin1').startsWith('version https://git-lfs'))
    throw fail(path, 'is a Git LFS pointer, not the data');
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      return gunzipSync(bytes).toString('utf8');
    } catch {
      throw fail(path, 'is a damaged gzip file');
    }
  }
  return bytes.toString('utf8');
}

export function convertHhRlhf(bytes: Buffer, path: string, opts: { split?: string; limit?: number } = {}): Converted {
  const text = hhText(bytes, path);
  const split = opts.split ?? 'test';
  const lines: string[] = [];
  let pairs = 0;
  let skipped = 0;
  const rows = text.split('\n');
  for (let n = 0; n < rows.length; n++) {
    const raw = (rows[n] as string).trim();
    if (raw === '') continue;
    if (opts.limit !== undefined && pairs >= opts.limit) break;
    let doc: unknown;
    try {
      doc = JSON.parse(raw);
    } catch {
      throw fail(`${path} line ${n + 1}`, 'is not JSON');
    }
    const { chosen, rejected } = (doc ?? {}) as { chosen?: unknown; rejected?: unknown };
    if (typeof chosen !== 'string' || typeof rejected !== 'string')
      throw fail(`${path} line ${n + 1}`, 'has no "chosen" and "rejected" strings');
    const ci = chosen.lastIndexOf(LAST_TURN);
    const ri = rejected.lastIndexOf(LAST_TURN);
    if (ci < 0 || ri < 0) throw fail(`${path} line ${n + 1}`, 'holds no "Assistant:" turn');
    const prompt = chosen.slice(0, ci).trim();
    const a = chosen.slice(ci + LAST_TURN.length).trim();
    const b = rejected.slice(ri + LAST_TURN.length).trim();
    if (prompt !== rejected.slice(0, ri).trim() || a === '' || b === '' || a === b) {
      skipped++;
      continue;
    }
    const scene = `hh-${split}-${String(n + 1).padStart(5, '0')}`;
    const context = { task_type: 'qa' };
    const first = chosenFirst(scene);
    const proposal = first ? a : b;
    lines.push(
      pyLine({ scene_id: scene, agent: 'hephaestus', source: 'task_description', context, agent_proposed: prompt }),
    );
    lines.push(
      pyLine({
        scene_id: scene,
        agent: 'metis',
        source: 'specialist_proposed',
        context,
        agent_proposed: proposal,
        player_response: { kind: first ? 'accepted' : 'rejected', delta: null, felt: null },
        training_label: {
          preference_pair: first
            ? [
                { text: a, score: 1 },
                { text: b, score: 0 },
              ]
            : [
                { text: b, score: 0 },
                { text: a, score: 1 },
              ],
          weight: 1,
        },
      }),
    );
    pairs++;
  }
  if (pairs === 0 && skipped === 0) throw fail(path, 'holds no lines');
  return { lines, pairs, skipped };
}
