import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Every temporary directory a test makes (mkdtemp under os.tmpdir()) lands in one directory per
 * run, removed at the end, so a suite that forgets to clean up leaves nothing behind.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'kourai-tests-'));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
