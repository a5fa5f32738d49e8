/**
 * Which host paths are mount points in another mount namespace: a sandbox of another kernel
 * sharing the project binds a placeholder of this one as an existing protected name, and removing
 * the placeholder on the host would detach that read-only bind and free the name inside (P-SBX-6).
 */
import { procStat } from "../bash/proc_stat.ts";
import { mountPoints } from "./protected_mounts.ts";

/** The parent pid of `pid` (/proc/PID/stat field 4), or null once it is gone. */
function parentOf(pid: number): number | null {
  const fields = procStat(pid);
  return fields === null ? null : Number(fields[1]);
}

/** Whether `pid` is a descendant of this process. */
function isOurs(pid: number): boolean {
  for (let at: number | null = parentOf(pid); at !== null && at > 1; at = parentOf(at)) {
    if (at === Deno.pid) return true;
  }
  return false;
}

/**
 * Those of `paths` that are a mount point in a mount namespace other than this process's, of a
 * process we may inspect; with `sparingOurs`, namespaces of processes this kernel started (its own
 * sandboxes, which may still be ending) do not count.
 */
export function mountedElsewhere(paths: readonly string[], sparingOurs: boolean): Set<string> {
  const found = new Set<string>();
  if (paths.length === 0) return found;
  let own: string;
  try {
    own = Deno.readLinkSync("/proc/self/ns/mnt");
  } catch {
    return found; // no /proc: no mount namespaces to look into
  }
  const seen = new Set([own]);
  for (const entry of Deno.readDirSync("/proc")) {
    const pid = Number(entry.name);
    if (!(pid > 0)) continue;
    let namespace: string;
    let points: Set<string>;
    try {
      namespace = Deno.readLinkSync(`/proc/${pid}/ns/mnt`);
      if (seen.has(namespace) || (sparingOurs && isOurs(pid))) continue;
      points = mountPoints(pid);
    } catch {
      continue; // gone, or another user's
    }
    seen.add(namespace);
    for (const path of paths) if (points.has(path)) found.add(path);
  }
  return found;
}
