const WORDS = [
  'river',
  'stone',
  'lantern',
  'orbit',
  'meadow',
  'copper',
  'signal',
  'harbor',
  'quiet',
  'ember',
];

/**
 * A prompt of about `tokens` tokens (common words are one token each). The request number comes first
 * so that no two prompts share a prefix an engine's prefix cache could reuse.
 */
export function benchPrompt(request: number, tokens: number): string {
  const words = Array.from(
    { length: Math.max(tokens - 4, 1) },
    (_, i) => WORDS[(request + i * 7) % WORDS.length],
  );
  return `Request ${request}: ${words.join(' ')}`;
}
