/**
 * Runs `body` with a fresh temp dir, removed afterwards whatever happened. The dir is named
 * physically (macOS keeps temp dirs below the `/var` symlink), as the kernel reports paths.
 */
export async function withTempDir(body: (dir: string) => void | Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-test-" }));
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
