/**
 * Test support: what this host lacks for a test (Linux itself, the bubblewrap sandbox), and
 * `Deno.test` that is ignored, with the reason in its name, where it lacks it. macOS runs every
 * other test; these are left to Linux.
 */
import { detectSandbox } from "../../src/kernel/sandbox/probe.ts";

/** Why a test that needs Linux for `what` (e.g. `/proc/PID/io`) cannot run here, or null on Linux. */
export function needsLinux(what: string): string | null {
  return Deno.build.os === "linux" ? null : `needs Linux for ${what}; this is ${Deno.build.os}`;
}

/**
 * Why a test of Linux's G-SOCK-1 rules 2 and 3 (sockets below `$XDG_RUNTIME_DIR` or `$TMPDIR`)
 * cannot run here, or null on Linux: macOS's rule ignores both.
 */
export const LINUX_SOCKET_RULE = needsLinux(
  "G-SOCK-1 rules 2 and 3 (macOS's rule ignores XDG_RUNTIME_DIR and TMPDIR)",
);

/** The sandbox the kernel finds on this host (P-SBX-1): its own probe over this PATH. */
export const HOST_SANDBOX = await detectSandbox(
  Deno.env.get("PATH") ?? "/usr/bin:/bin",
  "/bin/bash",
);

/** Why a test of the bubblewrap sandbox (tier B) cannot run here, or null where it can. */
export const NEEDS_TIER_B: string | null = HOST_SANDBOX.tier === "B"
  ? null
  : `needs a usable bubblewrap (tier B); the kernel finds tier D on this ${Deno.build.os} host`;

/** `Deno.test` of `fn`, ignored where `missing` says what this host lacks (shown in the name). */
export function hostTest(
  name: string,
  missing: string | null,
  fn: () => void | Promise<void>,
): void {
  Deno.test({
    name: missing === null ? name : `${name} [ignored: ${missing}]`,
    ignore: missing !== null,
    fn,
  });
}
