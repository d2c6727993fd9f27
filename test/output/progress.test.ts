import { describe, expect, it } from 'vitest';
import { progress } from '../../src/output/progress.js';
import { capture } from '../helpers/ctx.js';

describe('progress on stderr (not a TTY: a plain line per interval)', () => {
  it('shows counts, the rate and the ETA; a slow rate keeps its decimals instead of reading 0/s', () => {
    let t = 0;
    const err = capture(false);
    const bar = progress(err, { label: 'simulate', total: 100, unit: 'forge-rounds', now: () => t, intervalMs: 1000 });
    t = 40_000;
    bar.update(10);
    expect(err.text).toBe('simulate 10% 10 forge-rounds/100 forge-rounds 0.25 forge-rounds/s eta 360s\n');
    t = 40_500;
    bar.update(11);
    expect(err.chunks).toHaveLength(1);
  });
});
