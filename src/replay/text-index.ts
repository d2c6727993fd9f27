/**
 * What the replay screen needs to search a memoir whose full-text index a bulk load left unbuilt
 * (store/fts-build.ts): the command hands the screen a builder; the screen's input hook runs it on
 * the first text query, shows its progress, and aborts it on Esc or Ctrl-C. A build stopped half
 * way writes nothing (each memoir's full-text rows are one transaction).
 */
export interface TextIndexBuilder {
  /** Bytes of memoir to read before text search works. */
  readonly bytes: number;
  /** Builds it; `onProgress` gets bytes read so far. Rejects with CancelledError once `signal` fires. */
  build(onProgress: (done: number, total: number) => void, signal: AbortSignal): Promise<void>;
}
