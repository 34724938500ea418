// A test reporter that prints, after everything else, one line per failed test: its file, its name and
// the first line of its error. CI keeps only the tail of a run's output, so the failures must end it.
// JavaScript, not TypeScript: node loads reporters before `--import tsx` can register its loader.
import { relative } from 'node:path';

/** The first line of what failed: the error a test threw, not the runner's wrapper around it. */
function messageOf(error) {
  const cause = error?.cause;
  const text = cause instanceof Error ? cause.message : String(cause ?? error?.message ?? 'failed');
  return text.split('\n')[0];
}

export default async function* failuresReporter(source) {
  const failures = [];
  for await (const event of source) {
    // A suite fails because a test in it did: the test's own line says why.
    if (event.type !== 'test:fail' || event.data.details?.type === 'suite') continue;
    const file = event.data.file ? `${relative(process.cwd(), event.data.file)}: ` : '';
    failures.push(`  ${file}${event.data.name}: ${messageOf(event.data.details?.error)}`);
  }
  if (failures.length > 0)
    yield `\n${failures.length} failed test${failures.length === 1 ? '' : 's'}:\n${failures.join('\n')}\n`;
}
