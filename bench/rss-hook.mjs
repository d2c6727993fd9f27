// --import hook for benchmarks: writes the process's peak resident set (KB) on exit.
import { writeFileSync } from 'node:fs';
process.on('exit', () => {
  if (process.env.KOURAI_RSS_FILE) writeFileSync(process.env.KOURAI_RSS_FILE, String(process.resourceUsage().maxRSS));
});
