import { join } from 'node:path';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { NotFoundError, UsageError } from '../../errors.js';
import { isBondOnly, type Agent } from '../../memoir/format/agents.js';
import { AgentSchema } from '../../memoir/format/schema.js';
import { AdapterRegistry, type AdapterKind, type AdapterRow } from '../../store/adapter-registry.js';
import type { DB } from '../../store/db.js';
import { openStateDb, openStateDbReadOnly } from '../../store/state-db.js';
import { readAdapterDir, type LoadedAdapter } from '../../train/adapter-files.js';
import { learnConfig } from '../../train/learn-config.js';
import { configuredBaseOffline } from '../../train/configured-base.js';

export const agentArg = AgentSchema;
export const kindOpt = z.enum(['bond', 'council'], { error: 'must be bond or council' }).default('bond');
export const versionOpt = z.coerce
  .number({ error: 'must be a version number' })
  .int()
  .min(1, { error: 'must be a version number ≥ 1' });

/** Cupid and Puck have no council adapter: asking for one is a usage error (exit 2). */
export function checkKind(agent: Agent, kind: AdapterKind): void {
  if (kind === 'council' && isBondOnly(agent))
    throw new UsageError(`${agent} has no council adapter: Cupid and Puck are bond-only`, 'use --kind bond');
}

export interface Registry {
  home: string;
  db: DB;
  registry: AdapterRegistry;
  /** The configured base, when it is known without contacting an embeddings endpoint. */
  base: { spec: unknown; fingerprint: string } | null;
  close(): void;
}

/** The adapter registry; `write` for commands that change it (a read-only home is exit 3 for them only). */
export function openRegistry(ctx: Ctx, mode: 'read' | 'write' = 'read'): Registry {
  const home = kouraiHome(ctx);
  const base = configuredBaseOffline(learnConfig(home, ctx.env).encoder, home);
  const db = mode === 'write' ? openStateDb(home) : openStateDbReadOnly(home);
  return { home, db, registry: new AdapterRegistry(db), base, close: () => db.close() };
}

/** A registered version: the given one, or the current one. NotFound (exit 6) names what is missing. */
export function pickVersion(r: Registry, agent: Agent, kind: AdapterKind, version: number | undefined): AdapterRow {
  checkKind(agent, kind);
  if (version === undefined) {
    const row = r.registry.current(agent, kind);
    if (!row)
      throw new NotFoundError(
        `no ${kind} adapter for ${agent} yet`,
        kind === 'bond'
          ? `train one: kourai train bond --agent ${agent}`
          : 'council adapters arrive with a federation round',
      );
    return row;
  }
  const row = r.registry.get(agent, kind, version);
  if (!row)
    throw new NotFoundError(
      `${agent} has no ${kind} adapter v${version}`,
      `see \`kourai adapters list --agent ${agent}\``,
    );
  return row;
}

/**
 * Reads a version and checks it whole against its own record (file digest, layout) and its own
 * base. Whether that base is the configured one is reported separately (`sameBase`).
 */
export function loadChecked(r: Registry, row: AdapterRow): LoadedAdapter {
  const dir = join(r.home, row.path);
  if (row.prunedAt)
    throw new NotFoundError(
      `${row.agent} ${row.kind} adapter v${row.version} was pruned on ${row.prunedAt.slice(0, 10)}`,
    );
  return readAdapterDir(dir, {
    agent: row.agent as Agent,
    kind: row.kind,
    version: row.version,
    spec: 'own',
    fingerprint: row.baseFingerprint,
    fileSha256: row.fileSha256,
  });
}

export function sameBase(r: Registry, row: AdapterRow): boolean | null {
  return r.base ? r.base.fingerprint === row.baseFingerprint : null;
}

export function shortFp(fp: string): string {
  return fp.replace(/^sha256:/, '').slice(0, 12);
}
