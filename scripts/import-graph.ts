// The import graph of src/, read from the files themselves: every import and export-from statement,
// `import type` included (a cycle of types still ties two folders together), and dynamic imports. A
// small reader rather than TypeScript's: TypeScript 7 has no stable API to ask, and the project writes
// every import with its file's extension, so a relative specifier names its file.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';

export interface Import {
  /** The importing file, from the repository root (`src/api/app.ts`). */
  from: string;
  /** The imported file from the repository root, or the package's specifier (`zod`, `node:fs`). */
  to: string;
  /** Only types are imported: gone at run time, so no bundle holds the file. */
  typeOnly: boolean;
}

/** The text with its comments blanked (strings kept, lines in place), so that no commented import is read. */
export function withoutComments(text: string): string {
  const out = [...text];
  const blank = (from: number, to: number) => {
    for (let i = from; i < to; i++) if (out[i] !== '\n') out[i] = ' ';
  };
  // Brace depths at which a template literal's `${` opened: its `}` goes back into the template.
  const templates: number[] = [];
  let depth = 0;
  let i = 0;
  const template = () => {
    while (i < text.length && text[i] !== '`') {
      if (text[i] === '\\') i++;
      else if (text[i] === '$' && text[i + 1] === '{') {
        templates.push(depth++);
        i += 2;
        return;
      }
      i++;
    }
    i++;
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      blank(i, end < 0 ? text.length : end);
      i = end < 0 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      blank(i, end < 0 ? text.length : end + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === "'" || c === '"') {
      // A string ends at its quote or, for a quote inside a regular expression, at the line's end.
      for (i++; i < text.length && text[i] !== c && text[i] !== '\n'; i++) if (text[i] === '\\') i++;
      i++;
    } else if (c === '`') {
      i++;
      template();
    } else if (c === '{') {
      depth++;
      i++;
    } else if (c === '}') {
      depth--;
      i++;
      if (templates.at(-1) === depth) {
        templates.pop();
        template();
      }
    } else i++;
  }
  return out.join('');
}

const STATIC = /^[ \t]*(import|export)\s+(type\s+)?([^;'"]*?)\s*from\s*(['"])([^'"]+)\4/gm;
const BARE = /^[ \t]*import\s*(['"])([^'"]+)\1/gm;
const DYNAMIC = /\bimport\s*\(\s*(['"])([^'"]+)\1\s*\)/g;

/** The specifiers a file imports, each with whether it brings types only. */
export function specifiersOf(text: string): { specifier: string; typeOnly: boolean }[] {
  const code = withoutComments(text);
  const found: { specifier: string; typeOnly: boolean }[] = [];
  for (const [, , type, clause, , specifier] of code.matchAll(STATIC)) {
    // `import { type A, type B } from`: every name a type, so nothing of the file is left at run time.
    const names = /^\{([^}]*)\}$/
      .exec(clause.trim())?.[1]
      .split(',')
      .filter((name) => name.trim());
    const allTypes =
      names !== undefined && names.length > 0 && names.every((name) => /^\s*type\s/.test(name));
    found.push({ specifier, typeOnly: Boolean(type) || allTypes });
  }
  for (const [, , specifier] of code.matchAll(BARE)) found.push({ specifier, typeOnly: false });
  for (const [, , specifier] of code.matchAll(DYNAMIC)) found.push({ specifier, typeOnly: false });
  return found;
}

/** Every TypeScript and JavaScript file beneath `dir` (from the repository root). */
export function sourceFiles(root: string, dir = 'src'): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory()
        ? sourceFiles(root, posix.join(dir, entry.name))
        : /\.(ts|tsx|js|mjs)$/.test(entry.name)
          ? [posix.join(dir, entry.name)]
          : [],
    )
    .sort();
}

/** Every import of every file of src/, relative specifiers resolved to files from the repository root. */
export function srcImports(root: string): Import[] {
  return sourceFiles(root).flatMap((from) =>
    specifiersOf(readFileSync(join(root, from), 'utf8')).map(({ specifier, typeOnly }) => ({
      from,
      to: specifier.startsWith('.')
        ? relative(root, join(root, dirname(from), specifier))
            .split('\\')
            .join('/')
        : specifier,
      typeOnly,
    })),
  );
}

/** The node of the folder graph a path of src/ belongs to: its top-level folder (`src/api/`) or file (`src/config.ts`). */
export function nodeOf(path: string): string {
  const [top, first, ...rest] = path.split('/');
  if (top !== 'src' || first === undefined) return path;
  return rest.length > 0 ? `src/${first}/` : `src/${first}`;
}

/** The cycles of a directed graph: each strongly connected set of two or more nodes (Tarjan's algorithm). */
export function cyclesOf(edges: Iterable<readonly [string, string]>): string[][] {
  const next = new Map<string, Set<string>>();
  for (const [from, to] of edges) {
    if (!next.has(from)) next.set(from, new Set());
    if (!next.has(to)) next.set(to, new Set());
    next.get(from)?.add(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
    }
    if (low.get(node) !== index.get(node)) return;
    const members: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      members.push(member);
      if (member === node) break;
    }
    if (members.length > 1) cycles.push(members.sort());
  };
  for (const node of next.keys()) if (!index.has(node)) visit(node);
  return cycles;
}
