import { z } from 'zod';
import { TensorError } from './errors.js';
import { decodeBase64Strict, f32FromLE, f32ToBase64 } from './float-codec.js';
import { checkedNumel, type NamedTensor } from './tensor.js';

/**
 * The one JSON shape of a tensor, wherever a tensor travels as JSON (the council protocol, the
 * privacy release document, delta files):
 *
 *     { "name": "…lora_A.weight", "shape": [8, 512], "dtype": "F32", "data": "<base64>" }
 *
 * `data` is standard padded base64 (RFC 4648 §4) of the little-endian float32 values in
 * row-major order — exactly the bytes a safetensors file holds for an F32 tensor, and `dtype`
 * uses safetensors' name for it. The base64 must be canonical (decodeBase64Strict): the same
 * values have exactly one spelling.
 */
export const TENSOR_JSON_DTYPE = 'F32';

export const TensorJsonSchema = z
  .object({
    name: z.string().min(1).max(512),
    shape: z.array(z.number().int().min(0)).max(8),
    dtype: z.literal(TENSOR_JSON_DTYPE),
    /** base64 of the little-endian float32 values, row-major. */
    data: z.string(),
  })
  .strict();
export type TensorJson = z.infer<typeof TensorJsonSchema>;

export function tensorToJson(t: NamedTensor): TensorJson {
  return { name: t.name, shape: [...t.shape], dtype: TENSOR_JSON_DTYPE, data: f32ToBase64(t.data) };
}

/** Decodes one tensor, checking the base64 and that the values fill the shape exactly. */
export function tensorFromJson(t: TensorJson): NamedTensor {
  const n = checkedNumel(t.shape);
  if (n === null) throw new TensorError(`tensor "${t.name}": shape [${t.shape.join(', ')}] is not a valid shape`);
  let bytes: Buffer;
  try {
    bytes = decodeBase64Strict(t.data);
  } catch (err) {
    throw new TensorError(`tensor "${t.name}": data: ${(err as Error).message}`, { code: 'invalid_base64' });
  }
  if (bytes.byteLength !== n * 4)
    throw new TensorError(
      `tensor "${t.name}" carries ${bytes.byteLength} bytes; shape [${t.shape.join(', ')}] of float32 needs ${n * 4}`,
      { code: 'tensor_data_length' },
    );
  return { name: t.name, shape: [...t.shape], data: f32FromLE(bytes) };
}
