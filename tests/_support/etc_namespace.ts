/**
 * Test support: a real kernel that sees its own `/etc/hosts` or `/etc/resolv.conf` (a bind mount
 * in a mount namespace of its own, made by `unshare`; root only), so that a test decides what a
 * name resolves to, or that DNS never answers, without touching the host's files.
 */
import { launchKernel, type TestKernel } from "./kernel.ts";
import { KERNEL_BIN, type Sandbox } from "./sandbox.ts";

/** Why a kernel cannot get files of its own in /etc here, or null where it can. */
export const NEEDS_ROOT: string | null = Deno.uid() === 0
  ? null
  : "needs root (a mount namespace with its own /etc files)";

/**
 * Starts the kernel of `box` with `args` (after `--socket`), each of `etc` (`"hosts"`,
 * `"resolv.conf"`) standing in for the host's file of that name in /etc.
 */
export async function kernelWithEtc(
  box: Sandbox,
  etc: Record<string, string>,
  args: string[],
): Promise<TestKernel> {
  const mounts: string[] = [];
  const files: string[] = [];
  for (const [name, text] of Object.entries(etc)) {
    const file = `${box.dir}/etc-${name}`;
    await Deno.writeTextFile(file, text);
    files.push(file, `/etc/${name}`);
    const at = mounts.length * 2 + 1;
    mounts.push(`mount --bind "\${${at}}" "\${${at + 1}}"`);
  }
  const shift = files.length === 0 ? "" : `shift ${files.length}`;
  const script = [...mounts, shift, 'exec "$@"'].filter((line) => line !== "").join(" && ");
  const socket = box.socket();
  return await launchKernel(box, ["--socket", socket, ...args], socket, {}, [
    "unshare",
    "-m",
    "--propagation",
    "private",
    "sh",
    "-c",
    script,
    "sh",
    ...files,
    KERNEL_BIN,
  ]);
}
