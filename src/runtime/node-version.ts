import { createRequire } from 'node:module';

/**
 * The oldest Node kourai runs on, read from package.json's `engines.node` (">=MAJOR.MINOR[.PATCH]")
 * so that `kourai doctor` and npm say the same. 20.19: the built CLI loads zod's schema lazily by
 * `require` of an ES module, unflagged from Node 20.19 on.
 */
export function minimumNode(): [number, number, number] {
  const pkg = createRequire(import.meta.url)('../../package.json') as { engines?: { node?: string } };
  const m = /^>=\s*(\d+)\.(\d+)(?:\.(\d+))?$/.exec(pkg.engines?.node ?? '');
  if (!m) throw new Error(`package.json engines.node is not ">=MAJOR.MINOR": ${JSON.stringify(pkg.engines?.node)}`);
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

/** Whether a Node version (process.versions.node) is at least the minimum, as doctor reports it. */
export function checkNode(version: string): { ok: boolean; detail: string; fix: string | null } {
  const min = minimumNode();
  const have = version.split('.').map(Number);
  let cmp = 0;
  for (let i = 0; i < 3 && cmp === 0; i++) cmp = Math.sign((have[i] ?? 0) - min[i]!);
  const shown = min[2] === 0 ? `${min[0]}.${min[1]}` : min.join('.');
  return { ok: cmp >= 0, detail: `Node ${version}`, fix: cmp >= 0 ? null : `install Node ${shown} or newer` };
}
