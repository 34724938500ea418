// How the original (Go) API quoted and trimmed what people typed: llmgw's sentences do the same.
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/**
 * Text in double quotes as Go's `%q` writes it (strconv.Quote), so that our sentences quote names
 * exactly as the original API did: `"x\"y"`, control characters as `\n` or `\x00`, other characters
 * that do not print as `\u200b`.
 */
export function quoted(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (ESCAPES[char]) out += ESCAPES[char];
    else if (PRINTABLE.test(char)) out += char;
    else if (code < 0x20 || code === 0x7f) out += `\\x${hex(code, 2)}`;
    else if (code < 0x10000) out += `\\u${hex(code, 4)}`;
    else out += `\\U${hex(code, 8)}`;
  }
  return `${out}"`;
}

/** Without the spaces around it, as Go's strings.TrimSpace takes them (Unicode White_Space). */
export const trimSpace = (text: string): string => text.replace(/^\p{White_Space}+|\p{White_Space}+$/gu, '');
