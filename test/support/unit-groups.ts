import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * What node's test runner is given for a run of unit tests alone. A process per file costs about 0.4 s
 * of CPU before its first test (node and tsx start), which sixty files pay for twice over on two cores;
 * so the files of each folder beneath test/unit run together, one process per folder. Those files must
 * leave the process as they found it; a test that changes it (the environment, a cache of the harness,
 * tight timers) sits in test/unit itself, where each file keeps a process of its own.
 *
 * Files alone come first: the longest of them (bench-knee, temporal-cli) mostly wait on real time, and
 * started last they would end the run long after the rest. Then the folders, those with most files
 * first: they take longest. Node's runner starts files in the sorted order of their paths, not in the
 * order given, so each process gets an entry written into `dir` that imports its files, and the
 * entries' names sort in the order wanted.
 */
export function unitGroups(root: string, files: readonly string[], dir: string): string[] {
  const alone: [string, string[]][] = [];
  const byFolder = new Map<string, string[]>();
  for (const file of files) {
    const folder = dirname(file);
    if (folder === join('test', 'unit')) alone.push([file.replace(/\.test\.ts$/, ''), [file]]);
    else byFolder.set(folder, [...(byFolder.get(folder) ?? []), file]);
  }
  const processes = [...alone, ...[...byFolder].sort(([, a], [, b]) => b.length - a.length)];
  const digits = String(processes.length).length;
  return processes.map(([name, members], index) => {
    const entry = join(dir, `${String(index).padStart(digits, '0')}-${name.replaceAll('/', '-')}.mjs`);
    const imports = members.map((file) => `import ${JSON.stringify(pathToFileURL(join(root, file)).href)};`);
    writeFileSync(entry, `${imports.join('\n')}\n`);
    return entry;
  });
}
