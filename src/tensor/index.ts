/**
 * The ground-floor tensor layer (imports nothing of kourai but errors.ts and runtime/):
 *   tensor.ts            NamedTensor, dtypes, shapes, the overflow-free L2 norm
 *   float-codec.ts       floats <-> little-endian bytes <-> strict base64
 *   base64-stream.ts     strict base64 in pieces, for bodies read as they arrive (not re-exported)
 *   json.ts              the one tensor JSON shape {name, shape, dtype: "F32", data}
 *   layout.ts            an adapter's tensors flattened into one vector
 *   safetensors.ts       the safetensors format (strict reader, writer with a data digest)
 *   safetensors-file.ts  safetensors files: named errors, atomic writes
 *   linalg.ts            small dense float64 matrices (LoRA-FAIR, the trainer)
 *   errors.ts            TensorError, SafetensorsError (exit 5)
 */
export * from './tensor.js';
export * from './float-codec.js';
export * from './json.js';
export * from './layout.js';
export * from './safetensors.js';
export * from './safetensors-file.js';
export * from './linalg.js';
export * from './errors.js';
