/**
 * A file that cannot be read as what it claims to be: corrupt, encrypted, a zip bomb, too complex. The
 * upload answers 422 with this message; it is written for the user and carries no internals.
 */
export class ParseFailure extends Error {
  override name = 'ParseFailure'
}

/** A file of a kind we do not accept at all (400). */
export class UnsupportedFile extends Error {
  override name = 'UnsupportedFile'
}
