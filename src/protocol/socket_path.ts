/** Session names accepted by attach and discovery (K-ATTACH-1). */
export const SESSION_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** Environment values the socket rule reads; empty counts as unset. */
export interface SocketEnv {
  XDG_RUNTIME_DIR?: string;
  TMPDIR?: string;
}

/** Where a socket path came from: an explicit path, or default discovery (rules 2–4). */
export interface SocketChoice {
  path: string;
  explicit: boolean;
  /** The runtime root the path lies below (G-SOCK-10): the discovery root, or `/` when explicit. */
  root: string;
}

/** The socket path for a session by the G-SOCK-1 selection rule (a rule, not a probe). */
export function socketPath(
  session: string,
  explicit: string | undefined,
  env: SocketEnv,
  uid: number,
): SocketChoice {
  if (explicit) return { path: explicit, explicit: true, root: "/" };
  const file = `shoal/${session}.sock`;
  if (env.XDG_RUNTIME_DIR) {
    return { path: `${env.XDG_RUNTIME_DIR}/${file}`, explicit: false, root: env.XDG_RUNTIME_DIR };
  }
  if (env.TMPDIR) {
    const tmp = env.TMPDIR.replace(/\/+$/, "") || "/";
    return { path: `${tmp === "/" ? "" : tmp}/shoal-${uid}/${file}`, explicit: false, root: tmp };
  }
  return { path: `/tmp/shoal-${uid}/${file}`, explicit: false, root: "/tmp" };
}
