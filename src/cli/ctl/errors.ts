/** The command line was wrong: exit code 2, with the command's usage. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * The work could not be done: the server refused (its `error` sentence is the message, printed as is),
 * could not be reached, or a file could not be read. Exit code 1.
 */
export class Failed extends Error {
  override name = 'Failed';
}
