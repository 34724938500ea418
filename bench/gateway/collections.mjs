// Loaded into a process of the gateway bench with `node --import` when it runs with --stalls: writes
// each garbage collection of that process, `[start, duration]` in ms since the epoch, one JSON line
// each, to $BENCH_STALLS_DIR/$BENCH_STALLS_ROLE-<pid>.jsonl (stalls.ts reads them). Plain JavaScript,
// so that it loads before any loader, in llmgw's gateway and its workers alike.
import { appendFileSync } from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';

const dir = process.env.BENCH_STALLS_DIR;
const role = process.env.BENCH_STALLS_ROLE;
if (dir && role) {
  const file = `${dir}/${role}-${process.pid}.jsonl`;
  let lines = '';
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      lines += `${JSON.stringify([performance.timeOrigin + entry.startTime, entry.duration])}\n`;
    }
  }).observe({ entryTypes: ['gc'] });
  // Written a few times a second rather than at each collection: a write at each would be the load.
  const flush = () => {
    if (lines) appendFileSync(file, lines);
    lines = '';
  };
  setInterval(flush, 200).unref();
  process.on('exit', flush);
}
