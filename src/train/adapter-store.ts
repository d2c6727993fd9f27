import { join } from 'node:path';
import type { Agent } from '../memoir/format/agents.js';
import { AdapterRegistry, type AdapterKind, type AdapterRow } from '../store/adapter-registry.js';
import type { DB } from '../store/db.js';
import {
  adapterConfig,
  readAdapterDir,
  versionsOnDisk,
  writeAdapterVersion,
  type LoadedAdapter,
} from './adapter-files.js';
import type { BaseSpec } from './base-spec.js';
import type { LoraWeights } from './lora.js';

/**
 * Adapter versions: files (adapter-files.ts) and the registry (kourai.db) together. A new
 * version's directory is complete on disk before its row is committed, and the row and the
 * "current" pointer change in one transaction — so the current version is always a whole one,
 * and a run that stops before the commit leaves the previous version current.
 */
export interface RunningBase {
  spec: BaseSpec;
  fingerprint: string;
}

export interface NewVersion {
  agent: Agent;
  kind: AdapterKind;
  lora: LoraWeights;
  alpha: number;
  origin: 'trained' | 'federation' | 'imported';
  metrics: unknown;
  dataWindow: unknown;
  createdAt: string;
}

export class AdapterStore {
  readonly registry: AdapterRegistry;

  constructor(
    readonly home: string,
    db: DB,
    readonly base: RunningBase,
  ) {
    this.registry = new AdapterRegistry(db);
  }

  /** Writes the next version (after every registered one and every directory on disk) and makes it current. */
  save(v: NewVersion): AdapterRow {
    const version =
      Math.max(this.registry.maxVersion(v.agent, v.kind), ...versionsOnDisk(this.home, v.agent, v.kind), 0) + 1;
    const parent = this.registry.current(v.agent, v.kind);
    const config = adapterConfig({
      spec: this.base.spec,
      fingerprint: this.base.fingerprint,
      agent: v.agent,
      kind: v.kind,
      version,
      rank: v.lora.rank,
      alpha: v.alpha,
      createdAt: v.createdAt,
    });
    const written = writeAdapterVersion(this.home, config, v.lora);
    this.registry.add({
      agent: v.agent,
      kind: v.kind,
      version,
      path: written.path,
      baseFingerprint: this.base.fingerprint,
      rank: v.lora.rank,
      alpha: v.alpha,
      parentVersion: parent?.version ?? null,
      fileSha256: written.fileSha256,
      origin: v.origin,
      metrics: v.metrics,
      dataWindow: v.dataWindow,
      createdAt: v.createdAt,
    });
    return this.registry.get(v.agent, v.kind, version) as AdapterRow;
  }

  /** Reads a registered version and checks it whole (see readAdapterDir). */
  load(row: AdapterRow): LoadedAdapter {
    return readAdapterDir(join(this.home, row.path), {
      agent: row.agent as Agent,
      kind: row.kind,
      version: row.version,
      spec: this.base.spec,
      fingerprint: this.base.fingerprint,
      fileSha256: row.fileSha256,
    });
  }

  /** The current version of (agent, kind), read and checked; null when there is none. */
  loadCurrent(agent: Agent, kind: AdapterKind): (LoadedAdapter & { row: AdapterRow }) | null {
    const row = this.registry.current(agent, kind);
    return row ? { ...this.load(row), row } : null;
  }
}
