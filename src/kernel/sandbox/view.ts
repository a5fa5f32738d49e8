/**
 * What a sandboxed run sees of the host file system (P-SBX-3), computed from a principal's grants:
 * which host directories are bound where, read-only or read-write, and what stays masked.
 */
import { normalizePath } from "../bash/lexical_path.ts";
import { type ProtectedPath, type Protection, protection } from "./protected_paths.ts";
import { isCommonGitDir } from "./git_internal.ts";

/** A principal's file grants, as the sandbox needs them. */
export interface SandboxGrants {
  /** `fs.read` globs. */
  read: readonly string[];
  /** `fs.write` and `fs.delete` globs. */
  write: readonly string[];
  /** Protected names that stay writable (`writable_protected`, P-SBX-6). */
  writableProtected?: readonly string[];
  /**
   * Paths an approved plan reads (physical, as its analysis resolved them): each one's root is
   * shown read-only while no symlink has been planted on it since.
   */
  approvedReads?: readonly string[];
  /**
   * Paths an approved plan writes or deletes (physical): each one's parent is shown read-write
   * while no symlink has been planted on it since, and a protected path holding one stays writable.
   */
  approvedWrites?: readonly string[];
}

/** A host path shown at the same place in the sandbox. */
export interface ViewMount {
  path: string;
  writable: boolean;
}

/** The mount plan of one sandboxed run. */
export interface SandboxView {
  /** Bound host paths (symlink-free), each parent before its children. */
  mounts: readonly ViewMount[];
  /** System roots that are symlinks on the host, recreated as the same symlink: [path, target]. */
  links: readonly (readonly [string, string])[];
  /** Visible host paths hidden from the run: directories under an empty tmpfs, files as empty. */
  masks: readonly { path: string; dir: boolean }[];
  /** What stays read-only inside the writable mounts (P-SBX-6). */
  protection: Protection;
  /** Host files shown read-only at a path of their own (`git_identity.ts`). */
  files?: readonly { path: string; source: string }[];
  /**
   * Where tools keep caches and logs under a HOME no mount shows (`~/.cache`, `~/.npm`): each an
   * empty, writable tmpfs of the run's own, as its /tmp. The rest of HOME stays read-only, so a
   * write there fails as it did, and does not vanish later unseen.
   */
  caches?: readonly string[];
}

/** The directories below HOME where tools keep what they can make again: caches and logs. */
const TOOL_CACHES = [".cache", ".npm"];

/** Directories every sandboxed run sees read-only, when they exist. */
export const SYSTEM_ROOTS = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
  "/opt",
];

/** Paths the sandbox always supplies itself: a host bind there would undo the namespace. */
export const OWN_MOUNTS = ["/proc", "/dev"];

/** The run's private, empty /tmp: only roots at or below it show through it. */
export const PRIVATE_TMP = "/tmp";

const GLOB_CHARS = /[*?[\\]/;

/** Whether `path` is `dir` or lies below it. */
export function isUnder(path: string, dir: string): boolean {
  return path === dir || dir === "/" || path.startsWith(`${dir}/`);
}

/** Whether a host bind at `mount` shows `path`: not when the private /tmp lies between them. */
export function shows(mount: string, path: string): boolean {
  return isUnder(path, mount) && (!isUnder(path, PRIVATE_TMP) || isUnder(mount, PRIVATE_TMP));
}

/**
 * The root of a grant: its longest glob-free directory prefix with `~` expanded to `home`
 * (`~/src/proj/**` → `/home/me/src/proj`); a glob-free grant is its own root. Null for a
 * relative grant (which can never match an absolute path) or a `~` grant without a HOME.
 */
export function grantRoot(glob: string, home: string | undefined): string | null {
  const tilde = glob === "~" || glob.startsWith("~/");
  if (tilde && home === undefined) return null;
  const path = tilde ? `${home}${glob.slice(1)}` : glob;
  if (!path.startsWith("/")) return null;
  const segments = path.split("/");
  const firstGlob = segments.findIndex((segment) => GLOB_CHARS.test(segment));
  return normalizePath((firstGlob < 0 ? segments : segments.slice(0, firstGlob)).join("/"));
}

let systemRootsFound: readonly (readonly [string, string | null])[] | null = null;

/**
 * The {@link SYSTEM_ROOTS} this host has, each with its target when it is a symlink (else null):
 * looked up once per kernel, as the sandbox itself is probed once (P-SBX-1), since every exec asks
 * and a missing root costs a thrown error each time.
 */
function systemRoots(): readonly (readonly [string, string | null])[] {
  systemRootsFound ??= SYSTEM_ROOTS.flatMap((root) => {
    try {
      return [[root, Deno.lstatSync(root).isSymlink ? Deno.readLinkSync(root) : null] as const];
    } catch {
      return []; // not on this host
    }
  });
  return systemRootsFound;
}

/** The symlink-free host path of an existing `path`, or null when it does not exist. */
function existingRealPath(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

/**
 * The root of an approved plan's physical path `path` (its parent's when `parent`), or null when
 * that root is no longer its own real path: the analysis resolved every link in it, so a link
 * there now was planted since (the agent swapping a directory of its project for a link to HOME
 * between the plan's stale check and its run), and following it would show what nobody approved.
 */
function approvedRoot(path: string, parent: boolean): string | null {
  const root = grantRoot(parent ? path.slice(0, path.lastIndexOf("/")) || "/" : path, undefined);
  return root !== null && existingRealPath(root) === root ? root : null;
}

/**
 * The view of a run under `grants` (P-SBX-3). Roots are resolved to their real paths, so a
 * symlink in a grant shows its target only where the grant names it, and nothing is bound
 * below a path the run can write (a nested bind there could be redirected by a planted link).
 * `masked` are the kernel's state directory, socket directory and policy file.
 */
export function sandboxView(
  grants: SandboxGrants,
  home: string | undefined,
  masked: readonly string[],
): SandboxView {
  const wanted = new Map<string, boolean>();
  const links: [string, string][] = [];
  const want = (path: string | null, writable: boolean) => {
    if (path === null || OWN_MOUNTS.some((own) => isUnder(path, own))) return;
    wanted.set(path, writable || wanted.get(path) === true);
  };
  for (const [root, target] of systemRoots()) {
    if (target === null) want(root, false);
    else links.push([root, target]);
  }
  for (const glob of grants.read) want(existingRealPath(grantRoot(glob, home) ?? ""), false);
  for (const glob of grants.write) want(existingRealPath(grantRoot(glob, home) ?? ""), true);
  for (const path of grants.approvedReads ?? []) want(approvedRoot(path, false), false);
  for (const path of grants.approvedWrites ?? []) want(approvedRoot(path, true), true);
  const all = [...wanted].map(([path, writable]) => ({ path, writable }));
  const mounts = all
    .filter((m) =>
      !all.some((o) => o.path !== m.path && shows(o.path, m.path) && (o.writable || !m.writable))
    )
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  const shown = (path: string) => mounts.some((m) => shows(m.path, path));
  const masks = masked.flatMap((path) => {
    const real = existingRealPath(path);
    if (real === null || !shown(real)) return [];
    return [{ path: real, dir: Deno.statSync(real).isDirectory }];
  });
  const writable = mounts.filter((m) => m.writable).map((m) => m.path);
  // a linked worktree's git directories inside its writable common directory stay roots of their
  // own: what git reads there is protected as it was, and they stay writable in it
  const inCommon = all.filter((m) =>
    m.writable && !writable.includes(m.path) &&
    writable.some((w) => isUnder(m.path, w) && isCommonGitDir(w))
  ).map((m) => m.path);
  const named = protection([...writable, ...inCommon].sort(), grants.writableProtected ?? []);
  const sealed = sealedParents(mounts, masks)
    .filter((dir) => !named.paths.some((p) => p.path === dir))
    .map((path) => ({ path, dir: true, absent: false }));
  const guarded = withoutApproved(
    { ...named, paths: [...named.paths, ...sealed] },
    grants.approvedWrites ?? [],
  );
  const pins = [...new Set([...guarded.pins, ...maskPins(mounts, masks)])];
  const realHome = existingRealPath(home ?? "");
  const caches = realHome === null || realHome === "/" || shown(realHome) ||
      OWN_MOUNTS.some((own) => isUnder(realHome, own))
    ? []
    : TOOL_CACHES.map((name) => `${realHome}/${name}`).filter((path) =>
      !mounts.some((m) => isUnder(m.path, path))
    );
  return {
    ...(caches.length > 0 ? { caches } : {}),
    mounts,
    links: links.filter(([path]) => !shown(path)),
    masks,
    protection: {
      ...guarded,
      pins: outsideProtectedDirs(pins, guarded.paths).sort(),
      masks: masks.map((m) => m.path),
    },
  };
}

/**
 * The directory of each masked file (the policy file) that lies below a writable mount, to be
 * bound read-only: the human saving the file atomically (a new file renamed over it, as editors
 * and `--print-config` may) replaces the mask's mount point, which Linux then detaches from every
 * sandbox, and a run could write the new file before its sandbox is stopped for it
 * ({@link Protection.masks}). A file directly in a writable mount's root keeps the mount
 * writable (the agent's grant), as does the run of a plan approved to write in that directory
 * (lifted as a protected path is): only that stop holds there.
 */
function sealedParents(
  mounts: readonly ViewMount[],
  masks: readonly { path: string; dir: boolean }[],
): string[] {
  const dirs = new Set<string>();
  for (const { path, dir } of masks) {
    if (dir) continue;
    const parent = path.slice(0, path.lastIndexOf("/"));
    const mount = deepestShowing(mounts, path);
    if (mount === null || !mount.writable || parent.length <= mount.path.length) continue;
    dirs.add(parent);
  }
  return [...dirs];
}

/** The deepest mount of `mounts` that shows `path`, or null. */
function deepestShowing(mounts: readonly ViewMount[], path: string): ViewMount | null {
  return mounts.filter((m) => shows(m.path, path))
    .reduce<ViewMount | null>(
      (a, m) => (a === null || m.path.length > a.path.length ? m : a),
      null,
    );
}

/**
 * The `pins` that do not lie inside a protected directory of `paths`. A pin is a writable bind,
 * made after the read-only one of a directory above it: inside that directory it would be
 * writable (a symlink at `sub/.envrc` to `../.claude/hooks/x` pinned `.claude/hooks`, and the
 * human's hook scripts there with it), and nothing in a read-only directory can be renamed anyway.
 */
function outsideProtectedDirs(pins: readonly string[], paths: readonly ProtectedPath[]): string[] {
  const dirs = paths.filter((p) => p.dir).map((p) => p.path);
  return pins.filter((pin) => !dirs.some((dir) => pin.startsWith(`${dir}/`)));
}

/**
 * The directories between a writable mount and a mask below it, to be pinned (bound over
 * themselves): a mount point cannot be renamed, so a run cannot move the policy file's, the
 * state's or the socket's directory aside and make a path of its own there, which the kernel
 * would then read as its policy or tokens on the host.
 */
function maskPins(mounts: readonly ViewMount[], masks: readonly { path: string }[]): string[] {
  const pins: string[] = [];
  for (const { path } of masks) {
    const mount = deepestShowing(mounts, path);
    if (mount === null || !mount.writable) continue;
    for (let up = path.slice(0, path.lastIndexOf("/")); up.length > mount.path.length;) {
      pins.push(up);
      up = up.slice(0, up.lastIndexOf("/"));
    }
  }
  return pins;
}

/** `protection` less the protected paths at or above a path of `approved`. */
function withoutApproved(protection: Protection, approved: readonly string[]): Protection {
  const lifted = (p: ProtectedPath) => approved.some((path) => isUnder(path, p.path));
  if (!protection.paths.some(lifted)) return protection;
  return {
    ...protection,
    paths: protection.paths.filter((p) => !lifted(p)),
    lifted: protection.paths.filter((p) => lifted(p) && p.absent).map((p) => p.path),
  };
}

/** Whether an existing host `path` can be reached inside a run with `view` (P-SBX-3). */
export function visibleIn(view: SandboxView, path: string): boolean {
  const real = existingRealPath(path);
  return real !== null && view.mounts.some((m) => shows(m.path, real)) &&
    !view.masks.some((mask) => isUnder(real, mask.path));
}

/**
 * Whether a run with `view` can write at `path` (a host path without symlinks, which may not
 * exist): a writable mount shows it and no protected path (P-SBX-6) or mask covers it.
 */
export function writableIn(view: SandboxView, path: string): boolean {
  return view.mounts.some((m) => m.writable && shows(m.path, path)) &&
    !view.protection.paths.some((p) => isUnder(path, p.path)) &&
    !view.masks.some((mask) => isUnder(path, mask.path));
}
