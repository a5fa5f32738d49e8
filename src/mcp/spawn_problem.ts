import { thisInstall } from "./client_config.ts";
import { errorText } from "./config.ts";

/**
 * What to tell a user whose kernel could not be started (M-PERM-4): the PATH that was searched
 * and the one line of client configuration that puts this install's kernel on it.
 */
function kernelHint(kernel: string, searchPath: string | null): string {
  const env = `"env": {"PATH": "${thisInstall().path}"}`;
  const fix = kernel.includes("/") && Deno.build.standalone
    ? `remove SHOAL_KERNEL (this build runs only shoal-kernel found on PATH) and set ${env}`
    : `set ${env}`;
  return `searched PATH=${searchPath ?? "(unset)"}; fix: in the client's configuration of ` +
    `shoal-mcp, ${fix} (shoal-mcp --print-config CLIENT prints it)`;
}

/**
 * Why spawning the kernel executable `kernel` (to serve or to relay) failed with `e`: the
 * permission or the error, the kernel tried, the PATH searched and the fix (M-PERM-4).
 */
export function spawnProblem(kernel: string, searchPath: string | null, e: unknown): string {
  const hint = kernelHint(kernel, searchPath);
  if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
    return `permission denied for run:${kernel} (${errorText(e)}); ${hint}`;
  }
  return `cannot start kernel ${JSON.stringify(kernel)}: ${errorText(e)}; ${hint}`;
}
