import { ExitCode, KouraiError } from '../errors.js';

/** A tensor, its encoding or a tensor file is malformed (exit 5, invalid data). */
export class TensorError extends KouraiError {
  constructor(message: string, opts: { code?: string; hint?: string } = {}) {
    super(message, {
      exitCode: ExitCode.invalidData,
      code: opts.code ?? 'invalid_tensor',
      ...(opts.hint ? { hint: opts.hint } : {}),
    });
  }
}

/** A safetensors file is truncated, corrupt or uses what kourai does not read (exit 5). */
export class SafetensorsError extends TensorError {
  constructor(message: string, hint?: string) {
    super(message, { code: 'invalid_safetensors', ...(hint ? { hint } : {}) });
  }
}
