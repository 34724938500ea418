// The simulated engine's modules bundled into one CommonJS file by esbuild, kept in node_modules/.cache
// and built again when one of its sources changed: an agent starts one engine per replica, many at once,
// and plain JavaScript starts in half the CPU that tsx's compile hook takes (bench/agent-start).
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const ENTRY = 'src/cli/sim-engine.ts';

/** A source as it is now: a change, or a checkout, moves its mtime or its size. */
const stampOf = (file) => {
  const { mtimeMs, size } = statSync(file);
  return `${mtimeMs}:${size}`;
};

/**
 * The bundle's path, built first when missing or older than a source it holds; null when it cannot be
 * had (no esbuild, a folder this user may not write): the caller compiles the sources itself then.
 */
export function simEngineBundle({
  root = ROOT,
  cacheDir = join(ROOT, 'node_modules', '.cache', 'llmgw'),
} = {}) {
  const bundle = join(cacheDir, 'sim-engine.cjs');
  const manifest = join(cacheDir, 'sim-engine.json');
  try {
    const { inputs } = JSON.parse(readFileSync(manifest, 'utf8'));
    if (Object.entries(inputs).every(([file, stamp]) => stampOf(join(root, file)) === stamp)) return bundle;
  } catch {
    // none yet, unreadable, or a source gone: build it
  }
  try {
    mkdirSync(cacheDir, { recursive: true });
    // Written aside, then renamed: engines starting together never read a half-written bundle.
    const aside = `${bundle}.${process.pid}`;
    const { buildSync } = createRequire(import.meta.url)('esbuild');
    const built = buildSync({
      absWorkingDir: root,
      entryPoints: [ENTRY],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile: aside,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.fromEntries(
      Object.keys(built.metafile.inputs).map((file) => [file, stampOf(join(root, file))]),
    );
    renameSync(aside, bundle);
    writeFileSync(`${manifest}.${process.pid}`, JSON.stringify({ inputs }));
    renameSync(`${manifest}.${process.pid}`, manifest);
    return bundle;
  } catch {
    return null;
  }
}
