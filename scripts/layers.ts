// The layers of src/: the table of docs/architecture.md (## Layers) is their one statement. This reads
// it, checks an import graph against it, and writes the Biome overrides that hold each file to its row
// (`npm run layers` rewrites them in biome.json after the table changed).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Import, nodeOf, sourceFiles } from './import-graph.ts';

export interface Layer {
  /** A folder of src/ (`src/api/`) or a file at its top (`src/config.ts`). */
  node: string;
  /** What its files may import of src/ besides themselves: folders, files, or any. */
  imports: string[] | 'any';
  /** The packages its files may import (`node:` modules among them): those named, or any. */
  packages: string[] | 'any';
}

const spans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map(([, text]) => text);

/** The rows of the table under `## Layers`. */
export function readLayers(markdown: string): Layer[] {
  const section = markdown.split(/^## Layers$/m)[1]?.split(/^## /m)[0] ?? '';
  const rows = section.split('\n').filter((line) => line.startsWith('| `'));
  return rows.map((row) => {
    const [node, , imports, packages] = row
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    return {
      node: spans(node)[0],
      imports: imports === 'any' ? 'any' : spans(imports),
      packages: packages === 'any' ? 'any' : packages === 'none' ? [] : spans(packages),
    };
  });
}

export const readRepositoryLayers = (root: string) =>
  readLayers(readFileSync(join(root, 'docs/architecture.md'), 'utf8'));

/** Whether `layer` lets its files import `to` (a file from the repository root, or a package). */
export function allows(layer: Layer, to: string): boolean {
  if (!to.startsWith('src/')) return layer.packages === 'any' || layer.packages.includes(to);
  const node = nodeOf(to);
  if (node === layer.node || layer.imports === 'any') return true;
  return layer.imports.some((allowed) => allowed === node || allowed === to);
}

/** One sentence per import its layer does not allow, and per allowance of a layer that no import uses. */
export function layerViolations(layers: readonly Layer[], imports: readonly Import[]): string[] {
  const byNode = new Map(layers.map((layer) => [layer.node, layer]));
  const refused = imports.flatMap(({ from, to }) => {
    const layer = byNode.get(nodeOf(from));
    if (!layer) return [`${from} is in ${nodeOf(from)}, which has no row in docs/architecture.md's layers`];
    return allows(layer, to) ? [] : [`${from} imports ${to}, which ${layer.node}'s row does not allow`];
  });
  const unused = layers.flatMap(({ node, imports: allowed }) =>
    allowed === 'any'
      ? []
      : allowed
          .filter(
            (target) =>
              !imports.some(
                ({ from, to }) => nodeOf(from) === node && (nodeOf(to) === target || to === target),
              ),
          )
          .map(
            (target) =>
              `${node}'s row allows ${target}, which none of its files imports: drop it from the row`,
          ),
  );
  return [...refused, ...unused];
}

export interface BiomeOverride {
  includes: string[];
  linter: {
    rules: {
      style: {
        noRestrictedImports: {
          level: 'error';
          options: { patterns: { group: string[]; message: string }[] };
        };
      };
    };
  };
}

const MAX_DEPTH_MESSAGE =
  'a layer whose packages are restricted has no subfolders (its rule allows ./* only)';

/**
 * The overrides that hold each layer's files to its row, one per depth of its folder (a relative
 * specifier leaves the folder with one `../` more per level): the folders and files of src/ it may not
 * import are refused by their specifiers. A layer whose packages are restricted refuses everything
 * (`**`) but itself, what it may import and its packages.
 */
export function biomeOverrides(layers: readonly Layer[], files: readonly string[]): BiomeOverride[] {
  return layers.flatMap((layer) => {
    if (layer.imports === 'any' && layer.packages === 'any') return [];
    const allowed = layer.imports === 'any' ? 'any' : layer.imports;
    const folder = layer.node.endsWith('/');
    const depths = folder
      ? [
          ...new Set(
            files.filter((file) => file.startsWith(layer.node)).map((file) => file.split('/').length - 3),
          ),
        ].sort((a, b) => a - b)
      : [0];
    const ours =
      allowed === 'any'
        ? 'any of src/'
        : allowed.length
          ? `of src/ only ${allowed.join(', ')}`
          : 'nothing of src/';
    const theirs =
      layer.packages === 'any'
        ? ''
        : layer.packages.length
          ? `; of packages only ${layer.packages.join(', ')}`
          : '; no package';
    const message = `${layer.node} imports ${ours}${theirs} (docs/architecture.md, Layers).`;
    return depths.flatMap((depth) => {
      // A file at the top of src/ reaches the others by ./, a folder's by one ../ per level.
      const up = folder ? '../'.repeat(depth + 1) : './';
      const specifier = (target: string) =>
        up + target.slice('src/'.length) + (target.endsWith('/') ? '**' : '');
      let group: string[];
      if (layer.packages !== 'any') {
        if (depth > 0 || allowed === 'any') throw new Error(`${layer.node}: ${MAX_DEPTH_MESSAGE}`);
        group = [
          '**',
          '!./**',
          ...allowed.map((target) => `!${specifier(target)}`),
          ...layer.packages.map((name) => `!${name}`),
        ];
      } else {
        const others = [...new Set(layers.map(({ node }) => node))].filter((node) => node !== layer.node);
        const refused = allowed === 'any' ? [] : others.filter((node) => !allowed.includes(node));
        // A file of a folder it may not import as a whole: the folder is refused, the file let through.
        const exceptions = allowed === 'any' ? [] : allowed.filter((target) => nodeOf(target) !== target);
        group = [...refused.map(specifier), ...exceptions.map((file) => `!${specifier(file)}`)];
      }
      if (group.length === 0) return [];
      const includes = folder ? [`${layer.node}${'*/'.repeat(depth)}*`] : [layer.node];
      return {
        includes,
        linter: {
          rules: {
            style: {
              noRestrictedImports: { level: 'error' as const, options: { patterns: [{ group, message }] } },
            },
          },
        },
      };
    });
  });
}

/** Whether an override of biome.json is one of the layers' (they are rewritten together). */
const isLayerOverride = (override: { includes?: string[]; linter?: unknown }) =>
  override.includes?.every((glob) => glob.startsWith('src/')) === true &&
  JSON.stringify(override.linter ?? {}).includes('noRestrictedImports');

/** biome.json's overrides of the layers, as they stand. */
export function layerOverridesOf(biome: { overrides?: BiomeOverride[] }): BiomeOverride[] {
  return (biome.overrides ?? []).filter(isLayerOverride);
}

/** Rewrites biome.json's layer overrides from the table, keeping its others. */
export function writeBiomeLayers(root: string) {
  const path = join(root, 'biome.json');
  const biome = JSON.parse(readFileSync(path, 'utf8'));
  const generated = biomeOverrides(readRepositoryLayers(root), sourceFiles(root));
  biome.overrides = [
    ...(biome.overrides ?? []).filter((override: BiomeOverride) => !isLayerOverride(override)),
    ...generated,
  ];
  writeFileSync(path, `${JSON.stringify(biome, null, 2)}\n`);
  execFileSync(join(root, 'node_modules/.bin/biome'), ['format', '--write', 'biome.json'], { cwd: root });
  return generated.length;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(import.meta.dirname, '..');
  console.info(`biome.json: ${writeBiomeLayers(root)} overrides of the layers, from docs/architecture.md`);
}
