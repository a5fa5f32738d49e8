/** Test support: a private sandbox environment per test, and the repository paths it runs. */
import { pidsMentioning, processLive } from "./proc.ts";

export { pidsMentioning };
import { delay } from "./wait.ts";

/** The repository root. */
export const REPO = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

/** The local kernel executable, as autostart and `deno task kernel` run it. */
export const KERNEL_BIN = `${REPO}/bin/shoal-kernel`;

/**
 * The kernel's entry module on a command line (followed by a space and its arguments): its
 * sources' `main.ts`, or the `main.js` of the bundle of them that `KERNEL_BIN` runs when it has one
 * (scripts/kernel_bundle.ts).
 */
export const KERNEL_ENTRY = /(\/src\/kernel\/main\.ts|\/\.build\/kernel\.\d+\/main\.js)( |$)/;

/**
 * macOS's G-SOCK-1 rule ignores the environment (one `/private/tmp/shoal-<uid>` for every
 * program), so there a facade is given the sandbox's default socket explicitly unless the test
 * names a socket or session itself: tests stay apart from each other and from the user's own
 * kernel.
 */
export const DARWIN_RULE = Deno.build.os === "darwin";

const DENO_DIR = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;

/** A temp directory holding XDG_RUNTIME_DIR, XDG_STATE_HOME and HOME for one test. */
export interface Sandbox {
  dir: string;
  /**
   * The default-discovered socket path of a session (G-SOCK-1 rule 2); on macOS, for the
   * default session, the explicit `SHOAL_SOCKET` of {@link Sandbox.env} instead.
   */
  socket(session?: string): string;
  /**
   * The runtime root a facade checks the default socket below (G-SOCK-10): XDG_RUNTIME_DIR, or
   * `/` on macOS, where that socket is explicit.
   */
  socketRoot: string;
  /** The environment for a facade or kernel in this sandbox, plus `extra`. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Stops every process whose command line mentions the sandbox, then removes it. */
  cleanup(): Promise<void>;
}

/**
 * Creates a sandbox, in `parent` when given, else in the system's temp dir. Its directory is named
 * physically: on macOS the temp directory lies below the `/var` symlink, which G-SOCK-10 refuses
 * in a socket path.
 */
export async function sandbox(parent?: string): Promise<Sandbox> {
  const made = await Deno.makeTempDir({ dir: parent, prefix: "shoal-mcp-test-" });
  const dir = await Deno.realPath(made);
  for (const sub of ["run", "state", "home"]) await Deno.mkdir(`${dir}/${sub}`, { mode: 0o700 });
  const socket = (session = "default") => `${dir}/run/shoal/${session}.sock`;
  return {
    dir,
    socket,
    socketRoot: DARWIN_RULE ? "/" : `${dir}/run`,
    env: (extra = {}) => ({
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: `${dir}/home`,
      XDG_RUNTIME_DIR: `${dir}/run`,
      XDG_STATE_HOME: `${dir}/state`,
      DENO_DIR,
      NO_COLOR: "1",
      ...(DARWIN_RULE && !("SHOAL_SOCKET" in extra || "SHOAL_SESSION" in extra)
        ? { SHOAL_SOCKET: socket() }
        : {}),
      ...extra,
    }),
    cleanup: async () => {
      await stopProcessesMentioning(dir);
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/**
 * SIGTERMs every process mentioning `marker` (e.g. an autostarted kernel), SIGKILL after 3 s; no
 * bwrap, nor what execs one. A bwrap's command line names every path its view binds or protects:
 * an agent that sees /tmp protects each `.git` and `.gitconfig` below it, other tests' directories
 * among them, so one that names `marker` may be another kernel's sandbox, with a run going on in
 * it. This test's own sandboxes end with its kernel (it stops them; bwrap's `--die-with-parent`).
 */
export async function stopProcessesMentioning(marker: string): Promise<void> {
  const pids = pidsMentioning(marker, { bwrap: false });
  for (const pid of pids) {
    try {
      Deno.kill(pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + 3000;
  while (pids.some(processLive) && Date.now() < deadline) await delay(20);
  for (const pid of pids.filter(processLive)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
