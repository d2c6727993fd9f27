import type { OutStream } from '../context.js';

/** One JSON document on stdout (the `--json` result of a finite command). */
export function writeJson(out: OutStream, value: unknown): void {
  out.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** One NDJSON record (streaming commands). */
export function writeNdjson(out: OutStream, value: unknown): void {
  out.write(`${JSON.stringify(value)}\n`);
}
