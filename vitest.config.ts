import { defineConfig } from 'vitest/config';
import SkipsAndProofs from './test/reporters/skips-and-proofs.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    setupFiles: ['test/setup.ts'],
    globalSetup: ['test/global-setup.ts'],
    // after the usual report: what was skipped and why, and which proofs ran
    reporters: ['default', new SkipsAndProofs()],
  },
});
