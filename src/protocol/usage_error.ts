/** Thrown for bad usage; every CLI prints `<program>: <message>` and its usage line, and exits 2. */
export class UsageError extends Error {}
