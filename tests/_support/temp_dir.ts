/** Runs `body` with a fresh temp dir, removed afterwards whatever happened. */
export async function withTempDir(body: (dir: string) => void | Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-test-" });
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
