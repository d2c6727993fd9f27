import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { convertCodeRefinement } from './code-refinement.js';
import { convertHhRlhf, type Converted } from './hh-rlhf.js';

/**
 * Where the public datasets are on this machine: `KOURAI_DATASETS` names a directory holding
 * checkouts (or exports) of the repositories, under their names:
 *   $KOURAI_DATASETS/hh-rlhf/{helpful-base,harmless-base}/test.jsonl.gz        github:anthropics/hh-rlhf
 *   $KOURAI_DATASETS/CodeXGLUE/Code-Code/code-refinement/data/small/test.buggy-fixed.{buggy,fixed}
 *                                                                             github:microsoft/CodeXGLUE
 * Nothing is downloaded and nothing is committed: a dataset not there is reported as missing,
 * with the path looked at, and the caller skips it loudly.
 */
export interface LocalDataset {
  name: string;
  kind: string;
  /** The agent whose adapter the memoir trains. */
  agent: 'metis' | 'techne';
  convert(opts?: { limit?: number }): Converted;
}

export type Found = { status: 'found'; dataset: LocalDataset } | { status: 'missing'; name: string; reason: string };

const LFS = 'version https://git-lfs';

function isPointer(path: string): boolean {
  return readFileSync(path).subarray(0, LFS.length).toString('latin1') === LFS;
}

function hh(root: string): Found {
  const tried: string[] = [];
  for (const subset of ['helpful-base', 'harmless-base']) {
    const path = join(root, 'hh-rlhf', subset, 'test.jsonl.gz');
    tried.push(path);
    if (!existsSync(path) || isPointer(path)) continue;
    return {
      status: 'found',
      dataset: {
        name: `hh-rlhf/${subset}`,
        kind: 'dialogue answers, a person chose one of two',
        agent: 'metis',
        convert: (o = {}) => convertHhRlhf(readFileSync(path), path, { split: 'test', ...o }),
      },
    };
  }
  return {
    status: 'missing',
    name: 'hh-rlhf',
    reason: `no data file (or only Git LFS pointers) at ${tried.join(' or ')}`,
  };
}

function codeRefinement(root: string): Found {
  const base = join(root, 'CodeXGLUE', 'Code-Code', 'code-refinement', 'data', 'small', 'test.buggy-fixed');
  const buggy = `${base}.buggy`;
  const fixed = `${base}.fixed`;
  if (!existsSync(buggy) || !existsSync(fixed))
    return { status: 'missing', name: 'codexglue-refinement', reason: `no ${buggy} and ${fixed}` };
  return {
    status: 'found',
    dataset: {
      name: 'codexglue-refinement/small',
      kind: 'Java methods, a developer revised the buggy one',
      agent: 'techne',
      convert: (o = {}) =>
        convertCodeRefinement(
          { bytes: readFileSync(buggy), path: buggy },
          { bytes: readFileSync(fixed), path: fixed },
          { split: 'test', ...o },
        ),
    },
  };
}

export function localDatasets(env: Readonly<Record<string, string | undefined>>): Found[] {
  const root = env['KOURAI_DATASETS'];
  if (!root)
    return [
      { status: 'missing', name: 'hh-rlhf', reason: 'KOURAI_DATASETS is not set' },
      { status: 'missing', name: 'codexglue-refinement', reason: 'KOURAI_DATASETS is not set' },
    ];
  return [hh(root), codeRefinement(root)];
}
