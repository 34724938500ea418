// What the gateway's two HTTP/1.1 readers share (http1-front.ts reads requests, replica-connections.ts
// answers): a head's header lines, read as llhttp reads them.

/** A Content-Length's value. */
export const LENGTH = /^\d{1,15}$/;

/**
 * The header lines of a head (`text` up to its blank line) after its first line, as [name in lower
 * case, value without the blanks around it]; undefined if a line is not a well-formed header. Read by
 * character codes, with no string made but each name and value: it runs on every request and answer.
 */
export function headerFields(text: string): [string, string][] | undefined {
  const fields: [string, string][] = [];
  const firstEnd = text.indexOf('\r\n');
  for (let start = firstEnd + 2; firstEnd >= 0 && start < text.length; ) {
    const found = text.indexOf('\r\n', start);
    const end = found < 0 ? text.length : found;
    let colon = start;
    while (colon < end && isTokenChar(text.charCodeAt(colon))) colon++;
    // A name (RFC 9110's token) then a colon: this also rules out folded lines (they begin with a space).
    if (colon === start || colon === end || text.charCodeAt(colon) !== 58) return undefined;
    let valueStart = colon + 1;
    let valueEnd = end;
    if (hasControl(text, valueStart, end)) return undefined;
    while (valueStart < valueEnd && isBlank(text.charCodeAt(valueStart))) valueStart++;
    while (valueEnd > valueStart && isBlank(text.charCodeAt(valueEnd - 1))) valueEnd--;
    fields.push([text.slice(start, colon).toLowerCase(), text.slice(valueStart, valueEnd)]);
    start = end + 2;
  }
  return fields;
}

/** RFC 9110's tchar: ! # $ % & ' * + - . ^ _ ` | ~, digits and letters. */
const TOKEN_CHARS = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  TOKEN_CHARS[c.charCodeAt(0)] = 1;
}
const isTokenChar = (code: number) => code < 128 && TOKEN_CHARS[code] === 1;

/**
 * Whether text[start, end) holds what llhttp refuses in a line: a control character but the tab (a
 * lone CR or LF among them).
 */
export function hasControl(text: string, start: number, end: number): boolean {
  for (let at = start; at < end; at++) {
    const code = text.charCodeAt(at);
    if ((code < 32 && code !== 9) || code === 127) return true;
  }
  return false;
}

/** The spaces and tabs around a value (only those, as HTTP defines them). */
const isBlank = (code: number) => code === 32 || code === 9;

/** Whether a Connection header's value asks to close the connection after this message. */
export const asksToClose = (value: string) => /(?:^|,)\s*close\s*(?:,|$)/i.test(value);
