// --import hook for benchmarks: on exit, writes the process's peak resident set (KB) to
// KOURAI_RSS_FILE and, when KOURAI_CPU_FILE is set, its CPU time (user + system, µs) there.
import { writeFileSync } from 'node:fs';
process.on('exit', () => {
  const u = process.resourceUsage();
  if (process.env.KOURAI_RSS_FILE) writeFileSync(process.env.KOURAI_RSS_FILE, String(u.maxRSS));
  if (process.env.KOURAI_CPU_FILE) writeFileSync(process.env.KOURAI_CPU_FILE, String(u.userCPUTime + u.systemCPUTime));
});
