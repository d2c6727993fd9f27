import { InvalidDataError } from '../../errors.js';
import type { Converted } from './hh-rlhf.js';
import { pyLine } from './python-line.js';
import { chosenFirst } from './seeded-order.js';

/**
 * CodeXGLUE code refinement (github:microsoft/CodeXGLUE, Code-Code/code-refinement; data from
 * Tufano et al., bug fixes developers committed, identifiers abstracted): two line-aligned files,
 * `<split>.buggy-fixed.buggy` and `<split>.buggy-fixed.fixed`, one Java method per line. One scene
 * per line: Techne proposed the buggy method, the developer revised it into the fixed one (a
 * `modified` response whose delta is the revision); the pair lists both in a fixed coin order.
 * Context is the minimal {"task_type": "code"}. Identical lines are skipped and counted.
 */
function fail(path: string, what: string): InvalidDataError {
  return new InvalidDataError(
    `${path}: ${what}`,
    'expected CodeXGLUE code-refinement files (<split>.buggy-fixed.buggy and .fixed, one method per line)',
  );
}

function methodLines(bytes: Buffer, path: string): string[] {
  const head = bytes.subarray(0, 64).toString('latin1');
  if (head.startsWith('version https://git-lfs')) throw fail(path, 'is a Git LFS pointer, not the data');
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) throw fail(path, 'is gzip-compressed (expected plain text)');
  const text = bytes.toString('utf8');
  if (text.includes('\u0000')) throw fail(path, 'is binary, not text');
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const bad = lines.findIndex((l) => !/[{}();]/.test(l));
  if (bad >= 0) throw fail(`${path} line ${bad + 1}`, 'is not a method (no braces, parentheses or semicolons)');
  return lines.map((l) => l.trim());
}

export function convertCodeRefinement(
  buggy: { bytes: Buffer; path: string },
  fixed: { bytes: Buffer; path: string },
  opts: { split?: string; limit?: number } = {},
): Converted {
  const b = methodLines(buggy.bytes, buggy.path);
  const f = methodLines(fixed.bytes, fixed.path);
  if (b.length !== f.length)
    throw fail(fixed.path, `has ${f.length} lines, ${buggy.path} has ${b.length}: the files are not line-aligned`);
  if (b.length === 0) throw fail(buggy.path, 'holds no lines');
  const split = opts.split ?? 'test';
  const lines: string[] = [];
  let pairs = 0;
  let skipped = 0;
  for (let n = 0; n < b.length; n++) {
    if (opts.limit !== undefined && pairs >= opts.limit) break;
    const proposed = b[n] as string;
    const revised = f[n] as string;
    if (proposed === revised || proposed === '' || revised === '') {
      skipped++;
      continue;
    }
    const scene = `refine-${split}-${String(n + 1).padStart(5, '0')}`;
    const pair: { text: string; score: 0 | 1 }[] = chosenFirst(scene)
      ? [
          { text: revised, score: 1 },
          { text: proposed, score: 0 },
        ]
      : [
          { text: proposed, score: 0 },
          { text: revised, score: 1 },
        ];
    lines.push(
      pyLine({
        scene_id: scene,
        agent: 'techne',
        source: 'specialist_proposed',
        context: { task_type: 'code' },
        agent_proposed: proposed,
        player_response: { kind: 'modified', delta: revised, felt: null },
        training_label: { preference_pair: pair, weight: 1 },
      }),
    );
    pairs++;
  }
  return { lines, pairs, skipped };
}
