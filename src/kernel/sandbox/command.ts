/** The bubblewrap command line that confines one run to its view (P-SBX-3, P-SBX-4). */
import type { SandboxNet } from "../net/destinations.ts";
import { forwardedCommand } from "../net/forwarder.ts";
import { NET_MOUNT } from "../net/inside.ts";
import { limitSpec, SET_LIMIT_PERL } from "./process_limit.ts";
import type { TmpfsBounds } from "./tmpfs_bounds.ts";
import { filterArgs, filteredCommand, INSTALL_FILTER_PERL } from "./unix_socket_filter.ts";
import { isUnder, PRIVATE_TMP, type SandboxView } from "./view.ts";

/**
 * Where a run's scratch directory appears inside the sandbox: it reveals no host path, and /dev is
 * always the sandbox's own tmpfs, so the mount point can be made whatever roots are bound.
 */
export const SCRATCH_MOUNT = "/dev/shoal";

/**
 * Flags of every sandboxed run: the sandbox dies with its bwrap; no capabilities (a root kernel
 * would otherwise keep CAP_SYS_ADMIN inside and could remount the view writable); its own PID
 * namespace (its /proc shows no host process, whose /proc/PID/root would reveal the host's files)
 * and IPC namespace (no host shared memory); always its own network namespace, with loopback
 * only (P-NET-1: granted destinations are reached through the kernel's proxy). No `--new-session`: the run stays in bwrap's process
 * group, so a signal to that group reaches every process inside, as outside (K-BASH-13).
 */
const CONFINEMENT_FLAGS = [
  "--die-with-parent",
  "--cap-drop",
  "ALL",
  "--unshare-pid",
  "--unshare-ipc",
  "--unshare-net",
];

/**
 * bwrap's init's memory files: it runs without the socket filter (`unix_socket_filter.ts`), so
 * code an agent wrote there would open Unix sockets; /dev/null is bound over them.
 */
const INIT_MEMORY = ["/proc/1/mem", "/proc/1/task/1/mem"];

/**
 * The kernel key store's listing: the keys of the session keyring a run inherits and of its uid's
 * user keyring (the human's), named, though keyctl(2) cannot read them (`unix_socket_filter.ts`).
 * Those this Linux has (none without CONFIG_KEYS): bwrap cannot make a file in /proc.
 */
const KEY_LISTS = ["/proc/keys", "/proc/key-users"].filter((path) => {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
});

/**
 * The sandbox a principal's runs go into: the bubblewrap and prlimit found at start, the view, and
 * the network it reaches through the kernel's proxy (null: loopback only).
 */
export interface Sandboxing {
  /**
   * The principal whose runs it holds: two principals never share one, even confined alike, since
   * a run sees every process and scratch file of its sandbox (P-SBX-7).
   */
  principal: string;
  bwrap: string;
  /** util-linux's prlimit, which bounds runs entering from the host (`process_limit.ts`). */
  prlimit: string;
  view: SandboxView;
  net: SandboxNet | null;
  /**
   * The lowest port its runs may bind, when below 1024: its lowest forwarded or `net_listen` port
   * (`port_floor.ts`); null when the namespace keeps 1024.
   */
  portFloor: number | null;
  /** The sizes of its own tmpfs mounts, or null where bwrap cannot size a tmpfs (before 0.8). */
  tmpfs: TmpfsBounds | null;
  /**
   * The same sandboxing computed again from its grants (a new scan of the protected names), for a
   * sandbox whose start failed; absent where it cannot be.
   */
  afresh?: () => Sandboxing | null;
}

/** Where and how one run is confined. */
export interface Confinement extends Sandboxing {
  /** The run's working directory; must be visible in `view`. */
  cwd: string;
  /**
   * A kernel scratch directory, shown read-only at {@link SCRATCH_MOUNT}: the run reads its input
   * files there and writes its FIFOs.
   */
  scratch: string | null;
  /**
   * The host directory holding the proxy's Unix socket for {@link Sandboxing.net}, shown
   * read-only at {@link NET_MOUNT}; the run's command then starts behind the forwarder. Null: no
   * proxy (the run has loopback only).
   */
  proxy: string | null;
}

/**
 * Directories bwrap creates in the private /tmp on the way to a bound root, file or tool cache; made
 * read-only, so a write beside it fails as it does outside /tmp (where bwrap's root is read-only).
 */
function tmpParents(view: SandboxView): string[] {
  const dirs = new Set<string>();
  const caches = (view.caches ?? []).map((path) => ({ path }));
  for (const { path } of [...view.mounts, ...(view.files ?? []), ...caches]) {
    if (path === PRIVATE_TMP || !isUnder(path, PRIVATE_TMP)) continue;
    for (let dir = path.slice(0, path.lastIndexOf("/")); dir !== PRIVATE_TMP;) {
      if (
        !view.mounts.some((m) =>
          m.path !== path && isUnder(dir, m.path) && isUnder(m.path, PRIVATE_TMP)
        )
      ) {
        dirs.add(dir);
      }
      dir = dir.slice(0, dir.lastIndexOf("/"));
    }
  }
  return [...dirs];
}

/**
 * The argv that runs `argv` inside the sandbox under its process limit (`process_limit.ts`) and
 * socket filter (`unix_socket_filter.ts`): bwrap's pid is the process group of everything inside,
 * and bwrap exits with the status of `argv` (128 + signal when it was killed inside).
 */
export function sandboxCommand(confinement: Confinement, argv: readonly string[]): string[] {
  const { view } = confinement;
  const sized = (bytes: number | undefined) => bytes === undefined ? [] : ["--size", `${bytes}`];
  const steps: { path: string; args: string[] }[] = [
    { path: "/dev", args: ["--dev", "/dev"] },
    // its own tmpfs, so that /dev itself can be read-only (tmpfs_bounds.ts)
    { path: "/dev/shm", args: [...sized(confinement.tmpfs?.shm), "--tmpfs", "/dev/shm"] },
    { path: "/proc", args: ["--proc", "/proc"] },
    // the host kernel's settings: writable by uid 0 without any capability (a kernel run as root
    // runs its sandboxes so), and kernel.core_pattern names a program the host runs as root
    { path: "/proc/sys", args: ["--ro-bind", "/proc/sys", "/proc/sys"] },
    { path: "/tmp", args: [...sized(confinement.tmpfs?.tmp), "--tmpfs", "/tmp"] },
    ...(view.caches ?? []).map((path) => ({
      path,
      args: [...sized(confinement.tmpfs?.cache), "--tmpfs", path],
    })),
    ...view.mounts.map((m) => ({
      path: m.path,
      args: [m.writable ? "--bind" : "--ro-bind", m.path, m.path],
    })),
    ...tmpParents(view).map((dir) => ({ path: dir, args: ["--perms", "0555", "--dir", dir] })),
    // P-SBX-6: a pinned directory cannot be renamed or removed (EBUSY), nor a protected path
    ...view.protection.pins.map((dir) => ({ path: dir, args: ["--bind", dir, dir] })),
    ...view.protection.paths.map((p) => ({ path: p.path, args: ["--ro-bind", p.path, p.path] })),
    ...(view.files ?? []).map((f) => ({ path: f.path, args: ["--ro-bind", f.source, f.path] })),
  ];
  // a parent before its children; on a tie the sandbox's own /tmp comes before a granted /tmp
  const ordered = steps.map((step, i) => ({ ...step, i })).sort((a, b) =>
    a.path === b.path ? a.i - b.i : a.path < b.path ? -1 : 1
  );
  const args = [...CONFINEMENT_FLAGS];
  for (const step of ordered) args.push(...step.args);
  for (const [path, target] of view.links) args.push("--symlink", target, path);
  for (const mask of view.masks) {
    args.push(...(mask.dir ? ["--tmpfs", mask.path] : ["--ro-bind", "/dev/null", mask.path]));
  }
  // bwrap's init (pid 1 inside) carries no socket filter: its memory is out of reach (P-SBX-3)
  for (const mem of INIT_MEMORY) args.push("--ro-bind", "/dev/null", mem);
  for (const list of KEY_LISTS) args.push("--ro-bind", "/dev/null", list);
  if (confinement.scratch !== null) {
    // read-only: a symlink planted there would be followed by the kernel on the host
    args.push("--ro-bind", confinement.scratch, SCRATCH_MOUNT);
  }
  const net = confinement.proxy === null ? null : confinement.net;
  if (net !== null) args.push("--ro-bind", confinement.proxy!, NET_MOUNT);
  // bwrap's own root and the masks are writable tmpfs; made read-only, a write outside the
  // grants fails instead of landing in memory (only the private /tmp takes writes)
  for (const mask of view.masks) if (mask.dir) args.push("--remount-ro", mask.path);
  // bwrap's /dev is an unbounded tmpfs: read-only, it takes no file (its devices still take
  // writes), and /dev/shm, sized, is where shared memory goes
  args.push("--remount-ro", "/dev");
  if (!view.mounts.some((m) => m.path === "/")) args.push("--remount-ro", "/");
  const cwd = Deno.realPathSync(confinement.cwd);
  // every process of the agent's carries the socket filter and the process limit, both set by
  // the first program inside; the forwarder's relay, which it starts first, alone carries no
  // filter (P-SBX-3)
  const limit = limitSpec();
  const command = net === null ? filteredCommand(argv, limit) : forwardedCommand(net, argv, {
    perl: SET_LIMIT_PERL + INSTALL_FILTER_PERL,
    limit,
    filter: filterArgs(),
  });
  return [confinement.bwrap, ...args, "--chdir", cwd, "--", ...command];
}

/** The (device, inode) of a path, or "-" when it cannot be stat'ed. */
function identity(path: string): string {
  try {
    const info = Deno.statSync(path);
    return `${info.dev}:${info.ino}`;
  } catch {
    return "-";
  }
}

/** The {@link confinementKey} of each sandboxing asked for, made when first asked. */
const keys = new WeakMap<Sandboxing, string>();

/**
 * How runs in `sandboxing` are confined, as one string ("" for an unconfined run): whose runs, bwrap,
 * the view, and the identity of each bound host path, since a sandbox binds what the path named when it
 * started. A sandbox started for one key confines a run of the same key exactly as a fresh one.
 * The key of one sandboxing (a view of one moment: each run computes its own) is made once, when
 * first asked, together with that view: a run asks four times (issue 34).
 */
export function confinementKey(sandboxing: Sandboxing | null): string {
  if (sandboxing === null) return "";
  let key = keys.get(sandboxing);
  if (key === undefined) {
    const { principal, bwrap, view, net, portFloor } = sandboxing;
    const mounts = view.mounts.map((m) => identity(m.path));
    key = JSON.stringify([principal, bwrap, view, net, portFloor, mounts]);
    keys.set(sandboxing, key);
  }
  return key;
}
