import { checkedPaths } from "../protocol/trusted_path.ts";

/** Environment variables the facade reads (M-PERM-1); PATH only to name it when autostart fails (M-PERM-4). */
export const FACADE_ENV = [
  "SHOAL_SOCKET",
  "SHOAL_SESSION",
  "SHOAL_TOKEN",
  "SHOAL_NO_AUTOSTART",
  "SHOAL_KERNEL",
  "XDG_RUNTIME_DIR",
  "TMPDIR",
  "HOME",
  "PATH",
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
 * before every connect (G-SOCK-10); without a socket path (the uid is unknown) the facade gets
 * no socket access. Deno 2.9 needs `--allow-net=unix:<path>` besides read and write for a
 * Unix-socket connect; that exact grant opens no TCP and no DNS.
 */
export function localFlags(
  socketPath: string | null,
  kernelPath: string,
  root: string,
): string[] {
  const socket = socketPath === null ? [] : [
    `--allow-read=${
      [socketPath, ...checkedPaths(socketPath, root).filter((p) => p !== socketPath)].join(",")
    }`,
    `--allow-write=${socketPath}`,
    `--allow-net=unix:${socketPath}`,
  ];
  return ["--no-prompt", ...socket, `--allow-run=${kernelPath}`, envFlag, "--allow-sys=uid"];
}

/**
 * Addresses the release refuses although it holds `--allow-net`: every IPv4 address (IPv4-mapped
 * IPv6 included), the IPv6 loopback and the unspecified address (which reaches the loopback).
 * Deno 2.9 takes no IPv6 range here and cannot refuse name look-ups through getaddrinfo.
 */
const RELEASE_DENIED_NET = ["0.0.0.0/0", "[::1]", "[::]"];

/**
 * Deno permission flags baked into the compiled release of `shoal-mcp` (M-PERM-3). Deno 2.9
 * grants a Unix-socket connect only through `--allow-net=unix:<exact path>`, which a build
 * cannot name for sockets chosen at run time, so the release holds `--allow-net` and refuses
 * what `--deny-net` can express.
 */
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
    `--deny-net=${RELEASE_DENIED_NET.join(",")}`,
  ];
}
