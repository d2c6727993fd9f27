import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/errors.js';
import { oneMemoir } from '../../../src/memoir/file/discover.js';

/** The one rule for "a memoir file or its directory" (memoir append and feedback both use it). */
describe('oneMemoir', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kourai-one-memoir-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'session'));
  mkdirSync(join(dir, 'empty'));
  writeFileSync(join(dir, 'session', 'memoir.jsonl'), '');
  const write = { command: 'memoir append', needs: ' (the memoir file, or its forge directory)', mustExist: false };
  const read = { command: 'feedback', needs: ': the memoir of the session', mustExist: true };

  it('a file, or a directory meaning its memoir.jsonl, relative to cwd', () => {
    for (const opts of [write, read]) {
      expect(oneMemoir(['session/memoir.jsonl'], dir, opts)).toBe(join(dir, 'session', 'memoir.jsonl'));
      expect(oneMemoir(['session'], dir, opts)).toBe(join(dir, 'session', 'memoir.jsonl'));
    }
  });

  it('what does not exist yet: created by a writer, not found (exit 6) where it must exist', () => {
    expect(oneMemoir(['new/memoir.jsonl'], dir, write)).toBe(join(dir, 'new', 'memoir.jsonl'));
    expect(oneMemoir(['empty'], dir, write)).toBe(join(dir, 'empty', 'memoir.jsonl'));
    expect(() => oneMemoir(['new/memoir.jsonl'], dir, read)).toThrow(
      expect.objectContaining({
        exitCode: ExitCode.notFound,
        message: expect.stringMatching(/^--memoir new\/memoir.jsonl: no such memoir/),
      }),
    );
    expect(() => oneMemoir(['empty'], dir, read)).toThrow(
      expect.objectContaining({
        exitCode: ExitCode.notFound,
        message: '--memoir empty: no memoir.jsonl in this directory',
      }),
    );
  });

  it('exactly one --memoir, the usage error naming the command', () => {
    expect(() => oneMemoir([], dir, write)).toThrow(
      expect.objectContaining({
        exitCode: ExitCode.usage,
        message: 'memoir append needs --memoir PATH (the memoir file, or its forge directory)',
      }),
    );
    expect(() => oneMemoir(['a', 'b'], dir, read)).toThrow(
      expect.objectContaining({ exitCode: ExitCode.usage, message: 'feedback takes exactly one --memoir' }),
    );
  });
});
