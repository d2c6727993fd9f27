import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '../protocol/wire.js';

/** A precise refusal: HTTP status, a stable machine code, a one-line message, optional details. */
export class CouncilHttpError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'CouncilHttpError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = details;
  }

  body(): ErrorBody {
    return {
      error: {
        status: this.status,
        code: this.code,
        message: this.message,
        ...(this.details ? { details: this.details } : {}),
      },
    };
  }
}
