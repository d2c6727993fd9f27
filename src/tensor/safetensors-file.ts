import { readFileSync } from 'node:fs';
import { ConflictError, fsError } from '../errors.js';
import { writeFileAtomic } from '../runtime/atomic-write.js';
import { SafetensorsError } from './errors.js';
import { readSafetensors, writeSafetensors, type SafetensorsContents } from './safetensors.js';
import type { NamedTensor, TensorData } from './tensor.js';

/**
 * Safetensors files on disk. Reading names the file in every error (SafetensorsError, exit 5;
 * fs errors mapped as everywhere else); writing is atomic and durable (temporary file, fsync,
 * rename, fsync of the directory), so an adapter on disk is always a whole one.
 */
export function readSafetensorsFile(path: string, what = 'safetensors file'): SafetensorsContents {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw fsError(err, what, path);
  }
  try {
    return readSafetensors(bytes);
  } catch (err) {
    if (err instanceof SafetensorsError) throw new SafetensorsError(`${what} ${path}: ${err.message}`, err.hint);
    throw err;
  }
}

/**
 * Writes tensors to `path` atomically. With `overwrite: false` an existing file is never replaced:
 * ConflictError (exit 7) naming it, with `existsHint` as the hint.
 */
export function writeSafetensorsFile(
  path: string,
  tensors: readonly NamedTensor<TensorData>[],
  opts: { metadata?: Record<string, string>; overwrite?: boolean; what?: string; existsHint?: string } = {},
): void {
  const what = opts.what ?? 'safetensors file';
  const bytes = writeSafetensors(tensors, opts.metadata ?? {});
  try {
    writeFileAtomic(path, bytes, { overwrite: opts.overwrite ?? true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      throw new ConflictError(`${what} already exists: ${path}`, opts.existsHint);
    throw fsError(err, what, path);
  }
}
