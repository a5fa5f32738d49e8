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

/** Longest socket path in bytes `bind`/`connect` accept: `sun_path` minus its terminating NUL. */
export function maxSocketPathBytes(os: string): number {
  return os === "linux" ? 107 : 103;
}

/**
 * The socket path for a session by the G-SOCK-1 selection rule of `os` (a rule, not a probe).
 *
 * Linux and others: explicit, `$XDG_RUNTIME_DIR/shoal/S.sock`, `$TMPDIR/shoal-<uid>/shoal/S.sock`,
 * `/tmp/shoal-<uid>/shoal/S.sock`. macOS: explicit, else `/private/tmp/shoal-<uid>/S.sock` whatever
 * the environment says: `$TMPDIR` is a per-login `/var/folders/…` directory that programs started
 * without it (MCP clients, launchd) never see, `/tmp` is a symlink to `/private/tmp`, and `sun_path`
 * holds 104 bytes, so the directory is short enough for every valid session name and every uid.
 *
 * Throws when the path would not fit `sun_path`, saying which part to shorten.
 */
export function socketPath(
  session: string,
  explicit: string | undefined,
  env: SocketEnv,
  uid: number,
  os: string = Deno.build.os,
): SocketChoice {
  const choice = chooseSocketPath(session, explicit, env, uid, os);
  const bytes = new TextEncoder().encode(choice.path).length;
  const max = maxSocketPathBytes(os);
  if (bytes > max) {
    const shorten = choice.explicit
      ? "use a shorter --socket path"
      : env.XDG_RUNTIME_DIR
      ? "use a shorter session name or XDG_RUNTIME_DIR"
      : env.TMPDIR
      ? "use a shorter session name or TMPDIR, or pass --socket"
      : "use a shorter session name";
    throw new Error(
      `socket path ${choice.path} is ${bytes} bytes, over the ${max} a Unix socket allows: ${shorten}`,
    );
  }
  return choice;
}

function chooseSocketPath(
  session: string,
  explicit: string | undefined,
  env: SocketEnv,
  uid: number,
  os: string,
): SocketChoice {
  if (explicit) return { path: explicit, explicit: true, root: "/" };
  if (os === "darwin") {
    return {
      path: `/private/tmp/shoal-${uid}/${session}.sock`,
      explicit: false,
      root: "/private/tmp",
    };
  }
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

/**
 * The default socket as the help texts write it, by the rule of `os` ({@link socketPath}): on macOS one place
 * whatever the environment says.
 */
export function socketHelp(os: string): string {
  return os === "darwin"
    ? "/private/tmp/shoal-<uid>/<session>.sock (on macOS, whatever XDG_RUNTIME_DIR and\n" +
      "           TMPDIR say)"
    : "$XDG_RUNTIME_DIR/shoal/<session>.sock, else $TMPDIR/shoal-<uid>/shoal/<session>.sock,\n" +
      "           else /tmp/shoal-<uid>/shoal/<session>.sock";
}
