/**
 * JSON as pydantic's parser (jiter) reads it: standard JSON plus the bare tokens `NaN`, `Infinity`
 * and `-Infinity` as values. JSON.parse refuses those, so parse.ts calls this only after JSON.parse
 * has failed; it gives the same values JSON.parse would (last repeated key wins, first place kept)
 * with those tokens as JS numbers, or throws a SyntaxError.
 */
export function parseLaxJson(text: string): unknown {
  const r = new Reader(text);
  r.ws();
  const v = r.value(0);
  r.ws();
  if (r.p !== text.length) r.fail('unexpected text after the JSON value');
  return v;
}

const MAX_DEPTH = 512;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

class Reader {
  p = 0;
  constructor(private readonly s: string) {}

  fail(what: string): never {
    throw new SyntaxError(`${what} at position ${this.p}`);
  }

  ws(): void {
    for (;;) {
      const c = this.s.charCodeAt(this.p);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.p++;
      else return;
    }
  }

  private word(w: string): boolean {
    if (!this.s.startsWith(w, this.p)) return false;
    this.p += w.length;
    return true;
  }

  private string(): string {
    STRING.lastIndex = this.p;
    const m = STRING.exec(this.s);
    if (m === null) this.fail('bad string');
    this.p += m[0].length;
    return JSON.parse(m[0]) as string;
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail('nesting too deep');
    const c = this.s.charCodeAt(this.p);
    if (c === 0x22) return this.string();
    if (c === 0x7b) return this.object(depth);
    if (c === 0x5b) {
      this.p++;
      const out: unknown[] = [];
      this.ws();
      if (this.s.charCodeAt(this.p) === 0x5d) {
        this.p++;
        return out;
      }
      for (;;) {
        this.ws();
        out.push(this.value(depth + 1));
        this.ws();
        const d = this.s.charCodeAt(this.p++);
        if (d === 0x5d) return out;
        if (d !== 0x2c) this.fail('expected , or ]');
      }
    }
    if (this.word('true')) return true;
    if (this.word('false')) return false;
    if (this.word('null')) return null;
    if (this.word('NaN')) return NaN;
    if (this.word('Infinity')) return Infinity;
    if (this.word('-Infinity')) return -Infinity;
    NUMBER.lastIndex = this.p;
    const m = NUMBER.exec(this.s);
    if (m === null) this.fail('expected a JSON value');
    this.p += m[0].length;
    return Number(m[0]);
  }

  private object(depth: number): Record<string, unknown> {
    this.p++;
    const out: Record<string, unknown> = {};
    this.ws();
    if (this.s.charCodeAt(this.p) === 0x7d) {
      this.p++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s.charCodeAt(this.p) !== 0x22) this.fail('expected a key');
      const k = this.string();
      this.ws();
      if (this.s.charCodeAt(this.p++) !== 0x3a) this.fail('expected :');
      this.ws();
      const v = this.value(depth + 1);
      // an own property, as JSON.parse makes it (even "__proto__")
      Object.defineProperty(out, k, { value: v, writable: true, enumerable: true, configurable: true });
      this.ws();
      const d = this.s.charCodeAt(this.p++);
      if (d === 0x7d) return out;
      if (d !== 0x2c) this.fail('expected , or }');
    }
  }
}
