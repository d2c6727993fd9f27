/**
 * JSON text exactly as pydantic-core's `model_dump_json()` writes it, so the ten standard keys of
 * a kourai line are byte-identical to a Python host's.
 *
 * Floats: shortest round-trip digits (the same digits JS and ryu choose), laid out like
 * pydantic: decimal notation while the decimal exponent is in [-5, 16), otherwise scientific
 * with an explicit sign (`1e-7`, `1e+16`), and always a `.0` on integral values.
 * Strings: raw UTF-8, escaping only `"`, `\` and control characters (`JSON.stringify` does the same
 * for well-formed strings).
 */
export function pyFloat(x: number): string {
  if (!Number.isFinite(x)) throw new RangeError(`cannot encode non-finite float ${x}`);
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const ax = Math.abs(x);
  // Fast path: in [1e-5, 1e16) JS and pydantic agree on decimal notation and digits.
  if (ax >= 1e-5 && ax < 1e16) return Number.isInteger(x) ? `${x}.0` : String(x);
  const sign = x < 0 ? '-' : '';
  // toExponential() without an argument gives the shortest round-trip digits.
  const [mant = '', expStr = '0'] = Math.abs(x).toExponential().split('e');
  const digits = mant.replace('.', '');
  const exp10 = Number(expStr); // value = d.ddd × 10^exp10
  const n = digits.length;
  const kk = exp10 + 1; // position of the decimal point relative to the digit string
  if (kk > 16 || kk <= -5) {
    const m = n === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
    return `${sign}${m}e${exp10 < 0 ? '-' : '+'}${Math.abs(exp10)}`;
  }
  if (kk >= n) return `${sign}${digits}${'0'.repeat(kk - n)}.0`;
  if (kk > 0) return `${sign}${digits.slice(0, kk)}.${digits.slice(kk)}`;
  return `${sign}0.${'0'.repeat(-kk)}${digits}`;
}

export const pyString: (s: string) => string = JSON.stringify;

export function pyInt(x: number): string {
  if (!Number.isSafeInteger(x)) throw new RangeError(`cannot encode ${x} as an integer`);
  return String(x);
}

/** A float field as pydantic writes it: NaN and ±Infinity (which it reads) become null. */
export function pyFloatField(x: number): string {
  return Number.isFinite(x) ? pyFloat(x) : 'null';
}
