/** Why a socket path is not trusted (G-SOCK-10): the kernel exits 1, clients do not connect. */
export class UntrustedPathError extends Error {}

const STICKY = 0o1000;
const GROUP_OR_OTHER_WRITE = 0o022;

/**
 * The paths G-SOCK-10 checks for a socket at `path` below `root`: each directory strictly below
 * `root` (every component after `/` when `root` is `/`), ending with the socket path itself.
 */
export function checkedPaths(path: string, root: string): string[] {
  const parts = path.split("/").filter((p) => p !== "");
  const rootDepth = root.split("/").filter((p) => p !== "").length;
  const out: string[] = [];
  for (let i = rootDepth + 1; i <= parts.length; i++) {
    out.push("/" + parts.slice(0, i).join("/"));
  }
  return out;
}

/**
 * Checks the trusted path rule (G-SOCK-10) for the socket at `path` below `root`, for a
 * program running as `euid`: every existing component (by `lstat`) is owned by `euid` or root, is
 * no symlink, and no directory owned by `euid` is group- or other-writable unless it is sticky and
 * root-owned. Components that do not exist yet end the walk (creating or connecting to them is the
 * caller's business). Throws {@link UntrustedPathError} naming the offending path and its owner.
 * Returns whether `path` itself exists (every component was there to check).
 */
export function checkTrustedPath(path: string, root: string, euid: number): boolean {
  const absolute = path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
  for (const component of checkedPaths(absolute, root)) {
    let info: Deno.FileInfo;
    try {
      // sync: the same lstats through async ops took 3-6 ms of a facade's start, before it could
      // autostart its kernel (issue 33)
      info = Deno.lstatSync(component);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return false;
      if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
        throw new UntrustedPathError(
          `permission denied for unix:${path} (cannot read ${component} to check who owns it)`,
        );
      }
      throw e;
    }
    const owner = info.uid ?? -1;
    if (info.isSymlink) {
      throw new UntrustedPathError(
        `untrusted socket path: ${component} is a symlink (owner uid ${owner})`,
      );
    }
    if (owner !== euid && owner !== 0) {
      throw new UntrustedPathError(
        `untrusted socket path: ${component} is owned by uid ${owner}, not by uid ${euid} or root`,
      );
    }
    const mode = info.mode ?? 0;
    const shared = info.isDirectory && owner === euid && (mode & GROUP_OR_OTHER_WRITE) !== 0;
    if (shared && !((mode & STICKY) !== 0 && owner === 0)) {
      throw new UntrustedPathError(
        `untrusted socket path: ${component} (owner uid ${owner}) is writable by others (mode ${
          (mode & 0o7777).toString(8)
        })`,
      );
    }
  }
  return true;
}
