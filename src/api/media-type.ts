const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED = '"(?:[\\t !#-\\[\\]-~\\x80-\\xff]|\\\\[\\t -~\\x80-\\xff])*"';
// RFC 9110 8.3.1: type "/" subtype *( OWS ";" OWS [ name "=" ( token / quoted-string ) ] ), so empty
// parameters (`;;`, a trailing `;`) are allowed, and spaces around the `;` but not around the `=`.
// Each run of spaces has one place to go (none is both before and after a `;`): no backtracking blowup.
const MEDIA_TYPE = new RegExp(
  `^(${TOKEN})/(${TOKEN})(?:[ \\t]*;(?:[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED}))?)*$`,
);

/**
 * The type and subtype (in lower case) of a Content-Type header, or null when it is not a media type.
 * Parameters are checked but not returned: JSON has none that matter (RFC 8259 11: a charset has no
 * effect), and no other body is read.
 */
export function parseMediaType(header: string): { type: string; subtype: string } | null {
  const match = MEDIA_TYPE.exec(header.trim());
  return match ? { type: match[1].toLowerCase(), subtype: match[2].toLowerCase() } : null;
}
