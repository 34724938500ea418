import { readFileSync } from 'node:fs';
import { Hono } from 'hono';

/** The console's only files besides its pages: its stylesheet and its live-update script, read once. */
const ASSETS = {
  'console.css': 'text/css; charset=utf-8',
  'live.js': 'text/javascript; charset=utf-8',
} as const;

/** Serves them from this folder: nothing the console loads comes from anywhere else. */
export function assetRoutes() {
  const app = new Hono();
  for (const [file, type] of Object.entries(ASSETS)) {
    const body = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
    app.get(`/${file}`, (c) => c.body(body, 200, { 'content-type': type, 'cache-control': 'no-cache' }));
  }
  return app;
}
