// bin/sim-engine-bundle.mjs: the simulated engine as one plain-JavaScript file, built when missing or
// when a source it holds changed, and none (the caller compiles the sources) when it cannot be written.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { simEngineBundle } from '../../../bin/sim-engine-bundle.mjs';

describe('the sim engine bundle', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmgw-sim-bundle-'));
  const cacheDir = join(dir, 'cache');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is built at first, names its sources, and runs the engine command', () => {
    const bundle = simEngineBundle({ cacheDir });
    assert.equal(bundle, join(cacheDir, 'sim-engine.cjs'));
    const { inputs } = JSON.parse(readFileSync(join(cacheDir, 'sim-engine.json'), 'utf8'));
    assert.ok(
      'src/cli/sim-engine.ts' in inputs && 'src/cluster/sim/engine.ts' in inputs,
      Object.keys(inputs).join(),
    );
    const { runSimEngine } = createRequire(import.meta.url)(bundle!);
    assert.equal(typeof runSimEngine, 'function');
  });

  it('is kept while its sources are as they were', () => {
    const before = statSync(join(cacheDir, 'sim-engine.cjs')).mtimeMs;
    assert.equal(simEngineBundle({ cacheDir }), join(cacheDir, 'sim-engine.cjs'));
    assert.equal(statSync(join(cacheDir, 'sim-engine.cjs')).mtimeMs, before);
  });

  it('is built again when a source it holds changed', () => {
    const manifest = join(cacheDir, 'sim-engine.json');
    const { inputs } = JSON.parse(readFileSync(manifest, 'utf8'));
    writeFileSync(manifest, JSON.stringify({ inputs: { ...inputs, 'src/cluster/sim/engine.ts': '0:0' } }));
    writeFileSync(join(cacheDir, 'sim-engine.cjs'), 'throw new Error("stale");');
    simEngineBundle({ cacheDir });
    assert.doesNotMatch(readFileSync(join(cacheDir, 'sim-engine.cjs'), 'utf8'), /stale/);
    assert.deepEqual(JSON.parse(readFileSync(manifest, 'utf8')).inputs, inputs);
  });

  it('is none when its folder cannot be written', () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    assert.equal(simEngineBundle({ cacheDir: join(file, 'cache') }), null);
  });
});
