/**
 * Structure features (base spec `structure`, version 2): a few numbers about a text's length and
 * shape, and about how it relates to the prompt it answers (the whole prompt, its last paragraph as
 * the request, the paragraphs before it as the context), kept OUTSIDE the L2-normalised hashed
 * vector so that a linear model sees length as length. Each is a fixed transform (log1p counts,
 * shares) then centred and scaled by published constants, so every forge computes the same inputs.
 * Without a prompt the prompt features are 0 (their centre).
 */
export const STRUCTURE_FEATURES = [
  'bias',
  'log_chars',
  'log_words',
  'log_sentences',
  'log_lines',
  'log_list_items',
  'log_code_lines',
  'symbol_share',
  'digit_share',
  'upper_share',
  'log_questions',
  'prompt_overlap',
  'prompt_coverage',
  'log_length_ratio',
  'request_overlap',
  'request_coverage',
  'request_length_ratio',
  'bigram_echo',
  'context_repeat',
  'ends_question',
] as const;

export type StructureFeature = (typeof STRUCTURE_FEATURES)[number];

/** Centre and scale of each feature (raw − centre) / scale; the bias is 1. */
const NORM: Readonly<Record<StructureFeature, readonly [number, number]>> = {
  bias: [0, 1],
  log_chars: [5.5, 1.5],
  log_words: [4, 1.3],
  log_sentences: [1.8, 1],
  log_lines: [1.2, 1],
  log_list_items: [0.3, 0.7],
  log_code_lines: [0.3, 0.9],
  symbol_share: [0.05, 0.06],
  digit_share: [0.01, 0.03],
  upper_share: [0.04, 0.05],
  log_questions: [0.2, 0.5],
  prompt_overlap: [0, 0.3],
  prompt_coverage: [0, 0.3],
  log_length_ratio: [0, 1.5],
  request_overlap: [0, 0.3],
  request_coverage: [0, 0.3],
  request_length_ratio: [0, 1.5],
  bigram_echo: [0, 0.2],
  context_repeat: [0, 0.3],
  ends_question: [0, 1],
};

export const STRUCTURE_DIM = STRUCTURE_FEATURES.length;
const CENTRE_SCALE = STRUCTURE_FEATURES.map((name) => NORM[name]);

const WORD = /[\p{L}\p{N}_']+/gu;
const SENTENCE_END = /[.!?]+(?=\s|$)/g;
const LIST_ITEM = /^\s*(?:[-*•]|\d+[.)])\s+/;
const CODE_LINE = /^(?: {4}|\t)|[;{}]\s*$|^\s*```/;

function words(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

/** Content words (three letters or more): what prompt overlap is measured on. */
function contentTypes(text: string | readonly string[]): Set<string> {
  return new Set((typeof text === 'string' ? words(text) : text).filter((w) => w.length >= 3));
}

/** The prompt's last paragraph (the request being answered) and everything before it (the context). */
function requestOf(prompt: string): { request: string; context: string } {
  const parts = prompt.split(/\n\s*\n/).filter((p) => p.trim() !== '');
  return { request: parts[parts.length - 1] ?? prompt, context: parts.slice(0, -1).join('\n\n') };
}

function bigrams(ws: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + 1 < ws.length; i++) out.add(`${ws[i] as string} ${ws[i + 1] as string}`);
  return out;
}

/** Share of `a`'s members that are in `b`. */
function share(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0) return 0;
  let n = 0;
  for (const x of a) if (b.has(x)) n++;
  return n / a.size;
}

/** The raw (unstandardised) features of `text` answering `prompt` (null: no prompt known). */
export function rawStructure(text: string, prompt: string | null): Float64Array {
  const out = new Float64Array(STRUCTURE_DIM);
  const ws = words(text);
  const lines = text.split('\n');
  let sym = 0;
  let dig = 0;
  let up = 0;
  let letters = 0;
  let q = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) dig++;
    else if (c >= 65 && c <= 90) {
      up++;
      letters++;
    } else if (c >= 97 && c <= 122) letters++;
    else if (c === 63) q++;
    else if (c > 32 && c < 127) sym++;
  }
  const n = Math.max(1, text.length);
  const sentences = (text.match(SENTENCE_END) ?? []).length + (/[^.!?\s]\s*$/.test(text) ? 1 : 0);
  out[0] = 1;
  out[1] = Math.log1p(text.length);
  out[2] = Math.log1p(ws.length);
  out[3] = Math.log1p(sentences);
  out[4] = Math.log1p(lines.length);
  let listItems = 0;
  let codeLines = 0;
  for (const l of lines) {
    if (LIST_ITEM.test(l)) listItems++;
    if (CODE_LINE.test(l)) codeLines++;
  }
  out[5] = Math.log1p(listItems);
  out[6] = Math.log1p(codeLines);
  out[7] = sym / n;
  out[8] = dig / n;
  out[9] = letters > 0 ? up / letters : 0;
  out[10] = Math.log1p(q);
  if (prompt !== null && prompt.trim() !== '') {
    const a = contentTypes(ws);
    const pw = words(prompt);
    const p = contentTypes(pw);
    let shared = 0;
    for (const w of a) if (p.has(w)) shared++;
    out[11] = a.size > 0 ? shared / a.size : 0;
    out[12] = p.size > 0 ? shared / p.size : 0;
    out[13] = Math.log((1 + ws.length) / (1 + pw.length));
    // The last paragraph is what is being asked now; echoing it, or repeating earlier turns, is a
    // different signal from overlapping the whole prompt.
    const { request, context } = requestOf(prompt);
    const rw = words(request);
    const r = contentTypes(rw);
    out[14] = share(a, r);
    out[15] = r.size > 0 ? (share(a, r) * a.size) / r.size : 0;
    out[16] = Math.log((1 + ws.length) / (1 + rw.length));
    out[17] = share(bigrams(ws), bigrams(pw));
    out[18] = share(a, contentTypes(context));
  }
  out[19] = /\?\s*$/.test(text) ? 1 : 0;
  return out;
}

/** The standardised features, as the base consumes them. */
export function structureFeatures(text: string, prompt: string | null): Float64Array {
  const out = rawStructure(text, prompt);
  for (let k = 0; k < STRUCTURE_DIM; k++) {
    const [c, s] = CENTRE_SCALE[k] as readonly [number, number];
    out[k] = k === 0 ? 1 : ((out[k] as number) - c) / s;
  }
  return out;
}
