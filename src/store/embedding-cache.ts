import { join } from 'node:path';
import { IntegrityError } from '../errors.js';
import { openDb, type DB } from './db.js';

/**
 * Embeddings from an OpenAI-compatible endpoint, cached by (model, sha256 of the text), so
 * retraining never embeds a text twice. A cache: `$KOURAI_HOME/cache/embeddings.db` can be
 * deleted at any time (texts are embedded again). Vectors are stored as float32 little-endian.
 */
const MIGRATIONS = [
  {
    version: 1,
    up: `
      CREATE TABLE embeddings (
        model TEXT NOT NULL,
        text_sha256 TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (model, text_sha256)
      ) WITHOUT ROWID;
    `,
  },
];

export function embeddingCachePath(home: string): string {
  return join(home, 'cache', 'embeddings.db');
}

export class EmbeddingCache {
  private readonly db: DB;
  private readonly getStmt;
  private readonly putStmt;
  private readonly dimStmt;

  constructor(path: string) {
    try {
      this.db = openDb(path, MIGRATIONS);
    } catch (err) {
      if (err instanceof IntegrityError)
        throw new IntegrityError(
          `the embeddings cache ${path} is unreadable`,
          'it is only a cache: delete it and the texts are embedded again',
        );
      throw err;
    }
    this.getStmt = this.db.prepare<[string, string], { dim: number; vector: Buffer }>(
      'SELECT dim, vector FROM embeddings WHERE model = ? AND text_sha256 = ?',
    );
    this.putStmt = this.db.prepare(
      'INSERT OR REPLACE INTO embeddings (model, text_sha256, dim, vector) VALUES (?, ?, ?, ?)',
    );
    this.dimStmt = this.db.prepare<[string], { dim: number }>('SELECT dim FROM embeddings WHERE model = ? LIMIT 1');
  }

  get(model: string, sha: string): Float32Array | null {
    const r = this.getStmt.get(model, sha);
    if (!r) return null;
    if (r.vector.byteLength !== r.dim * 4) return null; // a damaged row is embedded again
    const out = new Float32Array(r.dim);
    new Uint8Array(out.buffer).set(r.vector);
    return out;
  }

  putMany(model: string, rows: readonly { sha: string; vector: Float32Array }[]): void {
    this.db.transaction(() => {
      for (const r of rows)
        this.putStmt.run(
          model,
          r.sha,
          r.vector.length,
          Buffer.from(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength),
        );
    })();
  }

  /** The dimension of a model's cached embeddings, if any were cached. */
  dimension(model: string): number | null {
    return this.dimStmt.get(model)?.dim ?? null;
  }

  close(): void {
    this.db.close();
  }
}
