import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends every run with what was NOT checked and why (each skipped test and the note it gave with
 * `ctx.skip(note)`), and the proofs that did run (annotations of type `proof` on passing tests).
 * With KOURAI_TEST_REPORT set, also writes both lists there as JSON (`.ci/run` reads it).
 */
export interface TestReport {
  skipped: { file: string; test: string; note: string | null }[];
  proofs: { file: string; test: string; message: string }[];
}

export default class SkipsAndProofs implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const report: TestReport = { skipped: [], proofs: [] };
    for (const m of modules) {
      const file = relative(process.cwd(), m.moduleId);
      for (const t of m.children.allTests()) {
        const r = t.result();
        if (r.state === 'skipped') report.skipped.push({ file, test: t.fullName, note: r.note ?? null });
        if (r.state === 'passed')
          for (const a of t.annotations())
            if (a.type === 'proof') report.proofs.push({ file, test: t.fullName, message: a.message });
      }
    }
    const out: string[] = [''];
    if (report.skipped.length > 0) {
      out.push(`NOT CHECKED in this run (${report.skipped.length} skipped):`);
      for (const s of report.skipped)
        out.push(`  - ${s.file} > ${s.test}: ${s.note ?? 'skipped without a reason (give one with ctx.skip(note))'}`);
    }
    for (const p of report.proofs) out.push(`checked: ${p.message}`);
    process.stdout.write(`${out.join('\n')}\n`);
    if (process.env.KOURAI_TEST_REPORT)
      writeFileSync(process.env.KOURAI_TEST_REPORT, `${JSON.stringify(report, null, 1)}\n`);
  }
}
