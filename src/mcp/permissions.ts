import { checkedPaths } from "../protocol/trusted_path.ts";

/** Environment variables the facade reads (M-PERM-1). */
export const FACADE_ENV = [
  "SHOAL_SOCKET",
  "SHOAL_SESSION",
  "SHOAL_TOKEN",
  "SHOAL_NO_AUTOSTART",
  "SHOAL_KERNEL",
  "XDG_RUNTIME_DIR",
  "TMPDIR",
  "HOME",
] as const;

/** Directories a compiled release may use sockets under (M-PERM-3). */
export const RELEASE_RUNTIME_ROOTS = [
  "/run/user",
  "/tmp",
  "/private/tmp",
  "/var/folders",
  "/private/var/folders",
] as const;

/** Kernel executable name a compiled release may spawn (M-PERM-3). */
export const RELEASE_KERNEL = "shoal-kernel";

const envFlag = `--allow-env=${FACADE_ENV.join(",")}`;

/**
 * Deno permission flags for a local run against one socket and one kernel executable (M-PERM-2),
 * plus read access to the directories between `root` and the socket, which the facade `lstat`s
 * before every connect (G-SOCK-10).
 */
export function localFlags(socketPath: string, kernelPath: string, root: string): string[] {
  const checked = checkedPaths(socketPath, root).filter((p) => p !== socketPath);
  return [
    "--no-prompt",
    `--allow-read=${[socketPath, ...checked].join(",")}`,
    `--allow-write=${socketPath}`,
    `--allow-net=unix:${socketPath}`,
    `--allow-run=${kernelPath}`,
    envFlag,
    "--allow-sys=uid",
  ];
}

/** Deno permission flags baked into the compiled release of `shoal-mcp` (M-PERM-3). */
export function releaseFlags(): string[] {
  const roots = RELEASE_RUNTIME_ROOTS.join(",");
  return [
    "--no-prompt",
    `--allow-read=${roots}`,
    `--allow-write=${roots}`,
    `--allow-run=${RELEASE_KERNEL}`,
    envFlag,
    "--allow-sys=uid",
    "--allow-net",
    "--deny-net=0.0.0.0/0",
  ];
}
