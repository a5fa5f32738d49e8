/**
 * `shoal-mcp --print-config CLIENT [--project DIR]` (M-ONB-1): asks the kernel executable to
 * provision `agent:CLIENT` (policy and token are the kernel's; the facade imports none of its
 * code and may only run it), and returns what the configuration needs from that.
 */
import type { Client, Provisioned } from "./client_config.ts";
import { errorText } from "./config.ts";

/** Thrown when provisioning failed; the kernel already said why on stderr. */
export class ProvisionError extends Error {}

/**
 * Runs `<kernel> onboard agent:CLIENT [--project DIR]` with this process's environment but
 * `PATH` = `printedPath`, the one the configuration gives the kernel it autostarts, so that the
 * sandbox probe finds what that kernel will find; its stderr (the change lines and warnings)
 * goes straight to ours. A release may run only the `shoal-kernel` that the `PATH` it started
 * with (`searchPath`) finds (M-PERM-3; Deno resolves a program by the child's `PATH` and follows
 * no symlink): where `printedPath` finds another first (the release reached through a symlink,
 * or run by its path from a directory not on `PATH`), that one runs it, under `searchPath`.
 */
export async function provision(
  kernel: string,
  searchPath: string | null,
  client: Client,
  project: string | undefined,
  printedPath: string,
): Promise<Provisioned> {
  const args = [
    "onboard",
    `agent:${client}`,
    ...(project === undefined ? [] : ["--project", project]),
  ];
  const run = async (path: string) =>
    await new Deno.Command(kernel, {
      args,
      env: { PATH: path },
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).output();
  let out;
  try {
    out = await run(printedPath).catch((e) => {
      if (!(e instanceof Deno.errors.NotCapable) || searchPath === null) throw e;
      return run(searchPath);
    });
  } catch (e) {
    throw new ProvisionError(
      `cannot run ${kernel} (searched PATH=${searchPath ?? "(unset)"}): ${errorText(e)}`,
    );
  }
  if (!out.success) throw new ProvisionError(`${kernel} onboard failed (exit ${out.code})`);
  const result = JSON.parse(new TextDecoder().decode(out.stdout)) as Provisioned;
  return { token: result.token, project: result.project, env: result.env };
}
