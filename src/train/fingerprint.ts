import type { BaseModel } from './base-model.js';
import { builtinBaseSpec, canonicalSpec } from './base-spec.js';

/**
 * The built-in base's fingerprint: sha256 over its canonical specification and all of its
 * 4.2M frozen weights (and the structure columns). Published here so that a process scoring ten candidates need not generate
 * every weight to know which base it runs; test/train/base.test.ts regenerates it from the
 * specification and fails if the two ever differ.
 */
export const BUILTIN_FINGERPRINT = 'sha256:ffac9b5ac585620c119985be313c92f1b978ea83cd711ceb241cd4900b5d50e5';

const builtinCanonical = canonicalSpec(builtinBaseSpec());

/** The fingerprint of a base: the published one for the built-in base, computed for any other. */
export function fingerprintOf(base: BaseModel): string {
  return canonicalSpec(base.spec) === builtinCanonical ? BUILTIN_FINGERPRINT : base.computeFingerprint();
}
