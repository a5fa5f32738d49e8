/** Creates `path` and missing parents with mode 0700 (G-STATE-1); an existing directory is kept. */
export function ensurePrivateDir(path: string): void {
  Deno.mkdirSync(path, { recursive: true, mode: 0o700 });
}
