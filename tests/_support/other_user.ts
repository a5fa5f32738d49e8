/**
 * Test support: shoal run as a user who is not root, as its users run it (this suite runs as
 * root, which Linux exempts from process limits and file permissions, and whose bwrap makes no
 * user namespace). The uid has no account on the host.
 */
import type { Sandbox } from "./sandbox.ts";

/** The uid the other user's processes run as: apart for each test process. */
export const OTHER_UID = 61000 + Deno.pid % 4000;

/** The program and arguments that run a command as {@link OTHER_UID}, with no supplementary groups. */
export const AS_OTHER_USER = [
  "setpriv",
  `--reuid=${OTHER_UID}`,
  `--regid=${OTHER_UID}`,
  "--clear-groups",
];

/** Why a test cannot run shoal as another user here (not root, no bwrap for it), or null. */
export async function otherUserMissing(tierB: string | null): Promise<string | null> {
  if (tierB !== null) return tierB;
  if (Deno.uid() !== 0) return "needs root, to run the kernel as another uid";
  const probe = await new Deno.Command(AS_OTHER_USER[0], {
    args: [...AS_OTHER_USER.slice(1), "bwrap", "--ro-bind", "/", "/", "--unshare-pid", "true"],
    cwd: "/",
    stdout: "null",
    stderr: "null",
  }).output().catch(() => null);
  return probe?.success
    ? null
    : `needs unprivileged user namespaces: bwrap run as uid ${OTHER_UID} failed here`;
}

/** Runs `args` as root and throws with its stderr unless it succeeds. */
async function run(args: string[]): Promise<void> {
  const r = await new Deno.Command(args[0], { args: args.slice(1) }).output();
  if (!r.success) throw new Error(`${args.join(" ")}: ${new TextDecoder().decode(r.stderr)}`);
}

/**
 * Gives `box` to the other user with a Deno package cache of its own (root's is not readable to
 * it); returns that cache's directory, for DENO_DIR.
 */
export async function giveToOtherUser(box: Sandbox): Promise<string> {
  const denoDir = `${box.dir}/deno`;
  const cache = `${Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`}/npm`;
  await Deno.mkdir(denoDir);
  await run(["cp", "-r", cache, denoDir]);
  await run(["chown", "-R", `${OTHER_UID}:${OTHER_UID}`, box.dir]);
  return denoDir;
}
