/** Where `llmgw ctl` and `llmgw agent` find the llmgw API when no flag says. */
export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

/**
 * The API's URL from the environment: `LLMGW_URL`, the one name. `LLMGW_API_URL`, which the agent read
 * before, still works and says so once through `warn`.
 */
export function apiUrlFromEnv(env: Record<string, string | undefined>, warn: (line: string) => void): string {
  if (env.LLMGW_URL) return env.LLMGW_URL;
  if (env.LLMGW_API_URL) {
    warn('LLMGW_API_URL is deprecated: name the API with LLMGW_URL, as llmgw ctl does');
    return env.LLMGW_API_URL;
  }
  return DEFAULT_API_URL;
}
