import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import verify, { indexFileOf } from '../../../src/commands/memoir/verify.js';
import { synthSessions } from '../../../src/memoir/sample/synth.js';
import { indexPath } from '../../../src/memoir-index/memoir-index.js';
import { testCtx } from '../../helpers/ctx.js';

/** verify in a home that never built an index reads the memoir alone: no index is created. */
describe('memoir verify without an index', () => {
  it('names the index file where the store keeps it', () => {
    expect(indexFileOf('/some/home')).toBe(indexPath('/some/home'));
  });

  it('verifies and leaves the home without an index', async () => {
    const ctx = testCtx();
    try {
      const lines: string[] = [];
      for (const s of synthSessions({ seed: 5, sessions: 3, turns: 4 })) {
        lines.push(...s.lines);
        if (lines.length >= 40) break;
      }
      const file = join(ctx.home, 'memoir.jsonl');
      writeFileSync(file, `${lines.join('\n')}\n`);
      const r = await verify.run({ memoir: [file], json: true }, ctx);
      expect(r.ok).toBe(true);
      expect(r.entries).toBe(lines.length);
      expect(existsSync(indexPath(ctx.home))).toBe(false);
    } finally {
      ctx.cleanup();
    }
  });
});
