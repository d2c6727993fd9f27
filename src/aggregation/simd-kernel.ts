/**
 * The one hot loop of the Krum family: blocks of dot products, in float64, with WebAssembly SIMD.
 *
 * V8 does not vectorise JavaScript loops, so the Gram kernel is a tiny WebAssembly module built
 * here, byte by byte (no toolchain, no binary blob in the repository). One function:
 *
 *   gram_f32(pi, pj, stride, kbytes, g, gstride)   and   gram_f64(...)
 *
 * accumulate a 4×2 tile of dot products: for a in 0..3, b in 0..1,
 *   G[a][b] += Σ_k X[i+a][k] · X[j+b][k]
 * where row r starts at byte `pi + a·stride` (resp. `pj + b·stride`), `kbytes` is the row length
 * in bytes (a multiple of 16), and G[a][b] is the float64 at `g + a·gstride + 8·b`.
 * float32 inputs are promoted to float64 before multiplying: a product of two float32 is exact
 * in float64, so only the float64 summation rounds. Eight f64x2 accumulators and six inputs stay
 * in SIMD registers (x64 has 16), which is what makes the tile fast: 16 multiply-adds per 6 loads,
 * fused when the runtime has relaxed SIMD (see kernelModule).
 */

import { setFlagsFromString } from 'node:v8';

const I32 = 0x7f;
const V128 = 0x7b;
const F64 = 0x7c;
const leb = (value: number): number[] => {
  const out: number[] = [];
  let n = value >>> 0;
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const sleb = (value: number): number[] => {
  const out: number[] = [];
  let n = value | 0;
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
};
const name = (s: string): number[] => [...leb(s.length), ...Buffer.from(s, 'utf8')];
const vec = (items: number[][]): number[] => [...leb(items.length), ...items.flat()];
const section = (id: number, bytes: number[]): number[] => [id, ...leb(bytes.length), ...bytes];
const simd = (opcode: number): number[] => [0xfd, ...leb(opcode)];

const op = {
  get: (i: number) => [0x20, ...leb(i)],
  set: (i: number) => [0x21, ...leb(i)],
  i32: (v: number) => [0x41, ...sleb(v)],
  add: [0x6a],
  mul: [0x6c],
  ltU: [0x49],
  eqz: [0x45],
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  br: (d: number) => [0x0c, ...leb(d)],
  brIf: (d: number) => [0x0d, ...leb(d)],
  end: [0x0b],
  f64load: (off: number) => [0x2b, 3, ...leb(off)],
  f64store: (off: number) => [0x39, 3, ...leb(off)],
  f64add: [0xa0],
  v128load: (off: number) => [...simd(0), 4, ...leb(off)],
  v128store: (off: number) => [...simd(11), 4, ...leb(off)],
  tee: (i: number) => [0x22, ...leb(i)],
  load64zero: (off: number) => [...simd(93), 3, ...leb(off)],
  promoteLow: simd(95),
  f64x2add: simd(240),
  f64x2mul: simd(242),
  lane: (l: number) => [...simd(33), l],
  zero: [...simd(12), ...new Array<number>(16).fill(0)],
};

export const TILE_I = 4;
export const TILE_J = 2;

/** The body of one tile function (f32 inputs promoted, or f64 inputs). */
function tileBody(f32: boolean, fma = false): number[] {
  // params: 0 pi, 1 pj, 2 stride, 3 kbytes, 4 g, 5 gstride
  const K = 6;
  const ACC = 7;
  const XI = ACC + TILE_I * TILE_J;
  const XJ = XI + TILE_I;
  const PTR = XJ + TILE_J;
  const code: number[] = [];
  for (let a = 0; a < TILE_I; a++)
    code.push(...op.get(0), ...op.get(2), ...op.i32(a), ...op.mul, ...op.add, ...op.set(PTR + a));
  for (let b = 0; b < TILE_J; b++)
    code.push(...op.get(1), ...op.get(2), ...op.i32(b), ...op.mul, ...op.add, ...op.set(PTR + TILE_I + b));
  for (let z = 0; z < TILE_I * TILE_J; z++) code.push(...op.zero, ...op.set(ACC + z));
  code.push(...op.i32(0), ...op.set(K));
  code.push(...op.block, ...op.loop);
  code.push(...op.get(K), ...op.get(3), ...op.ltU, ...op.eqz, ...op.brIf(1));
  // Two steps per iteration; one step covers 2 coordinates (8 bytes of f32, 16 of f64).
  const step = f32 ? 8 : 16;
  for (let u = 0; u < 2; u++) {
    const ld = (p: number): number[] =>
      f32
        ? [...op.get(K), ...op.get(p), ...op.add, ...op.load64zero(u * step), ...op.promoteLow]
        : [...op.get(K), ...op.get(p), ...op.add, ...op.v128load(u * step)];
    for (let a = 0; a < TILE_I; a++) code.push(...ld(PTR + a), ...op.set(XI + a));
    for (let b = 0; b < TILE_J; b++) code.push(...ld(PTR + TILE_I + b), ...op.set(XJ + b));
    for (let a = 0; a < TILE_I; a++) {
      for (let b = 0; b < TILE_J; b++) {
        const acc = ACC + a * TILE_J + b;
        if (fma) code.push(...op.get(XI + a), ...op.get(XJ + b), ...op.get(acc), ...simd(0x107), ...op.set(acc));
        else
          code.push(
            ...op.get(acc),
            ...op.get(XI + a),
            ...op.get(XJ + b),
            ...op.f64x2mul,
            ...op.f64x2add,
            ...op.set(acc),
          );
      }
    }
  }
  code.push(...op.get(K), ...op.i32(2 * step), ...op.add, ...op.set(K), ...op.br(0), ...op.end, ...op.end);
  // G[a][b] += lane0 + lane1
  for (let a = 0; a < TILE_I; a++) {
    for (let b = 0; b < TILE_J; b++) {
      const acc = ACC + a * TILE_J + b;
      const addr = [...op.get(4), ...op.get(5), ...op.i32(a), ...op.mul, ...op.add];
      code.push(
        ...addr,
        ...addr,
        ...op.f64load(8 * b),
        ...op.get(acc),
        ...op.lane(0),
        ...op.get(acc),
        ...op.lane(1),
        ...op.f64add,
        ...op.f64add,
        ...op.f64store(8 * b),
      );
    }
  }
  code.push(...op.end);
  const locals = vec([
    [...leb(1), I32],
    [...leb(TILE_I * TILE_J + TILE_I + TILE_J), V128],
    [...leb(TILE_I + TILE_J), I32],
  ]);
  const body = [...locals, ...code];
  return [...leb(body.length), ...body];
}

/**
 * cmpx(pa, pb, nbytes): one comparator of a sorting network applied to a whole block of
 * coordinates at once — a[k], b[k] = min, max — 4 float32 (or 2 float64) lanes per instruction.
 * Coordinate-wise rules (median, trimmed mean, Bulyan) sort every coordinate's n values with a
 * Batcher network of such comparators, "vertically" across rows, with no shuffling. Inputs are
 * finite (non-finite updates are dropped first), so pmin/pmax are exact min/max.
 */
function cmpxBody(f32: boolean): number[] {
  // params: 0 pa, 1 pb, 2 nbytes; locals: 3 off, 4 a, 5 b
  const pmin = simd(f32 ? 234 : 246);
  const pmax = simd(f32 ? 235 : 247);
  const code = [
    ...op.i32(0),
    ...op.set(3),
    ...op.block,
    ...op.loop,
    ...op.get(3),
    ...op.get(2),
    ...op.ltU,
    ...op.eqz,
    ...op.brIf(1),
    ...op.get(3),
    ...op.get(0),
    ...op.add,
    ...op.v128load(0),
    ...op.set(4),
    ...op.get(3),
    ...op.get(1),
    ...op.add,
    ...op.v128load(0),
    ...op.set(5),
    ...op.get(3),
    ...op.get(0),
    ...op.add,
    ...op.get(4),
    ...op.get(5),
    ...pmin,
    ...op.v128store(0),
    ...op.get(3),
    ...op.get(1),
    ...op.add,
    ...op.get(4),
    ...op.get(5),
    ...pmax,
    ...op.v128store(0),
    ...op.get(3),
    ...op.i32(16),
    ...op.add,
    ...op.set(3),
    ...op.br(0),
    ...op.end,
    ...op.end,
    ...op.end,
  ];
  const locals = vec([
    [...leb(1), I32],
    [...leb(2), V128],
  ]);
  const body = [...locals, ...code];
  return [...leb(body.length), ...body];
}

/**
 * axpy8_f32(acc, x0..x7, w0..w7, nbytes): acc[k] += Σⱼ wⱼ·xⱼ[k] for float32 rows xⱼ promoted to
 * float64 (acc is float64; nbytes counts the float32 bytes, a multiple of 16). FedAvg's inner
 * loop: eight rows per pass over the accumulator, four coordinates per iteration.
 */
export const AXPY_ROWS = 8;
function axpyBody(): number[] {
  const R = AXPY_ROWS;
  // params: 0 acc, 1..R x, R+1..2R w (f64), 2R+1 nbytes; locals: off, R w splats + 2 accumulators (v128), a row pointer
  const NB = 2 * R + 1;
  const OFF = NB + 1;
  const WS = OFF + 1;
  const A0 = WS + R;
  const A1 = A0 + 1;
  const RAW_PTR = A1 + 1;
  const code: number[] = [];
  for (let j = 0; j < R; j++) code.push(...op.get(R + 1 + j), ...simd(20) /* f64x2.splat */, ...op.set(WS + j));
  code.push(
    ...op.i32(0),
    ...op.set(OFF),
    ...op.block,
    ...op.loop,
    ...op.get(OFF),
    ...op.get(NB),
    ...op.ltU,
    ...op.eqz,
    ...op.brIf(1),
  );
  // acc address = acc + 2*off (float64 vs float32 offsets)
  const accAddr = [...op.get(0), ...op.get(OFF), ...op.get(OFF), ...op.add, ...op.add];
  code.push(...accAddr, ...op.v128load(0), ...op.set(A0), ...accAddr, ...op.v128load(16), ...op.set(A1));
  for (let j = 0; j < R; j++) {
    code.push(...op.get(1 + j), ...op.get(OFF), ...op.add, ...op.set(RAW_PTR));
    code.push(
      ...op.get(A0),
      ...op.get(RAW_PTR),
      ...op.load64zero(0),
      ...op.promoteLow,
      ...op.get(WS + j),
      ...op.f64x2mul,
      ...op.f64x2add,
      ...op.set(A0),
    );
    code.push(
      ...op.get(A1),
      ...op.get(RAW_PTR),
      ...op.load64zero(8),
      ...op.promoteLow,
      ...op.get(WS + j),
      ...op.f64x2mul,
      ...op.f64x2add,
      ...op.set(A1),
    );
  }
  code.push(...accAddr, ...op.get(A0), ...op.v128store(0), ...accAddr, ...op.get(A1), ...op.v128store(16));
  code.push(...op.get(OFF), ...op.i32(16), ...op.add, ...op.set(OFF), ...op.br(0), ...op.end, ...op.end, ...op.end);
  const locals = vec([
    [...leb(1), I32],
    [...leb(R + 2), V128],
    [...leb(1), I32],
  ]);
  const body = [...locals, ...code];
  return [...leb(body.length), ...body];
}

/** The module's bytes: imports `env.mem` (a shared memory), exports the tile, comparator and axpy kernels. */
export function kernelModuleBytes(fma = false): Uint8Array {
  const six = vec([[I32], [I32], [I32], [I32], [I32], [I32]]);
  const three = vec([[I32], [I32], [I32]]);
  const bytes = [
    0x00,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    ...section(
      1,
      vec([
        [0x60, ...six, ...vec([])],
        [0x60, ...three, ...vec([])],
        [
          0x60,
          ...vec([
            [I32],
            ...Array.from({ length: AXPY_ROWS }, () => [I32]),
            ...Array.from({ length: AXPY_ROWS }, () => [F64]),
            [I32],
          ]),
          ...vec([]),
        ],
      ]),
    ),
    // memory import: flags 0x03 = has maximum + shared
    ...section(2, vec([[...name('env'), ...name('mem'), 0x02, 0x03, ...leb(1), ...leb(65536)]])),
    ...section(3, vec([leb(0), leb(0), leb(1), leb(1), leb(2)])),
    ...section(
      7,
      vec([
        [...name('gram_f32'), 0x00, ...leb(0)],
        [...name('gram_f64'), 0x00, ...leb(1)],
        [...name('cmpx_f32'), 0x00, ...leb(2)],
        [...name('cmpx_f64'), 0x00, ...leb(3)],
        [...name('axpy8_f32'), 0x00, ...leb(4)],
      ]),
    ),
    ...section(10, vec([tileBody(true, fma), tileBody(false, fma), cmpxBody(true), cmpxBody(false), axpyBody()])),
  ];
  return new Uint8Array(bytes);
}

type TileFn = (pi: number, pj: number, stride: number, kbytes: number, g: number, gstride: number) => void;
type CmpxFn = (pa: number, pb: number, nbytes: number) => void;
type AxpyFn = (acc: number, ...ptrsWeightsBytes: number[]) => void;

/** The few WebAssembly APIs used here (@types/node 20 does not declare the namespace). */
export interface WasmMemory {
  readonly buffer: SharedArrayBuffer;
  grow(pages: number): number;
}
export interface WasmModule {
  readonly __brand?: 'WasmModule';
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (
    mod: WasmModule,
    imports: Record<string, Record<string, unknown>>,
  ) => { exports: Record<string, unknown> };
  Memory: new (desc: { initial: number; maximum: number; shared: boolean }) => WasmMemory;
}
const wasm = (): WasmApi | undefined => (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

let compiled: { module: WasmModule; fma: boolean } | null | undefined;

function tryCompile(api: WasmApi, fma: boolean): WasmModule | null {
  try {
    return new api.Module(kernelModuleBytes(fma));
  } catch {
    return null;
  }
}

/**
 * The compiled module (immutable, so caching it is safe), or null when this runtime lacks SIMD.
 *
 * The Gram tiles use fused multiply-add (`f64x2.relaxed_madd`, relaxed SIMD) when the runtime has
 * it: 1.5–1.9× the throughput of separate multiply and add, and a single rounding per step.
 * Node ≥ 22 ships relaxed SIMD; Node 20 has it behind a V8 flag, which is switched on here, once,
 * right before the first compilation (it only adds WebAssembly opcodes). Without it, the plain
 * SIMD module is used.
 */
export function kernelModule(): WasmModule | null {
  if (compiled === undefined) {
    const api = wasm();
    let mod = api ? tryCompile(api, true) : null;
    if (api && !mod) {
      try {
        setFlagsFromString('--experimental-wasm-relaxed-simd');
      } catch {
        // not settable: use plain SIMD
      }
      mod = tryCompile(api, true);
    }
    if (mod) compiled = { module: mod, fma: true };
    else {
      const plain = api ? tryCompile(api, false) : null;
      compiled = plain ? { module: plain, fma: false } : null;
    }
  }
  return compiled?.module ?? null;
}

/** Whether the Gram kernel uses fused multiply-add (see kernelModule). */
export function kernelUsesFma(): boolean {
  kernelModule();
  return compiled?.fma ?? false;
}

/** One instance with its own scratch memory (never shared between callers). */
export interface Kernel {
  memory: WasmMemory;
  gramF32: TileFn;
  gramF64: TileFn;
  cmpxF32: CmpxFn;
  cmpxF64: CmpxFn;
  /** axpy8F32(acc, x0..x7, w0..w7, nbytes) */
  axpy8F32: AxpyFn;
  /** Makes sure the memory holds at least `bytes`. */
  ensure(bytes: number): void;
}

export function instantiateKernel(): Kernel | null {
  const mod = kernelModule();
  return mod ? instantiateKernelOn(mod) : null;
}

/** An instance of the compiled module with its own, new, shared memory. */
export function instantiateKernelOn(mod: WasmModule): Kernel {
  const api = wasm() as WasmApi;
  const memory = new api.Memory({ initial: 16, maximum: 65536, shared: true });
  const inst = new api.Instance(mod, { env: { mem: memory } });
  const ex = inst.exports as {
    gram_f32: TileFn;
    gram_f64: TileFn;
    cmpx_f32: CmpxFn;
    cmpx_f64: CmpxFn;
    axpy8_f32: AxpyFn;
  };
  return {
    memory,
    gramF32: ex.gram_f32,
    gramF64: ex.gram_f64,
    cmpxF32: ex.cmpx_f32,
    cmpxF64: ex.cmpx_f64,
    axpy8F32: ex.axpy8_f32,
    ensure(bytes) {
      const have = memory.buffer.byteLength;
      if (bytes > have) memory.grow(Math.ceil((bytes - have) / 65536));
    },
  };
}
