/**
 * Builds the bundle that bin/shoal-kernel runs the kernel from while its sources are unchanged
 * (issue 33): `kernel_bundle.ts DIR NAME STAMP` writes DIR/NAME/ with `deno bundle` of
 * src/kernel/main.ts, split into chunks loaded when first imported as the sources' modules are,
 * the analysis worker (E-4) bundled on its own beside them (policy/off_loop.ts starts it from
 * there), and STAMP in DIR/NAME/key. npm packages stay out of the bundle: Deno resolves them
 * through deno.json and its lock file, as when the kernel runs from its sources.
 *
 * bin/shoal-kernel starts it in the background, detached, when it finds no bundle for its sources;
 * nothing waits for it, so its failures only leave the kernel running from sources:
 * - one build at a time: DIR/build.pid holds the builder's pid while it runs;
 * - bounded: each `deno bundle` is killed after {@link BUILD_TIMEOUT_MS};
 * - built in DIR/NAME.PID.tmp and renamed into place, so a start never sees half a bundle;
 * - a build that failed leaves DIR/NAME.failed, and no start tries that NAME again for an hour;
 * - bundles beyond the {@link KEEP} built last are removed, unless a running process was started
 *   from one (its chunks are imported on demand as long as the kernel runs).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** How long one `deno bundle` may take (~4 s of CPU here) before the build is given up. */
export const BUILD_TIMEOUT_MS = 120_000;

/** How many bundles are kept: those of other checkouts' or branches' sources, built last. */
export const KEEP = 4;

const ROOT = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

/** Runs `deno bundle args`, killed after {@link BUILD_TIMEOUT_MS}; throws unless it succeeded. */
async function bundle(args: string[]): Promise<void> {
  const { success, stderr } = await new Deno.Command(Deno.execPath(), {
    cwd: ROOT,
    args: ["bundle", "--quiet", `--config=${ROOT}/deno.json`, "--platform=deno", ...args],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    signal: AbortSignal.timeout(BUILD_TIMEOUT_MS),
  }).output();
  if (!success) {
    throw new Error(`deno bundle ${args.join(" ")}: ${new TextDecoder().decode(stderr)}`);
  }
}

/** `--external` for each of deno.json's imports: the npm packages the kernel resolves at run time. */
function externals(): string[] {
  const imports = JSON.parse(Deno.readTextFileSync(`${ROOT}/deno.json`)).imports ?? {};
  return Object.keys(imports).map((name) => `--external=${name.endsWith("/") ? `${name}*` : name}`);
}

/** Builds the bundle in `tmp`, its stamp last. */
async function build(tmp: string, stamp: string): Promise<void> {
  const external = externals();
  await bundle(["--code-splitting", ...external, `--outdir=${tmp}`, `${ROOT}/src/kernel/main.ts`]);
  await bundle([
    ...external,
    `--output=${tmp}/analysis_worker.js`,
    `${ROOT}/src/kernel/policy/analysis_worker.ts`,
  ]);
  await Deno.writeTextFile(`${tmp}/key`, `${stamp}\n`);
}

/** The command lines of all running processes, or null when `ps` cannot say. */
async function commandLines(): Promise<string | null> {
  try {
    const { success, stdout } = await new Deno.Command("ps", {
      args: ["-e", "-o", "args="],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return success ? new TextDecoder().decode(stdout) : null;
  } catch {
    return null;
  }
}

/** Removes the bundles, failure marks and left-over builds of DIR beyond the {@link KEEP} last. */
async function prune(dir: string): Promise<void> {
  const running = await commandLines();
  const entries: { name: string; mtime: number }[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    if (!entry.name.startsWith("kernel.")) continue;
    const mtime = Deno.statSync(`${dir}/${entry.name}`).mtime?.getTime() ?? 0;
    // A temporary directory is another build's only while that build can still run.
    if (entry.name.endsWith(".tmp") && Date.now() - mtime < 2 * BUILD_TIMEOUT_MS) continue;
    entries.push({ name: entry.name, mtime });
  }
  entries.sort((a, b) => b.mtime - a.mtime);
  for (const { name } of entries.slice(KEEP)) {
    if (running === null || running.includes(`${dir}/${name}/`)) continue;
    await Deno.remove(`${dir}/${name}`, { recursive: true }).catch(() => {});
  }
}

/** Takes DIR/build.pid for this process, or returns false when another build holds it. */
function lock(dir: string): boolean {
  const mine = `${dir}/build.pid.${Deno.pid}`;
  Deno.writeTextFileSync(mine, `${Deno.pid}\n`);
  try {
    Deno.linkSync(mine, `${dir}/build.pid`); // fails when it exists: written whole or not at all
    return true;
  } catch {
    return false;
  } finally {
    Deno.removeSync(mine);
  }
}

if (import.meta.main) {
  const [dir, name, stamp] = Deno.args;
  Deno.mkdirSync(dir, { recursive: true });
  // A build that raced this one's start may have written it meanwhile.
  if (!existsSync(`${dir}/${name}/key`) && lock(dir)) {
    const tmp = `${dir}/${name}.${Deno.pid}.tmp`;
    try {
      await build(tmp, stamp);
      await Deno.rename(tmp, `${dir}/${name}`);
      await Deno.remove(`${dir}/${name}.failed`).catch(() => {});
    } catch (e) {
      // Not when the rename failed because a build that raced this one wrote the bundle first.
      if (!existsSync(`${dir}/${name}/key`)) {
        await Deno.writeTextFile(
          `${dir}/${name}.failed`,
          `${e instanceof Error ? e.message : e}\n`,
        );
      }
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    } finally {
      await prune(dir).catch(() => {});
      Deno.removeSync(`${dir}/build.pid`);
    }
  }
}
