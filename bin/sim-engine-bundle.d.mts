/** See sim-engine-bundle.mjs: the sim engine bundled, or null when it cannot be had. */
export function simEngineBundle(options?: { root?: string; cacheDir?: string }): string | null;
