/**
 * Who holds a child's output pipes, read from Linux `/proc`: after bash and its process group are
 * gone, a pipe that no other process holds can only be waiting for this kernel to read its last
 * bytes and EOF (K-BASH-3), however long a loaded event loop takes to deliver them.
 */

/** The identities (`pipe:[inode]`) of the stdout and stderr pipes of `pid`; null when unknown. */
export function outputPipes(pid: number): ReadonlySet<string> | null {
  return pipeLinks(`/proc/${pid}/fd`, [1, 2]);
}

/**
 * The identities of the pipes this kernel holds an end of as `fds`; null when unknown. Read from
 * its own descriptors, they need no wait: `/proc/PID/fd` of a child still in execve(2) waits for
 * the exec to finish (0.2-2 ms of the event loop per spawn here).
 */
export function ownPipes(fds: readonly number[]): ReadonlySet<string> | null {
  return pipeLinks("/proc/self/fd", fds);
}

/** The `pipe:[inode]` links of `fds` in the descriptor directory `dir`; null if one is no pipe or unreadable. */
function pipeLinks(dir: string, fds: readonly number[]): ReadonlySet<string> | null {
  const pipes = new Set<string>();
  for (const fd of fds) {
    try {
      const link = Deno.readLinkSync(`${dir}/${fd}`);
      if (!link.startsWith("pipe:")) return null;
      pipes.add(link);
    } catch {
      return null; // not Linux, or the process has already exited
    }
  }
  return pipes;
}

/**
 * Whether a process other than this kernel holds any of `pipes` open (a descendant that left
 * bash's process group). Processes whose descriptors cannot be read are not counted.
 */
export function heldElsewhere(pipes: ReadonlySet<string>): boolean {
  const self = String(Deno.pid);
  for (const proc of Deno.readDirSync("/proc")) {
    if (!/^[0-9]+$/.test(proc.name) || proc.name === self) continue;
    try {
      for (const fd of Deno.readDirSync(`/proc/${proc.name}/fd`)) {
        try {
          if (pipes.has(Deno.readLinkSync(`/proc/${proc.name}/fd/${fd.name}`))) return true;
        } catch {
          // closed meanwhile
        }
      }
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return false;
}
