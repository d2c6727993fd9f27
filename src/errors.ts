/**
 * Every error a user can act on, and the exit-code table (documented in README.md).
 * Changing a code here is a breaking change: say so in CHANGELOG.md.
 */
export const ExitCode = {
  ok: 0,
  /** A check found problems (verify), or an operation failed for a reason described. */
  failure: 1,
  /** Bad flags or arguments; a prompt that cannot be shown in a non-interactive session. */
  usage: 2,
  /** Environment or configuration: paths, permissions, missing tools, bad config file. */
  environment: 3,
  /** The privacy budget (Whisper Limit) would be exceeded. */
  budgetExhausted: 4,
  /** Input data failed validation (a memoir entry, a tensor, a ledger line). */
  invalidData: 5,
  /** A named thing does not exist: entry id, scene, agent in this memoir, forge, round. */
  notFound: 6,
  /** Someone else holds the lock, or the request conflicts with what is already stored. */
  conflict: 7,
  /** A file changed in a way that is not an append, or stored state is corrupt. */
  integrity: 8,
  /** The council server could not be reached or answered with an error. */
  network: 9,
  /** Cancelled by the user (Ctrl-C, Escape on a prompt that must be answered). */
  cancelled: 130,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export class KouraiError extends Error {
  readonly exitCode: ExitCodeValue;
  readonly hint: string | undefined;
  /** A stable machine-readable code for `--json` error documents. */
  readonly code: string;

  constructor(message: string, opts: { exitCode?: ExitCodeValue; hint?: string; code?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.exitCode = opts.exitCode ?? ExitCode.failure;
    this.hint = opts.hint;
    this.code = opts.code ?? 'failure';
  }
}

export class UsageError extends KouraiError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.usage, code: 'usage', ...(hint ? { hint } : {}) });
  }
}

export class EnvironmentError extends KouraiError {
  constructor(message: string, hint?: string, cause?: unknown) {
    super(message, { exitCode: ExitCode.environment, code: 'environment', hint, cause });
  }
}

export class InvalidDataError extends KouraiError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.invalidData, code: 'invalid_data', ...(hint ? { hint } : {}) });
  }
}

export class NotFoundError extends KouraiError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.notFound, code: 'not_found', ...(hint ? { hint } : {}) });
  }
}

export class ConflictError extends KouraiError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.conflict, code: 'conflict', ...(hint ? { hint } : {}) });
  }
}

export class IntegrityError extends KouraiError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.integrity, code: 'integrity', ...(hint ? { hint } : {}) });
  }
}

export class BudgetExhaustedError extends KouraiError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.budgetExhausted, code: 'budget_exhausted', ...(hint ? { hint } : {}) });
  }
}

export class NetworkError extends KouraiError {
  constructor(message: string, hint?: string, cause?: unknown) {
    super(message, { exitCode: ExitCode.network, code: 'network', hint, cause });
  }
}

export class CancelledError extends KouraiError {
  constructor(message = 'cancelled') {
    super(message, { exitCode: ExitCode.cancelled, code: 'cancelled' });
  }
}

/** Maps a Node filesystem error to a one-line, actionable KouraiError. */
export function fsError(err: unknown, what: string, path: string): KouraiError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return new NotFoundError(`${what} not found: ${path}`);
    case 'EACCES':
    case 'EPERM':
      return new EnvironmentError(
        `${what} is not accessible (permission denied): ${path}`,
        'check the permissions of the file and its directory',
        err,
      );
    case 'EROFS':
      return new EnvironmentError(`${what} is on a read-only filesystem: ${path}`, undefined, err);
    case 'ENOSPC':
      return new EnvironmentError(`no space left on device while writing ${what}: ${path}`, undefined, err);
    case 'EISDIR':
      return new EnvironmentError(`${what} is a directory, expected a file: ${path}`);
    case 'ENOTDIR':
      return new EnvironmentError(`${what}: a component of the path is not a directory: ${path}`);
    default:
      return new EnvironmentError(
        `${what}: ${(err as Error | undefined)?.message ?? String(err)} (${path})`,
        undefined,
        err,
      );
  }
}
