/**
 * Runs `body` with a fresh temp dir, removed afterwards whatever happened. The dir is named
 * physically (macOS keeps temp dirs below the `/var` symlink), as the kernel reports paths. It is
 * made in `parent` when given, else in the system's temp dir.
 */
export async function withTempDir(
  body: (dir: string) => void | Promise<void>,
  parent?: string,
): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ dir: parent, prefix: "shoal-test-" }));
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
