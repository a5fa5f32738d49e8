/** Where the proxy's Unix socket is bound (P-NET-1), whatever the length of its directory's path. */

const encoder = new TextEncoder();

/** The longest Unix socket path, in bytes (macOS's `sun_path` holds 104, Linux's 108). */
const SOCKET_PATH_LIMIT = 103;

/**
 * Listens on the Unix socket `dir/name`. When that path is too long for a socket (a state
 * directory deep below a long HOME), it is bound through a short symlink to `dir` made in `/tmp`
 * for the moment of the bind: the socket itself stays in `dir`, inside the kernel's state
 * directory, which every sandbox masks (P-SBX-3).
 */
export function listenIn(dir: string, name: string): Deno.Listener {
  if (encoder.encode(`${dir}/${name}`).length <= SOCKET_PATH_LIMIT) {
    return Deno.listen({ transport: "unix", path: `${dir}/${name}` });
  }
  for (let tries = 0;; tries++) {
    const random = crypto.getRandomValues(new Uint8Array(8));
    const link = `/tmp/shoal-net-${
      [...random].map((b) => b.toString(16).padStart(2, "0")).join("")
    }`;
    try {
      Deno.symlinkSync(dir, link);
    } catch (e) {
      if (e instanceof Deno.errors.AlreadyExists && tries < 8) continue;
      throw e;
    }
    try {
      return Deno.listen({ transport: "unix", path: `${link}/${name}` });
    } finally {
      Deno.removeSync(link);
    }
  }
}
