import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../src/cli.js';
import { resolveOptions } from '../../src/run-command.js';
import { writeSafetensors } from '../../src/tensor/safetensors.js';
import { assertBuilt, BIN, ROOT } from '../helpers/bin.js';
import { testCtx } from '../helpers/ctx.js';

/**
 * Every `kourai` command in the shell blocks of the README and of every docs page, run as a new user
 * would: in document order, through a real shell with `kourai` on the PATH. The README's tour runs in
 * a fresh home of its own (its council is served in the background, as the tour says); the docs pages
 * run in one home that starts with the sample forge, in the order of MANUAL. The files and variables
 * the pages expect the user to bring (entries.ndjson, $M, $S, delta.json, …) are made here; the few
 * placeholders they show (`sha256:…`, `<entry_id>`) are replaced as listed below, each with why.
 * A command added to a page runs here the next time the suite runs.
 */
export interface ReadmeCommand {
  line: number;
  command: string;
}

/** `kourai` command lines of the ```sh blocks (continuation lines joined); with `every`, all their command lines. */
export function readmeCommands(text: string, every = false): ReadmeCommand[] {
  const lines = text.split('\n');
  const out: ReadmeCommand[] = [];
  let lang: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] as string;
    if (l.startsWith('```')) {
      lang = lang === null ? l.slice(3).trim() : null;
      continue;
    }
    if (lang !== 'sh') continue;
    const start = i;
    let full = l;
    while (full.trimEnd().endsWith('\\') && i + 1 < lines.length)
      full = `${full.trimEnd().slice(0, -1)} ${(lines[++i] as string).trim()}`;
    const command = full.trim();
    if (every ? command !== '' && !command.startsWith('#') : /(^|[|&;(]\s*)kourai /.test(command))
      out.push({ line: start + 1, command });
  }
  return out;
}

/** The docs pages, in the order their commands run (one home, after the sample forge is made). */
const MANUAL = [
  'memoir',
  'screens',
  'privacy',
  'learning',
  'council',
  'federation',
  'evaluation',
  'performance',
  'exit-codes',
  'architecture',
  'testing',
].map((p) => `docs/${p}.md`);

/** How a command is run, when not simply "exit 0". Keyed by a unique part of the line; `docs` limits it to the docs pages. */
const SPECIAL: {
  match: string;
  docs?: true;
  exit?: number;
  stderr?: RegExp;
  service?: true;
  shell?: string;
  slow?: true;
  why: string;
}[] = [
  {
    match: 'kourai federate simulate',
    slow: true,
    why: 'an experiment of many trained federations (minutes): run with KOURAI_SLOW=1 (npm run test:slow); the default run checks that each line parses to the command (its own tests: test/simulation/)',
  },
  { match: 'source <(kourai completion zsh)', shell: 'zsh', why: 'a zsh script: sourced by zsh after compinit' },
  {
    match: 'kourai federate consent      ',
    docs: true,
    exit: 2,
    stderr: /^kourai: the Sovereignty Moment needs an interactive terminal\n {2}hint: pass --allow/,
    why: 'a screen: here without a terminal it must name the flags (the screen itself: test/e2e/privacy-tty.e2e.test.ts)',
  },
  {
    match: '--proposed-file proposal.py',
    docs: true,
    exit: 2,
    stderr:
      /^kourai: this session cannot show the feedback prompt \(no terminal, CI or --no-input\): pass --rating 1-5 and --kind/,
    why: 'the Likert prompt: without a terminal it names the flags that answer it (the prompt itself: test/e2e/terminal.test.ts)',
  },
  {
    match: 'kourai federate round',
    docs: true,
    exit: 3,
    stderr: /^kourai: this forge has not joined a council: nothing was sent\n/,
    why: 'the docs home joins no council (the pages show a placeholder URL); the README tour runs a real round',
  },
  {
    match: 'kourai memoir replay --agent techne --at',
    docs: true,
    exit: 2,
    stderr: /^kourai: --at: only the replay screen starts at an entry/,
    why: 'the replay screen: without a terminal the text replay refuses an --at it would ignore (the screen itself: test/e2e/terminal.test.ts)',
  },
  {
    match: 'kourai whisper --next-round',
    docs: true,
    exit: 3,
    stderr: /^kourai: this forge has not joined a council/,
    why: 'as `federate round --dry-run` (the same function)',
  },
  {
    match: 'kourai federate scene --round 1',
    docs: true,
    exit: 2,
    stderr: /^kourai: this forge has not joined a council: pass --memoir PATH/,
    why: 'the joined council’s events memoir is the default; none in the docs home',
  },
  {
    match: 'kourai council serve',
    service: true,
    why: 'runs until Ctrl-C: started, waited for until it listens; sent SIGINT (exit 0), or kept for the tour when the line ends in &',
  },
  {
    match: 'kourai federate join --server https://council.example.org',
    docs: true,
    exit: 9,
    stderr: /^kourai: council: cannot reach https:\/\/council\.example\.org/m,
    why: 'council.example.org is the pages’ placeholder; the README tour joins a real council',
  },
];

/** Placeholders the pages show, and what this run puts in their place. */
const PLACEHOLDERS: [RegExp, (h: Home) => string, string][] = [
  [/sha256:(9f2c)?…/g, (h) => h.vars.fingerprint, 'a base-model fingerprint'],
  [/<entry_id>/g, (h) => h.vars.lastEntry, 'the entry id the previous feedback printed'],
  [
    /127\.0\.0\.1:7470/g,
    (h) => `127.0.0.1:${h.port}`,
    'the tour’s council port (a free one here, so parallel runs do not collide)',
  ],
];

interface Home {
  dir: string;
  env: Record<string, string>;
  vars: { fingerprint: string; lastEntry: string };
  port: number;
  /** Services the page left running (`kourai council serve … &`), stopped when the suite ends. */
  services: ChildProcess[];
}

function pageCommands(page: string, every = false): (ReadmeCommand & { page: string })[] {
  return readmeCommands(readFileSync(join(ROOT, page), 'utf8'), every).map((c) => ({ ...c, page }));
}
/** The tour runs every line of its blocks: it makes its own files (layouts.json, a.ts, …). */
const tourCommands = pageCommands('README.md', true);
const manualCommands = MANUAL.flatMap((p) => pageCommands(p));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function makeHome(files: boolean): Promise<Home> {
  const dir = mkdtempSync(join(tmpdir(), 'kourai-readme-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'kourai'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'kourai'), 0o755);
  const env = {
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: dir,
    KOURAI_HOME: join(dir, 'home'),
    NO_COLOR: '1',
    LANG: 'C.UTF-8',
    TOKEN: 'kt_readme_placeholder',
  };
  const home: Home = {
    dir,
    env,
    vars: { fingerprint: `sha256:${'ab'.repeat(32)}`, lastEntry: '' },
    port: await freePort(),
    services: [],
  };
  if (!files) return home;
  // The docs' "a host writes NDJSON" stand-in: two entries on stdout.
  const entry = (n: number): string =>
    JSON.stringify({
      scene_id: 'session-1a2b3c4d.turn-4',
      agent: 'metis',
      source: 'specialist_proposed',
      agent_proposed: `plan ${n}`,
    });
  writeFileSync(join(bin, 'host-writes-ndjson'), `#!/bin/sh\nprintf '%s\\n' '${entry(1)}' '${entry(2)}'\n`);
  chmodSync(join(bin, 'host-writes-ndjson'), 0o755);
  // The files the docs' commands read, as a user would have them.
  writeFileSync(join(dir, 'entries.ndjson'), `${entry(3)}\n${entry(4)}\n`);
  writeFileSync(join(dir, 'proposal.py'), 'def total(xs):\n    return sum(xs)\n');
  writeFileSync(join(dir, 'mine.py'), 'def total(xs: list[int]) -> int:\n    return sum(xs)\n');
  writeFileSync(join(dir, 'fix.json'), JSON.stringify({ agent: 'techne' }));
  writeFileSync(join(dir, 'a.ts'), 'function f(x: number): number {\n  if (x < 0) return 0;\n  return x * 2;\n}\n');
  writeFileSync(
    join(dir, 'b.ts'),
    'function f(x) {\n  let r;\n  if (x >= 0) { r = x * 2 } else { r = 0 }\n  return r\n}\n',
  );
  writeFileSync(
    join(dir, 'delta.json'),
    JSON.stringify({ tensors: [{ name: 'w', shape: [2, 2], dtype: 'F32', data: [0.1, -0.2, 0.05, 0.3] }] }),
  );
  writeFileSync(join(dir, 'layouts.json'), JSON.stringify({ '*': [{ name: 'w', shape: [2, 2] }] }));
  // Bulyan with f = 2 needs n ≥ 4f + 3 = 11 updates.
  for (let i = 0; i < 11; i++)
    writeFileSync(
      join(dir, `u${i}.safetensors`),
      writeSafetensors([{ name: 'w', shape: [2, 2], data: Float64Array.from([i, 1, 2, 3].map((x) => x + i / 10)) }]),
    );
  return home;
}

let tour: Home;
let manual: Home;

function sh(home: Home, command: string, shell = 'bash'): { code: number; stdout: string; stderr: string } {
  const script = shell === 'zsh' ? `autoload -U compinit && compinit -u && ${command}` : command;
  const r = spawnSync(shell, ['-c', script], {
    cwd: home.dir,
    env: home.env,
    encoding: 'utf8',
    input: '',
    timeout: 300_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  assertBuilt();
  tour = await makeHome(false);
  manual = await makeHome(true);
  const synth = sh(manual, 'kourai memoir synth');
  if (synth.code !== 0) throw new Error(`the docs home's sample forge: ${synth.stderr}`);
}, 120_000);

afterAll(() => {
  for (const h of [tour, manual]) {
    if (!h) continue;
    for (const p of h.services) p.kill('SIGINT');
    rmSync(h.dir, { recursive: true, force: true });
  }
});

/** $M (a session's memoir) and $S (a Techne scene in it) once the sample forge exists. */
function sessionVars(home: Home): void {
  const forges = join(home.dir, 'home', 'projects', 'ariadne', 'sample-forge', '.kourai', 'forges');
  if (home.env.M || !existsSync(forges)) return;
  const session = readdirSync(forges).sort()[0] as string;
  const memoir = join(forges, session, 'memoir.jsonl');
  const techne = readFileSync(memoir, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { agent: string; scene_id: string })
    .find((e) => e.agent === 'techne');
  home.env.M = memoir;
  home.env.S = techne?.scene_id ?? '';
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Starts a council; resolves once it listens. In the foreground form it is then sent SIGINT and must exit 0. */
function serve(home: Home, command: string, background: boolean): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const line = command.replace(/\s*&\s*$/, '').replace(/--port \S+/, '');
    const p = spawn('bash', ['-c', `exec ${line} --port ${background ? home.port : 0}`], {
      cwd: home.dir,
      env: home.env,
    });
    let stderr = '';
    let sent = false;
    p.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      if (sent || !/listening/.test(stderr)) return;
      sent = true;
      if (background) {
        home.services.push(p);
        resolve({ code: 0, stderr });
      } else p.kill('SIGINT'); // one Ctrl-C (a second one means "exit at once")
    });
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stderr }));
  });
}

async function runLine(home: Home, c: ReadmeCommand & { page: string }, skip: (note: string) => void): Promise<void> {
  const { command } = c;
  sessionVars(home);
  let run = command.replace(/\s+#.*$/, '');
  for (const [re, value] of PLACEHOLDERS) run = run.replace(re, value(home));
  const special = SPECIAL.find((s) => command.includes(s.match) && (!s.docs || c.page !== 'README.md'));
  if (special?.slow && !process.env.KOURAI_SLOW) {
    const argv = run.split('|')[0]!.trim().split(/\s+/).slice(1);
    let reached = '';
    const program = buildCli(
      () => testCtx(),
      () => undefined,
      async (load, raw) => {
        await resolveOptions((await load()).default as never, raw);
        return 0;
      },
    );
    program.hook('preAction', (_root, action) => {
      reached = action.name();
    });
    await program.parseAsync(argv, { from: 'user' });
    expect(reached).toBe(argv[1]);
    return;
  }
  if (special?.service) {
    const r = await serve(home, run, /&\s*$/.test(run));
    expect(r.code, r.stderr).toBe(0);
    return;
  }
  if (special?.shell && spawnSync('sh', ['-c', `command -v ${special.shell}`]).status !== 0)
    return skip(`${special.shell} is not installed: ${special.why} (.ci/run installs it)`);
  const r = sh(home, run, special?.shell);
  expect(r.code, `${run}\n${r.stderr}`).toBe(special?.exit ?? 0);
  if (special?.stderr) expect(r.stderr).toMatch(special.stderr);
  if (/ --(nd)?json\b/.test(run) && !/>/.test(run)) {
    // One JSON document, or (a stream) one JSON record a line: stdout holds nothing else.
    const docs =
      r.stdout.trim() === ''
        ? []
        : isJson(r.stdout)
          ? [JSON.parse(r.stdout) as unknown]
          : r.stdout
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as unknown);
    const id = (docs[0] as { entry_id?: unknown } | undefined)?.entry_id;
    if (typeof id === 'string') home.vars.lastEntry = id;
  }
}

describe('the README and the docs, run as shown', () => {
  it('finds the commands (the extraction itself), and every docs page is in MANUAL', () => {
    expect(tourCommands[0]?.command).toBe('kourai memoir synth --sessions 8 && kourai memoir stats');
    expect(manualCommands.length).toBeGreaterThan(60);
    expect(
      readdirSync(join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`)
        .sort(),
    ).toEqual([...MANUAL].sort());
    const all = [...tourCommands, ...manualCommands];
    for (const s of SPECIAL) expect(all.filter((c) => c.command.includes(s.match)).length, s.match).toBeGreaterThan(0);
  });

  describe('the README tour, in a fresh home', () => {
    it.for(tourCommands)('$page:$line  $command', { timeout: 300_000 }, async (c, ctx) =>
      runLine(tour, c, (note) => ctx.skip(note)),
    );
  });

  describe('the docs pages, in a home with the sample forge', () => {
    it.for(manualCommands)('$page:$line  $command', { timeout: 300_000 }, async (c, ctx) =>
      runLine(manual, c, (note) => ctx.skip(note)),
    );
  });
});
