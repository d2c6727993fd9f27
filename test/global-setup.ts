import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopPostgres } from './helpers/postgres.js';

/**
 * Every temporary directory a test makes (mkdtemp under os.tmpdir()) lands in one directory per
 * run, removed at the end, so a suite that forgets to clean up leaves nothing behind. The
 * PostgreSQL cluster a test file may have started in it (helpers/postgres.ts) is stopped first.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'kourai-tests-'));
  process.env.TMPDIR = root;
  return () => {
    stopPostgres(root);
    rmSync(root, { recursive: true, force: true });
  };
}
