// The layers of the tree (docs/architecture.md, "The floors"), enforced with no-restricted-imports and
// no-restricted-syntax. Imported by eslint.config.js, and by test/lint/layers.test.ts, which
// checks on sample code that each rule fires.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The floors, top first. A directory (or a file at the top of src/) may import from its own floor
 * and the floors below it, never from a floor above. A type two floors share moves down; it is
 * not imported up. A new directory under src/ must be placed here (lint fails until it is).
 */
const FLOORS = [
  ['main.ts', 'index.ts'],
  ['cli.ts', 'run-command.ts', 'help.ts'],
  ['commands'],
  ['output', 'ui'], // presentation; output never imports ui
  // simulation drives the council and federation code (without HTTP), so it sits above them
  // (docs/architecture.md draws it below; the code it drives decides).
  ['simulation'],
  ['federation', 'council'],
  // the wire both speak (documents, versions, cohorts); neither side imports the other
  ['protocol'],
  ['train', 'privacy', 'replay', 'feedback'],
  // the SQLite index of memoirs (rebuilt from them at will); it opens its file through store/db.ts
  ['memoir-index'],
  ['store'], // the state database: ledger, consent, registry, caches
  // affinity is computed from memoir entries alone (memoir's player metrics use it), so it shares memoir's floor.
  ['memoir', 'affinity'],
  ['aggregation', 'tensor'],
  ['errors.ts', 'context.ts', 'config.ts', 'format.ts', 'runtime', 'types'], // types: ambient declarations (.d.ts)
];

/** Where SQL may be written: the memoir index and state repositories, and the council's own storage. */
const SQL_HOMES = [
  'src/store/**',
  'src/memoir-index/**',
  'src/council/storage.ts',
  'src/council/sqlite-storage.ts',
  'src/council/pg-storage.ts',
  'src/council/pg-schema.ts',
];
/** Packages that belong to one layer. */
const PACKAGE_HOMES = [
  { name: 'commander', home: ['src/cli.ts'], why: 'argv parsing is the job of src/cli.ts alone' },
  { name: 'ink', home: ['src/ui/**'], why: 'Ink screens live in src/ui/' },
  { name: 'react', home: ['src/ui/**'], why: 'React components live in src/ui/' },
  {
    name: 'chalk',
    home: ['src/output/**'],
    why: 'colour comes from the one Chalk instance in src/output/color.ts',
    typesFrom: ['src/commands/**', 'src/ui/**'],
  },
  {
    name: 'better-sqlite3',
    home: SQL_HOMES,
    why: 'SQL lives in src/store/ and src/memoir-index/ (and the council storage)',
  },
  {
    name: 'pg',
    home: ['src/council/pg-storage.ts'],
    why: 'PostgreSQL is reached through the council storage (src/council/pg-storage.ts) alone',
  },
  // One decision about the node flags a worker inherits (`node --input-type=module` broke every worker).
  ...['node:worker_threads', 'worker_threads'].map((name) => ({
    name,
    importNames: ['Worker'],
    home: ['src/runtime/worker-start.ts'],
    why: 'a worker thread starts through startWorker (src/runtime/worker-start.ts), which decides the node flags it inherits',
    typesFrom: ['src/**'],
  })),
];

const level = new Map(FLOORS.flatMap((names, i) => names.map((n) => [n, FLOORS.length - 1 - i])));
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const target = (name) => (name.endsWith('.ts') ? `${esc(name.slice(0, -3))}\\.js$` : `${esc(name)}/`);

/** Patterns forbidding imports of `names` from a file at the top of src/ (./x) or inside a directory (../x, ../../x). */
function forbidden(names, atRoot, message) {
  if (names.length === 0) return [];
  const prefix = atRoot ? '^\\./' : '^(\\.\\./)+';
  return [{ regex: `${prefix}(${names.map(target).join('|')})`, message }];
}

const matches = (globs, files) =>
  globs.some((g) => files.some((f) => f === g || (g.endsWith('/**') && f.startsWith(g.slice(0, -2)))));

function packagePaths(files) {
  return PACKAGE_HOMES.filter((p) => !matches(p.home, files)).map((p) => ({
    name: p.name,
    ...(p.importNames ? { importNames: p.importNames } : {}),
    message: `${p.why}.`,
    allowTypeImports: matches(p.typesFrom ?? [], files),
  }));
}

const WRITE = {
  selector: "CallExpression[callee.property.name='write'][callee.object.property.name=/^(stdout|stderr)$/]",
  message:
    'Human output goes through src/output (writeText, note, warn: sanitised for the terminal); only main.ts writes errors.',
};
const SQL = [
  {
    selector:
      'CallExpression[callee.property.name=/^(prepare|pragma|exec)$/][arguments.0.type=/^(Literal|TemplateLiteral)$/]',
    message: 'SQL lives in src/store/ or src/memoir-index/ (a prepared-statement repository), not here.',
  },
  {
    selector: 'TemplateElement[value.raw=/^\\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|PRAGMA)\\s/]',
    message: 'SQL lives in src/store/ or src/memoir-index/, not here.',
  },
  {
    selector: 'Literal[value=/^\\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|PRAGMA)\\s/]',
    message: 'SQL lives in src/store/ or src/memoir-index/, not here.',
  },
];

/** One config block per unit of the tree (a directory, a command group, a file at the top of src/). */
function layerBlock(files, name, atRoot, extraPatterns = []) {
  const lvl = level.get(name);
  const above = [...level].filter(([, l]) => l > lvl).map(([n]) => n);
  const patterns = [
    ...forbidden(
      above,
      atRoot,
      `src/${name} may not import from a higher floor (docs/architecture.md, "The floors"): move the shared piece down instead.`,
    ),
    ...(name === 'output'
      ? forbidden(['ui'], false, 'output never imports ui: move the shared piece (e.g. the palette) into src/output.')
      : []),
    ...(name === 'ui'
      ? forbidden(
          ['store'],
          false,
          'Screens take data by props; they never open the database (type imports are fine).',
        ).map((p) => ({ ...p, allowTypeImports: true }))
      : []),
    ...extraPatterns,
  ];
  const sqlHome = matches(SQL_HOMES, files);
  const writeHome = name === 'output' || name === 'main.ts';
  const paths = packagePaths(files);
  return {
    files,
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns }],
      'no-restricted-syntax': [
        'error',
        ...dynamicImports(paths, patterns),
        ...(sqlHome ? [] : SQL),
        ...(writeHome ? [] : [WRITE]),
      ],
    },
  };
}

/**
 * The same rules for `import()` expressions, which no-restricted-imports does not see. A type-only
 * allowance does not apply (an `import()` loads the module), nor does a rule on named imports
 * (which names a dynamic import takes is not in the expression).
 */
function dynamicImports(paths, patterns) {
  const re = (source) => source.replace(/\//g, '\\/');
  return [
    ...patterns.map((p) => ({ selector: `ImportExpression[source.value=/${re(p.regex)}/]`, message: p.message })),
    ...paths
      .filter((p) => !p.importNames)
      .map((p) => ({ selector: `ImportExpression[source.value='${p.name}']`, message: p.message })),
  ];
}

/** Modules at the top of src/commands that every group may import: the shared base, no group's helpers. */
// fast-flags and filter: the zod-free side of shared options (lazy options, commands/types.ts); spec: the
// registry's vocabulary and the flags several groups declare (commands/spec.ts); spec-schema: a command's
// zod schema derived from its declaration.
const SHARED_COMMAND_MODULES = ['types', 'options', 'option-errors', 'fast-flags', 'filter', 'spec', 'spec-schema'];
const GROUP_MESSAGE =
  "A command group never imports another group's helpers: move the shared piece to src/commands/options.ts or down into the domain.";

/** The config blocks for the repository at `root`. Throws when a directory under src/ is on no floor. */
export function layerBlocks(root) {
  const src = join(root, 'src');
  const entries = readdirSync(src, { withFileTypes: true }).map((d) =>
    d.isDirectory() ? d.name : d.name.replace(/\.tsx?$/, '.ts'),
  );
  const unplaced = entries.filter((n) => !level.has(n));
  if (unplaced.length > 0)
    throw new Error(
      `src/${unplaced.join(', src/')} is on no floor: add it to FLOORS in eslint.layers.js (see docs/architecture.md, "The floors")`,
    );
  // Every floor gets its rules, planned ones too (a new src/train/ is checked from its first file).
  const units = [...level.keys()];
  const groups = readdirSync(join(src, 'commands'), { withFileTypes: true }).filter((d) => d.isDirectory());
  return [
    ...units
      .filter((n) => n.endsWith('.ts'))
      .map((n) => layerBlock([`src/${n}`, `src/${n.replace(/\.ts$/, '.tsx')}`], n, true)),
    ...units.filter((n) => !n.endsWith('.ts') && n !== 'commands').map((n) => layerBlock([`src/${n}/**`], n, false)),
    // Commands: each file at the top of src/commands is a group of its own.
    layerBlock(['src/commands/*.ts'], 'commands', false, [{ regex: '^\\./[^/]+/', message: GROUP_MESSAGE }]),
    ...groups.map((d) =>
      layerBlock([`src/commands/${d.name}/**`], 'commands', false, [
        { regex: `^\\.\\./(?!\\.\\./|(${SHARED_COMMAND_MODULES.join('|')})\\.js$)`, message: GROUP_MESSAGE },
      ]),
    ),
    // The council's storage may hold SQL; the rest of src/council may not.
    layerBlock(
      [
        'src/council/storage.ts',
        'src/council/sqlite-storage.ts',
        'src/council/pg-storage.ts',
        'src/council/pg-schema.ts',
      ],
      'council',
      false,
    ),
    // The one place that starts worker threads.
    layerBlock(['src/runtime/worker-start.ts'], 'runtime', false),
  ];
}
