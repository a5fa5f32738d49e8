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
 * goes straight to ours. `searchPath` is named when the kernel cannot be started.
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
  let out;
  try {
    out = await new Deno.Command(kernel, {
      args,
      env: { PATH: printedPath },
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).output();
  } catch (e) {
    throw new ProvisionError(
      `cannot run ${kernel} (searched PATH=${searchPath ?? "(unset)"}): ${errorText(e)}`,
    );
  }
  if (!out.success) throw new ProvisionError(`${kernel} onboard failed (exit ${out.code})`);
  const result = JSON.parse(new TextDecoder().decode(out.stdout)) as Provisioned;
  return { token: result.token, project: result.project, env: result.env };
}
