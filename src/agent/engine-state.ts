import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { EngineSpec } from '../contracts/schemas/engine.ts';

/** What the agent knows of one engine it started, kept on disk so that a restarted agent finds it. */
export interface EngineRecord {
  replica: string;
  model: string;
  /** The profile's engine it runs: what it is scraped by, and what a restarted agent compares with what is wanted. */
  engine: EngineSpec;
  /** The engine's pid, which is also its process group's ID (it leads a group of its own). */
  pid: number;
  port: number;
  /** Its base URL: the OpenAI API is under `${url}/v1`. */
  url: string;
  gpus: number[];
  log: string;
  started_at: string;
}

/**
 * The engines this node runs, as a JSON file under the agent's home. Each change rewrites it whole
 * through a rename, so that an agent killed mid-write leaves the old list or the new, never half.
 */
export class EngineStateFile {
  constructor(readonly path: string) {}

  read(): EngineRecord[] {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const engines = (JSON.parse(text) as { engines?: EngineRecord[] }).engines;
    if (!Array.isArray(engines)) throw new Error(`${this.path} holds no "engines" list`);
    return engines;
  }

  put(record: EngineRecord) {
    this.write([...this.read().filter((r) => r.replica !== record.replica), record]);
  }

  remove(replica: string) {
    this.write(this.read().filter((r) => r.replica !== replica));
  }

  private write(engines: EngineRecord[]) {
    mkdirSync(dirname(this.path), { recursive: true });
    const next = `${this.path}.${process.pid}.next`;
    writeFileSync(next, `${JSON.stringify({ engines }, null, 2)}\n`);
    renameSync(next, this.path);
  }
}
