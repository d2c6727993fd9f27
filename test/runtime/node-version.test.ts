import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkNode, minimumNode } from '../../src/runtime/node-version.js';

/**
 * The built CLI loads zod's schema lazily by `require` of an ES module, unflagged from Node 20.19 on:
 * package.json says so, and `kourai doctor` checks the running Node against package.json (one source).
 */
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  engines: { node: string };
};

describe('the Node kourai needs', () => {
  it('package.json and its lock file ask for Node ≥ 20.19', () => {
    expect(pkg.engines.node).toBe('>=20.19');
    const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
      packages: Record<string, { engines?: { node: string } }>;
    };
    expect(lock.packages['']?.engines?.node).toBe('>=20.19');
    expect(minimumNode()).toEqual([20, 19, 0]);
  });

  it('doctor’s check: below 20.19 fails and names the version to install; 20.19 and later pass', () => {
    for (const v of ['18.20.4', '20.11.1', '20.18.3']) {
      expect(checkNode(v)).toEqual({ ok: false, detail: `Node ${v}`, fix: 'install Node 20.19 or newer' });
    }
    for (const v of ['20.19.0', '20.20.2', '22.1.0', '24.0.0'])
      expect(checkNode(v)).toEqual({ ok: true, detail: `Node ${v}`, fix: null });
  });
});
