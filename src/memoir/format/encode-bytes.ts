import { MAX_LINE_BYTES } from './limits.js';
import { pyFloatField, pyInt, pyString } from './python-json.js';
import { encodeObject } from './py-object.js';
import { isKouraiContext, isTextScore } from './encode.js';
import { EXTENSION_KEYS, type MemoirLine, type PreferenceItem, type TrainingLabel } from './schema.js';
import { unreadOf } from './unread.js';
import { hasLoneSurrogate } from './utf8.js';

/**
 * `encodeEntry` (encode.ts) written as UTF-8 straight into a batch's buffer: no line string is
 * built, flattened, checked and copied, and no rope is left for the garbage collector (most of
 * `append`'s time went there). Same bytes as encodeEntry + a newline, for every entry it accepts
 * (test/memoir/format/encode-bytes.test.ts holds the two equal; encodeEntry is held to pydantic).
 *
 * It declines (returns false, having written nothing that counts) what the string path must word
 * as an error or handle specially: a lone surrogate, a string or line over MAX_LINE_BYTES. The
 * caller then encodes the line as a string and checks it (checkOutgoingLine), which throws the
 * error with its wording.
 */
export class LineWriter {
  buf: Buffer;
  at = 0;

  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  /**
   * Starts over, keeping the buffer (a fresh 10 MB buffer per batch cost ~0.7 µs per entry in page
   * faults): bytes() of the previous batch are overwritten from here on.
   */
  reset(capacity: number): void {
    this.at = 0;
    if (this.buf.length < capacity) this.buf = Buffer.allocUnsafe(capacity);
  }

  /** The bytes written so far (a view, not a copy). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.at);
  }

  /** Appends raw bytes (a line the string path produced). */
  writeBytes(line: string): void {
    this.reserve(line.length * 3 + 1);
    this.at += this.buf.write(line, this.at, 'utf8');
    this.buf[this.at++] = 10;
  }

  /** Appends `e`'s line and a newline; false (nothing appended) if the string path must decide. */
  writeEntry(e: MemoirLine): boolean {
    const start = this.at;
    if (!this.entry(e) || this.at - start > MAX_LINE_BYTES) {
      this.at = start;
      return false;
    }
    this.reserve(1);
    this.buf[this.at++] = 10;
    return true;
  }

  private reserve(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }

  /** Bytes known to be ASCII (constant fragments, numbers). */
  private ascii(s: string): void {
    const n = s.length;
    this.reserve(n);
    const b = this.buf;
    let at = this.at;
    for (let i = 0; i < n; i++) b[at++] = s.charCodeAt(i);
    this.at = at;
  }

  private frag(f: Uint8Array): void {
    const n = f.length;
    this.reserve(n);
    const b = this.buf;
    let at = this.at;
    for (let i = 0; i < n; i++) b[at++] = f[i] as number;
    this.at = at;
  }

  /** A JSON string as JSON.stringify writes it; false on a lone surrogate or an over-long string. */
  private str(s: string): boolean {
    const n = s.length;
    if (n > MAX_LINE_BYTES) return false;
    this.reserve(n * 6 + 2);
    const b = this.buf;
    let at = this.at;
    b[at++] = 34;
    if (n > LONG && !NEEDS_ESCAPE.test(s)) {
      at += b.write(s, at, 'utf8');
      b[at++] = 34;
      this.at = at;
      return true;
    }
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (c >= 0x20 && c !== 34 && c !== 92) b[at++] = c;
        else {
          b[at++] = 92; // backslash
          const short = ESCAPES[c];
          if (short !== undefined) b[at++] = short;
          else {
            b[at++] = 117; // \u00XX, lower-case hex as JSON.stringify writes it
            b[at++] = 48;
            b[at++] = 48;
            b[at++] = HEX[c >> 4] as number;
            b[at++] = HEX[c & 15] as number;
          }
        }
      } else if (c < 0x800) {
        b[at++] = 0xc0 | (c >> 6);
        b[at++] = 0x80 | (c & 63);
      } else if (c < 0xd800 || c > 0xdfff) {
        b[at++] = 0xe0 | (c >> 12);
        b[at++] = 0x80 | ((c >> 6) & 63);
        b[at++] = 0x80 | (c & 63);
      } else {
        const d = c <= 0xdbff && i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (d < 0xdc00 || d > 0xdfff) return false; // a lone surrogate: not text
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        b[at++] = 0xf0 | (cp >> 18);
        b[at++] = 0x80 | ((cp >> 12) & 63);
        b[at++] = 0x80 | ((cp >> 6) & 63);
        b[at++] = 0x80 | (cp & 63);
        i++;
      }
    }
    b[at++] = 34;
    this.at = at;
    return true;
  }

  private strOrNull(s: string | null): boolean {
    if (s === null) {
      this.frag(NULL);
      return true;
    }
    return this.str(s);
  }

  /** JSON text from JSON.stringify (an extension object, a kept key): written as UTF-8 once checked. */
  private json(text: string | undefined): boolean {
    if (typeof text !== 'string' || text.length > MAX_LINE_BYTES || hasLoneSurrogate(text)) return false;
    this.reserve(text.length * 3);
    this.at += this.buf.write(text, this.at, 'utf8');
    return true;
  }

  private entry(e: MemoirLine): boolean {
    const c = e.context;
    const r = e.player_response;
    this.frag(K_SCENE);
    if (!this.str(e.scene_id)) return false;
    this.frag(K_AGENT);
    if (!this.str(e.agent)) return false;
    this.frag(K_SOURCE);
    if (!this.str(e.source)) return false;
    this.frag(K_CONTEXT);
    if (c === null) this.frag(NULL);
    else if (!isKouraiContext(c)) {
      if (!this.json(encodeObject(c))) return false;
    } else {
      this.frag(K_TASK);
      if (!this.str(c.task_type)) return false;
      this.frag(K_HASH);
      if (!this.str(c.transcript_hash)) return false;
      this.frag(K_PRECEDING);
      const pa = c.preceding_agents;
      for (let i = 0; i < pa.length; i++) {
        if (i > 0) this.frag(COMMA);
        if (!this.str(pa[i] as string)) return false;
      }
      this.frag(CLOSE_LIST_OBJ);
    }
    this.frag(K_BEAT);
    if (!this.strOrNull(e.narrative_beat)) return false;
    this.frag(K_PROPOSED);
    const proposedAt = this.at;
    if (!this.strOrNull(e.agent_proposed)) return false;
    const proposedEnd = this.at;
    this.frag(K_RESPONSE);
    let deltaAt = -1;
    let deltaEnd = -1;
    if (r === null) this.frag(NULL);
    else {
      this.frag(K_KIND);
      if (!this.str(r.kind)) return false;
      this.frag(K_DELTA);
      deltaAt = this.at;
      if (!this.strOrNull(r.delta)) return false;
      deltaEnd = this.at;
      this.frag(K_FELT);
      if (!this.strOrNull(r.felt)) return false;
      this.frag(CLOSE_OBJ);
    }
    this.frag(K_AFFINITY);
    this.ascii(pyFloatField(e.affinity_delta));
    this.frag(K_LABEL);
    if (
      !this.label(
        e.training_label,
        e.agent_proposed,
        proposedAt,
        proposedEnd,
        r === null ? null : r.delta,
        deltaAt,
        deltaEnd,
      )
    )
      return false;
    this.frag(SPLITS[(e.split.shared_eligible ? 2 : 0) + (e.split.private_only ? 1 : 0)] as Uint8Array);
    const rec = e as Record<string, unknown>;
    const unread = unreadOf(e);
    for (let i = 0; i < EXTENSION_KEYS.length; i++) {
      const v = rec[EXTENSION_KEYS[i] as string];
      if (v === undefined) {
        const u = unread?.get(EXTENSION_KEYS[i] as string); // kept in its place, as read (unread.ts)
        if (u === undefined) continue;
        this.frag(EXTENSION_PREFIX[i] as Uint8Array);
        if (!this.json(u.json)) return false;
        continue;
      }
      this.frag(EXTENSION_PREFIX[i] as Uint8Array);
      if (!(typeof v === 'string' ? this.str(v) : this.json(JSON.stringify(v)))) return false;
    }
    // A key no model declares is not written (as encodeEntry, as model_dump_json()).
    this.frag(CLOSE_OBJ);
    return true;
  }

  /** A label; a pair text equal to the proposal or the correction copies its bytes already written. */
  private label(
    t: TrainingLabel | null,
    proposed: string | null,
    pAt: number,
    pEnd: number,
    delta: string | null,
    dAt: number,
    dEnd: number,
  ): boolean {
    if (t === null) {
      this.frag(NULL);
      return true;
    }
    const pp = t.preference_pair;
    this.frag(K_PAIR);
    if (pp === null) this.frag(NULL);
    else {
      this.frag(OPEN_LIST);
      for (let i = 0; i < pp.length; i++) {
        const p = pp[i] as PreferenceItem;
        if (!isTextScore(p)) {
          if (i > 0) this.frag(COMMA);
          if (!this.json(encodeObject(p))) return false;
          continue;
        }
        this.frag(i === 0 ? K_TEXT_FIRST : K_TEXT_NEXT);
        if (p.text === proposed) this.copyWithin(pAt, pEnd);
        else if (p.text === delta && dAt >= 0) this.copyWithin(dAt, dEnd);
        else if (!this.str(p.text)) return false;
        this.frag(K_SCORE);
        this.ascii(pyInt(p.score));
        this.frag(CLOSE_OBJ);
      }
      this.frag(CLOSE_LIST);
    }
    this.frag(K_WEIGHT);
    this.ascii(pyFloatField(t.weight));
    this.frag(CLOSE_OBJ);
    return true;
  }

  private copyWithin(from: number, to: number): void {
    this.reserve(to - from);
    this.at += this.buf.copy(this.buf, this.at, from, to);
  }
}

/** Strings longer than this go through one regex test and one native UTF-8 write instead of the loop. */
const LONG = 64;
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const HEX = Uint8Array.from('0123456789abcdef', (ch) => ch.charCodeAt(0));
/** JSON.stringify's two-character escapes, by code unit. */
const ESCAPES: (number | undefined)[] = [];
ESCAPES[8] = 98; // \b
ESCAPES[9] = 116; // \t
ESCAPES[10] = 110; // \n
ESCAPES[12] = 102; // \f
ESCAPES[13] = 114; // \r
ESCAPES[34] = 34; // \"
ESCAPES[92] = 92; // \\

const bytesOf = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'utf8'));
const NULL = bytesOf('null');
const COMMA = bytesOf(',');
const OPEN_LIST = bytesOf('[');
const CLOSE_LIST = bytesOf(']');
const CLOSE_OBJ = bytesOf('}');
const CLOSE_LIST_OBJ = bytesOf(']}');
const K_SCENE = bytesOf('{"scene_id":');
const K_AGENT = bytesOf(',"agent":');
const K_SOURCE = bytesOf(',"source":');
const K_CONTEXT = bytesOf(',"context":');
const K_TASK = bytesOf('{"task_type":');
const K_HASH = bytesOf(',"transcript_hash":');
const K_PRECEDING = bytesOf(',"preceding_agents":[');
const K_BEAT = bytesOf(',"narrative_beat":');
const K_PROPOSED = bytesOf(',"agent_proposed":');
const K_RESPONSE = bytesOf(',"player_response":');
const K_KIND = bytesOf('{"kind":');
const K_DELTA = bytesOf(',"delta":');
const K_FELT = bytesOf(',"felt":');
const K_AFFINITY = bytesOf(',"affinity_delta":');
const K_LABEL = bytesOf(',"training_label":');
const K_PAIR = bytesOf('{"preference_pair":');
const K_TEXT_FIRST = bytesOf('{"text":');
const K_TEXT_NEXT = bytesOf(',{"text":');
const K_SCORE = bytesOf(',"score":');
const K_WEIGHT = bytesOf(',"weight":');
const SPLITS = [false, true].flatMap((shared) =>
  [false, true].map((priv) => bytesOf(`,"split":{"shared_eligible":${shared},"private_only":${priv}}`)),
);
const EXTENSION_PREFIX = EXTENSION_KEYS.map((k) => bytesOf(`,${pyString(k)}:`));
