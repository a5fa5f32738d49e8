/**
 * The user namespace that owns a resident sandbox's mount, IPC, PID and network namespaces, when
 * its processes are in another one. bwrap run by a user who is not root makes two nested user
 * namespaces for `--dev` (a devpts of its own, which only a mapped uid 0 may mount): the outer one
 * maps uid 0 to the user and owns the other namespaces, the inner one maps the user's uid back and
 * holds the sandbox's processes. `nsenter -U -t <init>` enters the inner one, where it has no
 * capability over the outer one's namespaces (setns of the IPC namespace fails with EPERM), so a
 * run enters the outer one first, with the rest, and the inner one from inside. No process is in
 * the outer one: nsenter opens it through the kernel's own fd of it (NS_GET_USERNS of the IPC
 * namespace), at /proc/<kernel pid>/fd/<fd>.
 */
import { closeFd, ioctlFd, openReadNonBlocking } from "../bash/fd_calls.ts";

/** ioctl(2) request: the user namespace owning a namespace, as a new close-on-exec fd. */
const NS_GET_USERNS = 0xb701;

/** A user namespace the kernel holds open, named by a path another process of its uid opens. */
export interface HeldUserns {
  path: string;
  /** Closes the kernel's fd of it (once). */
  close(): void;
}

/**
 * The user namespace owning the IPC namespace of `pid` (a sandbox's init), held open, when it is
 * not `pid`'s own user namespace; null when it is. Throws when /proc or the ioctl refuses.
 */
export function outerUserns(pid: number): HeldUserns | null {
  const ipc = openReadNonBlocking(`/proc/${pid}/ns/ipc`);
  if (ipc < 0) throw new Error(`cannot open the IPC namespace of ${pid} (errno ${-ipc})`);
  let owner: number;
  try {
    owner = ioctlFd(ipc, NS_GET_USERNS);
  } finally {
    closeFd(ipc);
  }
  if (owner < 0) throw new Error(`no owner of the IPC namespace of ${pid} (errno ${-owner})`);
  const path = `/proc/${Deno.pid}/fd/${owner}`;
  if (Deno.readLinkSync(path) === Deno.readLinkSync(`/proc/${pid}/ns/user`)) {
    closeFd(owner);
    return null;
  }
  let open = true;
  return {
    path,
    close: () => {
      if (open) closeFd(owner);
      open = false;
    },
  };
}
