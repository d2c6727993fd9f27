import { camel, pascal, pick, pseudoWord, type Rand, type Vocabulary } from './pseudo-words.js';
import { indent, poleOf, variantOf, type Style, type VariantCounts } from './style.js';

/**
 * Code (Techne) and test (Dokimasia) samples: one piece of content rendered in any style.
 * The content (names, nouns, helpers) comes from seeded pseudo-words; the style decides the form
 * on each axis. `render*(content, style)` is pure, so a proposal and its revision differ only
 * where their styles differ.
 */

interface Name {
  /** Descriptive, with the content's nouns: `romutiBatch`. */
  long: string;
  /** Descriptive in a plain word: `items`. */
  plain: string;
  /** A letter or two: `xs`. */
  short: string;
}

export interface CodeContent {
  fn: string;
  typeName: string;
  noun: string;
  helper: string;
  cmp: string;
  items: Name;
  limit: Name;
  out: Name;
  /** One more statement in the work (content, the same on both sides of a pair). */
  extra: boolean;
}

const VERBS = ['load', 'sort', 'merge', 'collect', 'filter', 'rank', 'group', 'pick', 'select', 'gather'];

export function codeContent(rand: Rand, vocab: Vocabulary): CodeContent {
  const noun = pseudoWord(rand, vocab);
  const other = pseudoWord(rand, vocab);
  return {
    fn: camel([pick(rand, VERBS), noun, other]),
    typeName: pascal([noun, pseudoWord(rand, vocab)]),
    noun,
    helper: camel([pick(rand, ['sort', 'index', 'order', 'dedupe']), other]),
    cmp: camel(['by', pseudoWord(rand, vocab)]),
    items: {
      long: camel([noun, pick(rand, ['list', 'items', 'entries', 'batch'])]),
      plain: pick(rand, ['items', 'entries']),
      short: pick(rand, ['xs', 'ys', 'as']),
    },
    limit: {
      long: pick(rand, ['maxCount', 'keepCount', 'budget']),
      plain: pick(rand, ['max', 'limit']),
      short: pick(rand, ['n', 'k', 'm']),
    },
    out: {
      long: camel([pick(rand, ['sorted', 'kept', 'ordered', 'ranked']), noun]),
      plain: pick(rand, ['kept', 'sorted']),
      short: pick(rand, ['r', 's', 't']),
    },
    extra: rand() < 0.5,
  };
}

/** Axes a code sample shows, with the number of variants of each pole. */
export const CODE_VARIANTS: VariantCounts = {
  guard: [3, 3],
  types: [2, 2],
  names: [2, 2],
  comments: [3, 3],
  leftovers: [2, 3],
};

function codeComment(c: CodeContent, s: Style, items: string, limit: string, out: string): string {
  const v = variantOf(s, 'comments');
  if (poleOf(s, 'comments') === 0) {
    return [
      `// because callers expect the newest ${c.noun} first`,
      `// cached per ${c.noun}, so this call is cheap`,
      `// otherwise a retry sees stale ${c.noun} items`,
    ][v] as string;
  }
  return [
    `// call ${c.helper}`,
    `// sort the ${c.noun} items into ${out}`,
    `// set ${out} to ${c.helper} of ${items}, then return the first ${limit}`,
  ][v] as string;
}

export function renderCode(c: CodeContent, s: Style): string {
  const descriptive = poleOf(s, 'names') === 0;
  const nv = variantOf(s, 'names');
  const nm = (x: Name): string => (descriptive ? (nv === 0 ? x.long : x.plain) : x.short);
  const items = nm(c.items);
  const limit = nm(c.limit);
  const out = nm(c.out);
  const T = c.typeName;
  const typed = poleOf(s, 'types') === 0;
  const tv = variantOf(s, 'types');
  const sig = typed
    ? `(${items}: ${tv === 1 ? `readonly ${T}[]` : `${T}[]`}, ${limit}: number): ${T}[]`
    : `(${items}, ${limit})`;

  const head: string[] = [];
  if (!typed && tv === 1)
    head.push('/**', ` * @param {${T}[]} ${items}`, ` * @param {number} ${limit}`, ` * @returns {${T}[]}`, ' */');
  if (!descriptive && nv === 1)
    head.push(
      `// ${items} is the list of ${c.noun} items, ${limit} is how many of them to keep, ${out} is the sorted copy`,
    );
  head.push(`export function ${c.fn}${sig} {`);

  const work: string[] = [codeComment(c, s, items, limit, out), `const ${out} = ${c.helper}(${items});`];
  if (c.extra) work.push(`${out}.sort(${c.cmp});`);
  const lv = variantOf(s, 'leftovers');
  if (poleOf(s, 'leftovers') === 1)
    work.push([`console.log(${out});`, 'debugger;', `// const ${out}Old = ${c.helper}Legacy(${items});`][lv] as string);
  else if (lv === 1) work.push(`log.debug('kept %d ${c.noun} items', ${out}.length);`);

  const take = `${out}.slice(0, ${limit})`;
  const result = `let result${typed ? `: ${T}[]` : ''} = [];`;
  const gv = variantOf(s, 'guard');
  let body: string[];
  if (poleOf(s, 'guard') === 0) {
    const guards =
      gv === 0
        ? [`if (${limit} <= 0) return [];`, `if (${items}.length === 0) return [];`]
        : gv === 1
          ? [`if (${limit} <= 0) {`, '  return [];', '}', `if (${items}.length === 0) {`, '  return [];', '}']
          : [
              `if (!Number.isInteger(${limit}) || ${limit} <= 0) {`,
              '  return [];',
              '}',
              `if (!Array.isArray(${items}) || ${items}.length === 0) {`,
              '  return [];',
              '}',
            ];
    body = [...guards, ...work, `return ${take};`];
  } else if (gv === 0 || gv === 2) {
    const cond =
      gv === 0
        ? `${limit} > 0 && ${items}.length > 0`
        : `Number.isInteger(${limit}) && ${limit} > 0 && Array.isArray(${items}) && ${items}.length > 0`;
    body = [result, `if (${cond}) {`, ...indent(work, 2), `  result = ${take};`, '}', 'return result;'];
  } else {
    body = [
      result,
      `if (${limit} > 0) {`,
      `  if (${items}.length > 0) {`,
      ...indent(work, 4),
      `    result = ${take};`,
      '  }',
      '}',
      'return result;',
    ];
  }
  return [...head, ...indent(body, 2), '}'].join('\n');
}

export interface TestContent {
  fn: string;
  noun: string;
  a: string;
  b: string;
  behaviour: string;
}

export function testContent(rand: Rand, vocab: Vocabulary): TestContent {
  const noun = pseudoWord(rand, vocab);
  return {
    fn: camel([pick(rand, VERBS), noun, pseudoWord(rand, vocab)]),
    noun,
    a: pseudoWord(rand, vocab),
    b: pseudoWord(rand, vocab),
    behaviour: pick(rand, [
      `keeps the first ${noun} item`,
      `returns the ${noun} items in order`,
      `drops ${noun} items past the limit`,
      `never returns more ${noun} items than asked`,
    ]),
  };
}

export const TEST_VARIANTS: VariantCounts = { leftovers: [2, 3] };

export function renderTest(c: TestContent, s: Style): string {
  const left = poleOf(s, 'leftovers') === 1;
  const v = variantOf(s, 'leftovers');
  const lines = [
    `${left && v === 0 ? 'it.only' : 'it'}('${c.behaviour}', () => {`,
    `  const input = ['${c.a}', '${c.b}'];`,
  ];
  if (left && v === 1) lines.push('  console.log(input);');
  lines.push(
    !left && v === 1
      ? `  expect(${c.fn}(input, 1), 'only the first ${c.noun} survives').toEqual(['${c.a}']);`
      : `  expect(${c.fn}(input, 1)).toEqual(['${c.a}']);`,
  );
  if (left && v === 2) lines.push(`  // expect(${c.fn}(input, 0)).toEqual([]);`);
  lines.push('});');
  return lines.join('\n');
}
