// What the gateway's two HTTP/1.1 readers share (http1-front.ts reads requests, replica-connections.ts
// answers): a head's header lines, read as llhttp reads them.

/** A header name (RFC 9110's token), which also rules out folded lines (they begin with a space). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What llhttp refuses in a line: control characters but the tab, a lone CR or LF among them. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters refused
export const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;
/** A Content-Length's value. */
export const LENGTH = /^\d{1,15}$/;

/**
 * The header lines of a head (`text` up to its blank line) after its first line, as [name in lower
 * case, value without the blanks around it]; undefined if a line is not a well-formed header.
 */
export function headerFields(text: string): [string, string][] | undefined {
  const fields: [string, string][] = [];
  const firstEnd = text.indexOf('\r\n');
  for (let start = firstEnd + 2; firstEnd >= 0 && start < text.length; ) {
    const end = text.indexOf('\r\n', start);
    const line = end < 0 ? text.slice(start) : text.slice(start, end);
    start = end < 0 ? text.length : end + 2;
    const colon = line.indexOf(':');
    if (colon <= 0 || !TOKEN.test(line.slice(0, colon)) || CONTROL.test(line)) return undefined;
    fields.push([line.slice(0, colon).toLowerCase(), withoutBlanks(line.slice(colon + 1))]);
  }
  return fields;
}

/** Whether a Connection header's value asks to close the connection after this message. */
export const asksToClose = (value: string) => /(?:^|,)\s*close\s*(?:,|$)/i.test(value);

/** A header's value without the spaces and tabs around it (only those, as HTTP defines them). */
function withoutBlanks(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value[start] === ' ' || value[start] === '\t')) start++;
  while (end > start && (value[end - 1] === ' ' || value[end - 1] === '\t')) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}
