import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Where a worker thread's script is: beside the importing module when it runs built (`dist/`);
 * when it runs from the TypeScript sources (vitest), the compiled copy under `dist/` (so tests of
 * worker paths need `npm run build` first). `from` is the caller's `import.meta.url`, `dir` its
 * directory under src/ (e.g. 'memoir-index' or 'memoir/verify'), `file` the worker's built name.
 */
export function workerUrl(from: string, dir: string, file: string): URL {
  const built = new URL(`./${file}`, from);
  if (existsSync(fileURLToPath(built))) return built;
  return new URL(`${'../'.repeat(dir.split('/').length + 1)}dist/${dir}/${file}`, from);
}

/** Whether that worker script exists (built); otherwise callers do the work on the main thread. */
export function workerBuilt(url: URL): boolean {
  return existsSync(fileURLToPath(url));
}
