import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../../src/cli.js';
import { resolveOptions } from '../../src/run-command.js';
import { writeSafetensors } from '../../src/tensor/safetensors.js';
import { assertBuilt, BIN, ROOT } from '../helpers/bin.js';
import { testCtx } from '../helpers/ctx.js';

/**
 * Every `kourai` command in the README's shell blocks, run as a new user would: in document
 * order, in one home that starts with the sample forge (`kourai memoir synth`, the README's first
 * command), through a real shell with `kourai` on the PATH. The files and variables the README
 * expects the user to bring (entries.ndjson, $M, $S, delta.json, …) are made here; the few
 * placeholders it shows (`sha256:…`, `<entry_id>`) are replaced as listed below, each with why.
 * A command added to the README runs here the next time the suite runs.
 */
export interface ReadmeCommand {
  line: number;
  command: string;
}

/** `kourai` command lines of the ```sh blocks (continuation lines joined). */
export function readmeCommands(text: string): ReadmeCommand[] {
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
    while (full.trimEnd().endsWith('\\') && i + 1 < lines.length) full = `${full.trimEnd().slice(0, -1)} ${(lines[++i] as string).trim()}`;
    if (/(^|[|&;(]\s*)kourai /.test(full.trim())) out.push({ line: start + 1, command: full.trim() });
  }
  return out;
}

/** How a command is run, when not simply "exit 0". Keyed by a unique part of the README line. */
const SPECIAL: { match: string; exit?: number; stderr?: RegExp; service?: true; shell?: string; slow?: true; why: string }[] = [
  {
    match: 'kourai federate simulate',
    slow: true,
    why: 'an experiment of many trained federations (minutes): run with KOURAI_SLOW=1 (npm run test:slow); the default run checks that each line parses to the command (its own tests: test/simulation/)',
  },
  { match: 'source <(kourai completion zsh)', shell: 'zsh', why: 'a zsh script: sourced by zsh after compinit (skipped where zsh is not installed)' },
  {
    match: 'kourai federate consent      ',
    exit: 2,
    stderr: /^kourai: the Sovereignty Moment needs an interactive terminal\n {2}hint: pass --allow/,
    why: 'a screen: here without a terminal it must name the flags (the screen itself: test/e2e/privacy-tty.e2e.test.ts)',
  },
  {
    match: '--proposed-file proposal.py',
    exit: 2,
    stderr: /^kourai: this session cannot show the feedback prompt \(no terminal, CI or --no-input\): pass --rating 1-5 and --kind/,
    why: 'the Likert prompt: without a terminal it names the flags that answer it (the prompt itself: test/e2e/terminal.test.ts)',
  },
  {
    match: 'kourai federate round',
    exit: 3,
    stderr: /^kourai: this forge has not joined a council: nothing was sent\n/,
    why: 'this run joins no council (the README’s is a placeholder): a round refuses, naming `federate join`; rounds against a real council: test/e2e/federation-round.e2e.test.ts',
  },
  { match: 'kourai whisper --next-round', exit: 3, stderr: /^kourai: this forge has not joined a council/, why: 'as `federate round --dry-run` (the same function)' },
  { match: 'kourai federate scene --round 1', exit: 2, stderr: /^kourai: this forge has not joined a council: pass --memoir PATH/, why: 'the joined council’s events memoir is the default; none here' },
  { match: 'kourai council serve', service: true, why: 'runs until Ctrl-C: started, waited for until it listens, then sent SIGINT (exit 0)' },
  {
    match: 'kourai federate join',
    exit: 9,
    stderr: /^kourai: council: cannot reach https:\/\/council\.example\.org/,
    why: 'council.example.org is the README’s placeholder; joining a real council: test/e2e/federate.e2e.test.ts',
  },
];

/** README placeholders and what this run puts in their place. */
const PLACEHOLDERS: [RegExp, (v: Vars) => string, string][] = [
  [/sha256:(9f2c)?…/g, (v) => v.fingerprint, 'a base-model fingerprint'],
  [/<entry_id>/g, (v) => v.lastEntry, 'the entry id the previous feedback printed'],
];

interface Vars {
  fingerprint: string;
  lastEntry: string;
}

let dir: string;
let env: Record<string, string>;
const vars: Vars = { fingerprint: `sha256:${'ab'.repeat(32)}`, lastEntry: '' };
const commands = readmeCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'));

function sh(command: string, shell = 'bash'): { code: number; stdout: string; stderr: string } {
  const script = shell === 'zsh' ? `autoload -U compinit && compinit -u && ${command}` : command;
  const r = spawnSync(shell, ['-c', script], { cwd: dir, env, encoding: 'utf8', input: '', timeout: 300_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'kourai-readme-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'kourai'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  // The README's "a host writes NDJSON" stand-in: two entries on stdout.
  const entry = (n: number): string => JSON.stringify({ scene_id: 'session-1a2b3c4d.turn-4', agent: 'metis', source: 'specialist_proposed', agent_proposed: `plan ${n}` });
  writeFileSync(join(bin, 'host-writes-ndjson'), `#!/bin/sh\nprintf '%s\\n' '${entry(1)}' '${entry(2)}'\n`);
  chmodSync(join(bin, 'kourai'), 0o755);
  chmodSync(join(bin, 'host-writes-ndjson'), 0o755);
  env = { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: dir, KOURAI_HOME: join(dir, 'home'), NO_COLOR: '1', LANG: 'C.UTF-8', TOKEN: 'kt_readme_placeholder' };
  // The files the README's commands read, as a user would have them.
  writeFileSync(join(dir, 'entries.ndjson'), `${entry(3)}\n${entry(4)}\n`);
  writeFileSync(join(dir, 'proposal.py'), 'def total(xs):\n    return sum(xs)\n');
  writeFileSync(join(dir, 'mine.py'), 'def total(xs: list[int]) -> int:\n    return sum(xs)\n');
  writeFileSync(join(dir, 'fix.json'), JSON.stringify({ agent: 'techne' }));
  writeFileSync(join(dir, 'a.ts'), 'function f(x: number): number {\n  if (x < 0) return 0;\n  return x * 2;\n}\n');
  writeFileSync(join(dir, 'b.ts'), 'function f(x) {\n  let r;\n  if (x >= 0) { r = x * 2 } else { r = 0 }\n  return r\n}\n');
  writeFileSync(join(dir, 'delta.json'), JSON.stringify({ tensors: [{ name: 'w', shape: [2, 2], dtype: 'F32', data: [0.1, -0.2, 0.05, 0.3] }] }));
  writeFileSync(join(dir, 'layouts.json'), JSON.stringify({ '*': [{ name: 'w', shape: [2, 2] }] }));
  // Bulyan with f = 2 needs n ≥ 4f + 3 = 11 updates.
  for (let i = 0; i < 11; i++) writeFileSync(join(dir, `u${i}.safetensors`), writeSafetensors([{ name: 'w', shape: [2, 2], data: Float64Array.from([i, 1, 2, 3].map((x) => x + i / 10)) }]));
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** $M (a session's memoir) and $S (a Techne scene in it) once the sample forge exists. */
function sessionVars(): void {
  const forges = join(dir, 'home', 'projects', 'ariadne', 'sample-forge', '.kourai', 'forges');
  if (env.M || !existsSync(forges)) return;
  const session = readdirSync(forges).sort()[0] as string;
  const memoir = join(forges, session, 'memoir.jsonl');
  const techne = readFileSync(memoir, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { agent: string; scene_id: string })
    .find((e) => e.agent === 'techne');
  env.M = memoir;
  env.S = techne?.scene_id ?? '';
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function serve(command: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn('bash', ['-c', `exec ${command.replace(/--port \S+/, '')} --port 0`], { cwd: dir, env });
    let stderr = '';
    let sent = false;
    p.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      // One Ctrl-C (a second one means "exit at once").
      if (!sent && /listening/.test(stderr)) sent = p.kill('SIGINT');
    });
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('the README, run as shown on the sample forge', () => {
  it('finds the commands (the extraction itself)', () => {
    expect(commands.length).toBeGreaterThan(60);
    expect(commands[0]?.command).toBe('kourai memoir synth && kourai memoir stats');
    for (const s of SPECIAL) expect(commands.filter((c) => c.command.includes(s.match)).length, s.match).toBeGreaterThan(0);
  });

  it.each(commands)('README.md:$line  $command', async ({ command }) => {
    if (!command.startsWith('kourai memoir synth &&')) sessionVars();
    let run = command.replace(/\s+#.*$/, '');
    for (const [re, value] of PLACEHOLDERS) run = run.replace(re, value(vars));
    const special = SPECIAL.find((s) => command.includes(s.match));
    if (special?.slow && !process.env.KOURAI_SLOW) {
      const argv = run.split('|')[0]!.trim().split(/\s+/).slice(1);
      let reached = '';
      const program = buildCli(() => testCtx(), () => undefined, async (load, raw) => {
        await resolveOptions((await load()).default as never, raw);
        return 0;
      });
      program.hook('preAction', (_root, action) => {
        reached = action.name();
      });
      await program.parseAsync(argv, { from: 'user' });
      expect(reached).toBe(argv[1]);
      return;
    }
    if (special?.service) {
      const r = await serve(run);
      expect(r.code, r.stderr).toBe(0);
      return;
    }
    if (special?.shell && spawnSync('sh', ['-c', `command -v ${special.shell}`]).status !== 0) return;
    const r = sh(run, special?.shell);
    expect(r.code, `${run}\n${r.stderr}`).toBe(special?.exit ?? 0);
    if (special?.stderr) expect(r.stderr).toMatch(special.stderr);
    if (/ --(nd)?json\b/.test(run) && !/>/.test(run)) {
      // One JSON document, or (a stream) one JSON record a line: stdout holds nothing else.
      const docs = r.stdout.trim() === '' ? [] : isJson(r.stdout) ? [JSON.parse(r.stdout) as unknown] : r.stdout.trim().split('\n').map((l) => JSON.parse(l) as unknown);
      const id = (docs[0] as { entry_id?: unknown } | undefined)?.entry_id;
      if (typeof id === 'string') vars.lastEntry = id;
    }
  });
});
