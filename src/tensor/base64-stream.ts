import { TensorError } from './errors.js';

/**
 * Base64 in pieces, for bodies read as they arrive. The decoder is as strict as
 * decodeBase64Strict (standard alphabet, padded, the one canonical spelling of the bytes) but
 * holds at most one 4-character group between pieces; the encoder gives, piece by piece, exactly
 * the text `Buffer.toString('base64')` gives for the whole.
 */

const ALPHABET = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') ALPHABET[c.charCodeAt(0)] = 1;
const PAD = 0x3d;

export class Base64Decoder {
  /** Characters seen so far. */
  private chars = 0;
  /** The last complete group is held back: only the final group may carry padding. */
  private held = Buffer.alloc(0);
  private error: TensorError | null = null;

  constructor(private readonly emit: (bytes: Buffer) => void) {}

  /** ASCII characters of the text; returns false once the text is known not to be canonical base64. */
  write(text: Buffer): boolean {
    if (this.error) {
      this.chars += text.length;
      return false;
    }
    for (let i = 0; i < text.length; i++) {
      if (ALPHABET[text[i] as number] !== 1 && text[i] !== PAD) {
        this.fail(this.chars + i, text.subarray(i, i + 4));
        this.chars += text.length;
        return false;
      }
    }
    const all = this.held.length ? Buffer.concat([this.held, text]) : text;
    const base = this.chars - this.held.length;
    this.chars += text.length;
    // Keep the last group (complete or not) for later: it may be the padded one.
    let keep = all.length % 4 || 4;
    if (keep > all.length) keep = all.length;
    const body = all.subarray(0, all.length - keep);
    const pad = body.indexOf(PAD);
    if (pad !== -1) {
      this.fail(base + pad - (pad % 4), body.subarray(pad - (pad % 4), pad - (pad % 4) + 4));
      return false;
    }
    if (body.length) this.emit(Buffer.from(body.toString('latin1'), 'base64'));
    this.held = Buffer.from(all.subarray(all.length - keep));
    return true;
  }

  /** The end of the text: the error that makes it not canonical base64, if any. */
  end(): TensorError | null {
    if (this.error) return this.error;
    if (this.chars % 4 !== 0) {
      this.error = new TensorError(`base64 text of ${this.chars} characters is not padded to a multiple of 4`, {
        code: 'invalid_base64',
      });
      return this.error;
    }
    if (this.held.length) {
      const group = this.held.toString('latin1');
      const bytes = Buffer.from(group, 'base64');
      // Canonical: the group re-encodes to itself ('=' only at the end, no stray bits).
      if (bytes.toString('base64') !== group) {
        this.fail(this.chars - 4, this.held);
        return this.error;
      }
      this.emit(bytes);
      this.held = Buffer.alloc(0);
    }
    return null;
  }

  private fail(at: number, near: Buffer): void {
    this.error = new TensorError(
      `not canonical base64 at character ${at} (${JSON.stringify(near.subarray(0, 4).toString('latin1'))})`,
      { code: 'invalid_base64' },
    );
  }
}

/** Base64 text of bytes given in pieces (up to two bytes are carried to the next piece). */
export class Base64Encoder {
  private carry = Buffer.alloc(0);

  write(bytes: Uint8Array): string {
    const all = this.carry.length ? Buffer.concat([this.carry, bytes]) : Buffer.from(bytes);
    const whole = all.length - (all.length % 3);
    this.carry = Buffer.from(all.subarray(whole));
    return all.toString('base64', 0, whole);
  }

  end(): string {
    const out = this.carry.toString('base64');
    this.carry = Buffer.alloc(0);
    return out;
  }
}
