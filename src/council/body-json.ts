/**
 * A JSON update body read as it arrives. Everything is built into a small document as JSON.parse
 * would build it, except the string values at `tensors[i].data` (the base64 tensors, nearly all
 * of the body): their characters go to `data` as they arrive and the document keeps "" in their
 * place. So the parser holds the document's small values and at most one token between pieces,
 * never a tensor's text.
 */
interface JsonBodyEvents {
  /**
   * The data string of tensors[index] starts; `tensor` holds the keys of its object seen so far,
   * `root` the top-level keys seen so far (both keep changing as the parse goes on).
   */
  dataStart(index: number, tensor: Record<string, unknown>, root: Record<string, unknown>): void;
  /** Characters of that string (escapes already resolved), in order. */
  data(chars: Buffer): void;
  dataEnd(index: number): void;
  /** The object of tensors[index] closed. */
  tensorEnd(index: number, tensor: Record<string, unknown>): void;
}

/** The body is not JSON (answered like a body JSON.parse refuses). */
export class JsonBodyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonBodyError';
  }
}

/** Longest value outside the tensors' data kept as text (the schema allows far less). */
const MAX_TOKEN = 64 * 1024;
const MAX_DEPTH = 64;

type Frame =
  | { kind: 'object'; value: Record<string, unknown>; key: string | null; expect: 'key' | 'colon' | 'value' | 'comma' }
  | { kind: 'array'; value: unknown[]; expect: 'value' | 'comma' };

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const DELIM = new Set([0x20, 0x09, 0x0a, 0x0d, 0x2c, 0x5d, 0x7d]);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class JsonBodyParser {
  private stack: Frame[] = [];
  private root: unknown = undefined;
  private done = false;
  /** A string or scalar token being read (its raw bytes), or a data string being streamed. */
  private token: { kind: 'string' | 'scalar'; parts: Buffer[]; size: number; escaped: boolean } | null = null;
  private dataIndex = -1;
  /** An escape inside a data string, split across pieces. */
  private dataEscape: string | null = null;

  constructor(private readonly events: JsonBodyEvents) {}

  write(piece: Buffer): void {
    let i = 0;
    while (i < piece.length) {
      if (this.dataIndex >= 0) {
        i = this.streamData(piece, i);
        continue;
      }
      if (this.token) {
        i = this.token.kind === 'string' ? this.readString(piece, i) : this.readScalar(piece, i);
        continue;
      }
      const b = piece[i] as number;
      if (WS.has(b)) {
        i++;
        continue;
      }
      if (this.done) throw new JsonBodyError('unexpected text after the end of the document');
      i++;
      if (b === 0x7b) this.open({ kind: 'object', value: {}, key: null, expect: 'key' });
      else if (b === 0x5b) this.open({ kind: 'array', value: [], expect: 'value' });
      else if (b === 0x7d || b === 0x5d) this.close(b === 0x7d ? 'object' : 'array');
      else if (b === 0x3a) this.colon();
      else if (b === 0x2c) this.comma();
      else if (b === QUOTE) {
        if (this.isDataPosition()) this.startData();
        else this.token = { kind: 'string', parts: [], size: 0, escaped: false };
      } else {
        this.expectValue();
        this.token = { kind: 'scalar', parts: [Buffer.from([b])], size: 1, escaped: false };
      }
    }
  }

  /** The end of the body: the document (tensors' data as ""). */
  end(): unknown {
    if (this.token?.kind === 'scalar') this.finishScalar();
    if (this.token || this.dataIndex >= 0 || this.stack.length || !this.done)
      throw new JsonBodyError('the body ends inside the document');
    return this.root;
  }

  private top(): Frame | undefined {
    return this.stack[this.stack.length - 1];
  }

  private expectValue(): void {
    const f = this.top();
    if (!f) {
      if (this.done) throw new JsonBodyError('unexpected text after the end of the document');
      return;
    }
    if (f.expect !== 'value') throw new JsonBodyError('unexpected value');
  }

  private open(frame: Frame): void {
    this.expectValue();
    if (this.stack.length >= MAX_DEPTH) throw new JsonBodyError(`the document nests deeper than ${MAX_DEPTH}`);
    this.stack.push(frame);
  }

  private close(kind: 'object' | 'array'): void {
    const f = this.top();
    if (!f || f.kind !== kind) throw new JsonBodyError(`unexpected "${kind === 'object' ? '}' : ']'}"`);
    // Empty containers close from their first state; others after a value.
    const empty = f.kind === 'object' ? Object.keys(f.value).length === 0 && f.key === null : f.value.length === 0;
    if (!(f.expect === 'comma' || (empty && (f.expect === 'key' || f.expect === 'value'))))
      throw new JsonBodyError(`unexpected "${kind === 'object' ? '}' : ']'}"`);
    this.stack.pop();
    if (f.kind === 'object' && this.isTensorFrame(this.stack.length))
      this.events.tensorEnd((this.stack[1] as { value: unknown[] }).value.length, f.value);
    this.value(f.value);
  }

  private colon(): void {
    const f = this.top();
    if (f?.kind !== 'object' || f.expect !== 'colon') throw new JsonBodyError('unexpected ":"');
    f.expect = 'value';
  }

  private comma(): void {
    const f = this.top();
    if (!f || f.expect !== 'comma') throw new JsonBodyError('unexpected ","');
    f.expect = f.kind === 'object' ? 'key' : 'value';
  }

  /** A complete value where the top frame expects one (or the document itself). */
  private value(v: unknown): void {
    const f = this.top();
    if (!f) {
      this.root = v;
      this.done = true;
      return;
    }
    if (f.kind === 'array') f.value.push(v);
    else {
      // JSON.parse keeps the last of repeated keys; "__proto__" would set the prototype instead.
      if (f.key === '__proto__') throw new JsonBodyError('the body holds a forbidden "__proto__" key');
      f.value[f.key as string] = v;
      f.key = null;
    }
    f.expect = 'comma';
  }

  /** tensors[i] of the root object is the frame at `depth` (root = 0, tensors array = 1). */
  private isTensorFrame(depth: number): boolean {
    const root = this.stack[0];
    return depth === 2 && root?.kind === 'object' && root.key === 'tensors' && this.stack[1]?.kind === 'array';
  }

  private isDataPosition(): boolean {
    const f = this.top();
    return (
      this.stack.length === 3 &&
      this.isTensorFrame(2) &&
      f?.kind === 'object' &&
      f.expect === 'value' &&
      f.key === 'data'
    );
  }

  private startData(): void {
    const tensors = (this.stack[1] as { value: unknown[] }).value;
    this.dataIndex = tensors.length;
    const tensor = this.top() as { value: Record<string, unknown> };
    this.events.dataStart(this.dataIndex, tensor.value, (this.stack[0] as { value: Record<string, unknown> }).value);
  }

  private streamData(piece: Buffer, from: number): number {
    let i = from;
    if (this.dataEscape !== null) {
      // Finish an escape begun in the previous piece.
      while (i < piece.length && !this.escapeComplete(this.dataEscape))
        this.dataEscape += String.fromCharCode(piece[i++] as number);
      if (!this.escapeComplete(this.dataEscape)) return i;
      this.events.data(Buffer.from(unescape(this.dataEscape), 'utf8'));
      this.dataEscape = null;
    }
    while (i < piece.length) {
      const q = piece.indexOf(QUOTE, i);
      const s = piece.indexOf(BACKSLASH, i);
      const stop = q === -1 ? s : s === -1 ? q : Math.min(q, s);
      if (stop === -1) {
        this.events.data(piece.subarray(i));
        return piece.length;
      }
      if (stop > i) this.events.data(piece.subarray(i, stop));
      if (stop === q) {
        const index = this.dataIndex;
        this.dataIndex = -1;
        this.events.dataEnd(index);
        this.value('');
        return stop + 1;
      }
      this.dataEscape = '\\';
      i = stop + 1;
      while (i < piece.length && !this.escapeComplete(this.dataEscape))
        this.dataEscape += String.fromCharCode(piece[i++] as number);
      if (!this.escapeComplete(this.dataEscape)) return i;
      this.events.data(Buffer.from(unescape(this.dataEscape), 'utf8'));
      this.dataEscape = null;
    }
    return i;
  }

  private escapeComplete(e: string): boolean {
    return e.length >= 2 && (e[1] !== 'u' || e.length >= 6);
  }

  private readString(piece: Buffer, from: number): number {
    const t = this.token as NonNullable<JsonBodyParser['token']>;
    for (let i = from; i < piece.length; i++) {
      const b = piece[i] as number;
      if (t.escaped) t.escaped = false;
      else if (b === BACKSLASH) t.escaped = true;
      else if (b === QUOTE) {
        this.take(piece.subarray(from, i + 1));
        this.finishString();
        return i + 1;
      }
    }
    this.take(piece.subarray(from));
    return piece.length;
  }

  private readScalar(piece: Buffer, from: number): number {
    let i = from;
    while (i < piece.length && !DELIM.has(piece[i] as number)) i++;
    this.take(piece.subarray(from, i));
    if (i < piece.length) this.finishScalar();
    return i;
  }

  private take(bytes: Buffer): void {
    const t = this.token as NonNullable<JsonBodyParser['token']>;
    t.size += bytes.length;
    if (t.size > MAX_TOKEN)
      throw new JsonBodyError(`a value outside the tensors' data is longer than ${MAX_TOKEN} bytes`);
    t.parts.push(Buffer.from(bytes));
  }

  private finishString(): void {
    const t = this.token as NonNullable<JsonBodyParser['token']>;
    this.token = null;
    const s = parseToken(`"${Buffer.concat(t.parts).toString('utf8')}`) as string;
    const f = this.top();
    if (f?.kind === 'object' && f.expect === 'key') {
      f.key = s;
      f.expect = 'colon';
      return;
    }
    this.expectValue();
    this.value(s);
  }

  private finishScalar(): void {
    const t = this.token as NonNullable<JsonBodyParser['token']>;
    this.token = null;
    this.value(parseToken(Buffer.concat(t.parts).toString('utf8')));
  }
}

function parseToken(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new JsonBodyError(`not a JSON value: ${text.slice(0, 40)}`);
  }
}

function unescape(e: string): string {
  return parseToken(`"${e}"`) as string;
}
