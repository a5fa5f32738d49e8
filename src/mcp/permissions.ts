import { checkedPaths } from "../protocol/trusted_path.ts";

/** Environment variables the facade reads (M-PERM-1); PATH only to name it when autostart fails (M-PERM-4). */
export const FACADE_ENV = [
  "SHOAL_SOCKET",
  "SHOAL_SESSION",
  "SHOAL_TOKEN",
  "SHOAL_PROJECT",
  "SHOAL_NO_AUTOSTART",
  "SHOAL_KERNEL",
  "XDG_RUNTIME_DIR",
  "TMPDIR",
  "HOME",
  "PATH",
] as const;

/** Directories below which a compiled release checks the socket path (M-PERM-3, G-SOCK-10). */
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
 * The facade's V8 flags. A 1 MiB young generation, as bin/shoal-kernel has it: by default V8
 * grows it to tens of MiB under a burst of frames and keeps them (issue 13: 2,000 malformed frames
 * on stdin added 15 MiB, and the same frames again 11 MiB more; with this flag 11 and 2 MiB).
 * `gc` for the heap's compaction once idle (`protocol/heap_compaction.ts`). No TurboFan: its
 * compiler's code paged in over 1,000 calls stayed resident; Maglev stays, since without it a
 * notification cost the facade 27-35 % more CPU (`scripts/bench/events.ts`), though its compiler's
 * code adds ~3 MiB over 1,000 calls too. Single-threaded: V8 starts no worker threads, whose
 * stacks and malloc arenas held ~0.8 MiB after 1,000 calls; the facade's heap is a few MiB, so
 * collecting and compiling on its own thread cost no CPU per notification measurably (issue 33).
 * No Sparkplug, as in the kernel: Maglev takes over the hot functions anyway, and compiling each
 * function twice on the one thread cost a fresh facade's first 1,000 notifications 9-19 % more
 * CPU, and 0.5-0.7 MiB more after 1,000 calls (issue 33).
 */
const v8Flag =
  "--v8-flags=--max-semi-space-size=1,--expose-gc,--no-turbofan,--single-threaded,--no-sparkplug";

/**
 * Deno permission flags for a local run against one socket and one kernel executable (M-PERM-2),
 * plus read access to the directories between `root` and the socket, which the facade `lstat`s
 * before every connect (G-SOCK-10); without a socket path (the uid is unknown) the facade gets
 * no socket access. Deno 2.9 needs `--allow-net=unix:<path>` besides read and write for a
 * Unix-socket connect; that exact grant opens no TCP and no DNS. Last, the facade's V8 flags.
 */
export function localFlags(
  socketPath: string | null,
  kernelPath: string,
  root: string,
): string[] {
  const read = socketPath === null
    ? []
    : [socketPath, ...checkedPaths(socketPath, root).filter((p) => p !== socketPath)];
  const socket = socketPath === null
    ? []
    : socketPath.includes(",")
    ? [`--allow-read=${[...new Set(read.map(withoutComma))].join(",")}`]
    : [
      `--allow-read=${read.join(",")}`,
      `--allow-write=${socketPath}`,
      `--allow-net=unix:${socketPath}`,
    ];
  return [
    "--no-prompt",
    ...socket,
    `--allow-run=${kernelPath}`,
    envFlag,
    "--allow-sys=uid",
    v8Flag,
  ];
}

/**
 * `path`, or the nearest directory above it whose path holds no comma. Deno's permission lists
 * are comma-separated and Deno 2.9.6's `run` refuses the `,,` escape ("Empty path is not
 * allowed"), so a socket below a directory like `/home/Smith, Jo` cannot be granted exactly: the
 * facade then holds no socket grant and connects through the kernel's relay, as a release does
 * (M-PERM-3), reading from that directory down for the G-SOCK-10 check.
 */
function withoutComma(path: string): string {
  const comma = path.indexOf(",");
  return comma === -1 ? path : path.slice(0, path.lastIndexOf("/", comma)) || "/";
}

/**
 * Deno permission flags for `--print-config` from a checkout (M-ONB-1): it runs the kernel
 * executable once (`shoal-kernel onboard`) and reads its own variables; nothing else.
 */
export function printConfigFlags(kernelPath: string): string[] {
  return ["--no-prompt", `--allow-run=${kernelPath}`, envFlag];
}

/**
 * Deno permission flags baked into the compiled release of `shoal-mcp` (M-PERM-3): no `net`
 * permission at all, so no TCP and no name look-up. Deno 2.9 grants a Unix-socket connect only
 * through `--allow-net=unix:<exact path>`, which a build cannot name for a socket chosen at run
 * time, so the release reaches its kernel through the kernel's relay (`shoal-kernel connect`),
 * which it may run. It reads the runtime roots for the trusted path check (G-SOCK-10) and
 * writes nothing. Last, the facade's V8 flags.
 */
export function releaseFlags(): string[] {
  return [
    "--no-prompt",
    `--allow-read=${RELEASE_RUNTIME_ROOTS.join(",")}`,
    `--allow-run=${RELEASE_KERNEL}`,
    envFlag,
    "--allow-sys=uid",
    v8Flag,
  ];
}

/** Whether this process may connect to the socket at `path` itself (it holds `unix:<path>`). */
export function holdsSocketGrant(path: string): boolean {
  // Grants name absolute paths, and a relative one is connected to from the working directory.
  const absolute = path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
  return Deno.permissions.querySync({ name: "net", host: `unix:${absolute}` }).state === "granted";
}
