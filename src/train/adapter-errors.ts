import { ExitCode, KouraiError } from '../errors.js';

/** A stored adapter is truncated, corrupt or not what the registry says it is (exit 8). */
export class AdapterCorruptError extends KouraiError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.integrity, code: 'adapter_corrupt', ...(hint ? { hint } : {}) });
  }
}

/** An adapter was trained over another base than the one configured now (exit 3): never mixed. */
export class BaseMismatchError extends KouraiError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.environment, code: 'base_mismatch', ...(hint ? { hint } : {}) });
  }
}
