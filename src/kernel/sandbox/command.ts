/** The bubblewrap command line that confines one run to its view (P-SBX-3, P-SBX-4). */
import type { SandboxView } from "./view.ts";

/**
 * Flags of every sandboxed run: the sandbox dies with its bwrap, no capabilities (a root kernel
 * would otherwise keep CAP_SYS_ADMIN inside and could remount the view writable), own PID, IPC,
 * UTS and cgroup namespaces. No `--new-session`: the run stays in bwrap's process group, so a
 * signal to that group reaches every process inside, as outside (K-BASH-13).
 */
export const CONFINEMENT_FLAGS = [
  "--die-with-parent",
  "--cap-drop",
  "ALL",
  "--unshare-pid",
  "--unshare-ipc",
  "--unshare-uts",
  "--unshare-cgroup-try",
];

/** The sandbox a principal's runs go into: the bubblewrap found at start and the view. */
export interface Sandboxing {
  bwrap: string;
  view: SandboxView;
}

/** Where and how one run is confined. */
export interface Confinement extends Sandboxing {
  /** The run's working directory; must be visible in `view`. */
  cwd: string;
  /** A kernel scratch directory the run needs read-write despite the masks (its state dump). */
  scratch: string | null;
}

/**
 * The argv that runs `argv` inside the sandbox: bwrap's pid is the process group of everything
 * inside, and bwrap exits with the status of `argv` (128 + signal when it was killed inside).
 */
export function sandboxCommand(confinement: Confinement, argv: readonly string[]): string[] {
  const { view } = confinement;
  const steps: { path: string; args: string[] }[] = [
    { path: "/dev", args: ["--dev", "/dev"] },
    { path: "/proc", args: ["--proc", "/proc"] },
    { path: "/tmp", args: ["--tmpfs", "/tmp"] },
    ...view.mounts.map((m) => ({
      path: m.path,
      args: [m.writable ? "--bind" : "--ro-bind", m.path, m.path],
    })),
  ];
  // a parent before its children; on a tie the sandbox's own /tmp comes before a granted /tmp
  const ordered = steps.map((step, i) => ({ ...step, i })).sort((a, b) =>
    a.path === b.path ? a.i - b.i : a.path < b.path ? -1 : 1
  );
  const args = [...CONFINEMENT_FLAGS];
  if (!view.net) args.push("--unshare-net");
  for (const step of ordered) args.push(...step.args);
  for (const [path, target] of view.links) args.push("--symlink", target, path);
  for (const mask of view.masks) {
    args.push(...(mask.dir ? ["--tmpfs", mask.path] : ["--ro-bind", "/dev/null", mask.path]));
  }
  if (confinement.scratch !== null) {
    args.push("--bind", confinement.scratch, confinement.scratch);
  }
  // bwrap's own root and the masks are writable tmpfs; made read-only, a write outside the
  // grants fails instead of landing in memory (only the private /tmp takes writes)
  for (const mask of view.masks) if (mask.dir) args.push("--remount-ro", mask.path);
  if (!view.mounts.some((m) => m.path === "/")) args.push("--remount-ro", "/");
  const cwd = Deno.realPathSync(confinement.cwd);
  return [confinement.bwrap, ...args, "--chdir", cwd, "--", ...argv];
}
