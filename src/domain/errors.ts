/** Bad input: the caller can fix it (HTTP 400). The message is one sentence a person can act on. */
export class InvalidInput extends Error {
  override name = 'InvalidInput';
}

/** No such thing (HTTP 404). */
export class NotFound extends Error {
  override name = 'NotFound';
}

/** Past a bound on how many of a thing there may be (HTTP 429). */
export class TooMany extends Error {
  override name = 'TooMany';
}

/** The thing exists or is still in use (HTTP 409). */
export class Conflict extends Error {
  override name = 'Conflict';
}
