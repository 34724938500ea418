/**
 * The test files a run takes, sorted: `args` are parts of paths; a file is taken when its path holds
 * one of them (every file when none is given) and none of those given as `!PART`.
 */
export function selectTests(files: readonly string[], args: readonly string[]): string[] {
  const only = args.filter((arg) => !arg.startsWith('!'));
  const except = args.filter((arg) => arg.startsWith('!')).map((arg) => arg.slice(1));
  return files
    .filter((file) => only.length === 0 || only.some((part) => file.includes(part)))
    .filter((file) => !except.some((part) => file.includes(part)))
    .sort();
}
