/** A `token create` argument that the store refuses (K-CLI-2): the CLI reports it as bad usage. */
export class TokenInputError extends Error {}

// Control, format, unassigned, private-use and surrogate code points, separators and whitespace.
const UNPRINTABLE = /[\p{C}\p{Z}\s]/u;

/**
 * Checks a principal or profile name (`what`): non-empty, printable characters only and no
 * whitespace, so that it cannot forge lines or columns wherever it is printed (`token list`, logs).
 */
export function checkName(what: "principal" | "profile", name: string): void {
  if (name === "") throw new TokenInputError(`${what} must not be empty`);
  const bad = UNPRINTABLE.exec(name);
  if (bad) {
    const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
    throw new TokenInputError(
      `${what} must be printable characters without whitespace; U+${code} is not`,
    );
  }
}

/** Checks a `--ttl` in seconds: a whole number of at least 1, so a new token is never already expired. */
export function checkTtl(ttlSeconds: number): void {
  if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds < 1) {
    throw new TokenInputError(
      `ttl must be a whole number of seconds, at least 1; got ${ttlSeconds}`,
    );
  }
}
