/** Finding and probing the host's sandbox once at kernel start (P-SBX-1). */
import { delimiter } from "node:path";
import { Resident } from "./resident.ts";
import { sandboxView } from "./view.ts";
import { PERL } from "../net/inside.ts";
import { isExecutableFile } from "../bash/executable_file.ts";

/**
 * What the host offers: tier B with the bubblewrap that builds a sandbox, the util-linux tools
 * that enter a resident one ({@link Resident}) and prlimit, which bounds the processes inside
 * (`process_limit.ts`), or tier D (no sandbox).
 */
export type SandboxHost =
  | {
    tier: "B";
    bwrap: string;
    nsenter: string;
    setpriv: string;
    prlimit: string;
    /** Whether this bwrap sizes a tmpfs (`--size`: 0.8 and later, not setuid). */
    sizedTmpfs: boolean;
    /** The C compiler that builds the launcher (`compiled_launcher.ts`), or null: perl's serves. */
    cc: string | null;
  }
  | { tier: "D"; bwrap: null };

/** The host without a sandbox. */
export const NO_SANDBOX: SandboxHost = { tier: "D", bwrap: null };

/** The first executable `name` on `path` (a `PATH` value), or null. */
export function findOnPath(name: string, path: string): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir.startsWith("/") && isExecutableFile(`${dir}/${name}`)) return `${dir}/${name}`;
  }
  return null;
}

/** A run that succeeds only when it cannot create a Unix socket: the socket filter is on it. */
const UNIX_SOCKET_REFUSED = [PERL, "-e", "exit(socket(my $s, 1, 1, 0))"];

/**
 * Whether `bwrap` sizes a tmpfs: its help names `--size` (bubblewrap 0.8 and later), and it is
 * not setuid (a setuid bwrap refuses the option).
 */
async function sizesTmpfs(bwrap: string): Promise<boolean> {
  if (((Deno.statSync(bwrap).mode ?? 0) & 0o4000) !== 0) return false;
  const help = await new Deno.Command(bwrap, { args: ["--help"], stdin: "null", stderr: "null" })
    .output();
  return /^\s*--size\b/m.test(new TextDecoder().decode(help.stdout));
}

/**
 * Whether {@link UNIX_SOCKET_REFUSED} succeeds when started by `resident`'s launcher, as most runs
 * are (true when it has none: its runs all enter through nsenter).
 */
async function launchedRun(resident: Resident): Promise<boolean> {
  if (!resident.launches) return true;
  await resident.untilSpare();
  const dir = resident.pool.acquire();
  try {
    const state = {
      cwd: "/",
      env: new Map(),
      vars: new Map(),
      funcs: new Map(),
      aliases: new Map(),
    };
    const child = resident.spawn(state, UNIX_SOCKET_REFUSED, dir);
    const [status] = await Promise.all([
      child.status,
      new Response(child.stdout).arrayBuffer(),
      new Response(child.stderr).arrayBuffer(),
    ]);
    return status.success;
  } finally {
    resident.pool.release(dir);
  }
}

/** A probe under way ({@link probeSandbox}). */
export interface SandboxProbe {
  /** What the host offers, known once the probe's runs have ended. */
  host: Promise<SandboxHost>;
  /** Settles after {@link host}, once the probe's own sandbox is gone and its directory removed. */
  ended: Promise<void>;
  /**
   * Settles once the probe's runs in its sandbox have started, or {@link host} is known without
   * them: from then on its steps wait on no event loop turn of the kernel's until they end.
   */
  started: Promise<void>;
}

/**
 * Looks for `bwrap`, `nsenter`, `setpriv` and `prlimit` on `path` and runs one program both ways
 * a sandboxed run goes: in a resident sandbox of the narrowest view, network cut, entered from
 * outside and started by its launcher, where it cannot create a Unix socket (the socket filter,
 * `unix_socket_filter.ts`). Tier B only when that run succeeds (a kernel without user
 * namespaces, in a container that forbids them, with a setuid bwrap whose namespaces it cannot
 * enter, or without seccomp filters or perl, gets tier D and works as before). Off Linux (`os`, a
 * `Deno.build.os` value) nothing is looked for or run: tier D (no Seatbelt profile yet). With
 * tier B it also looks for `cc`, which later builds the launcher in C (`compiled_launcher.ts`).
 * Resolves when the probe's sandbox is gone too; {@link probeSandbox} answers before that.
 */
export async function detectSandbox(
  path: string,
  bash: string,
  os: string = Deno.build.os,
): Promise<SandboxHost> {
  const probe = probeSandbox(path, bash, os);
  await probe.ended;
  return await probe.host;
}

/**
 * {@link detectSandbox}, whose answer does not wait for the probe's sandbox to be killed and its
 * directory removed: a starting kernel answers its first attach meanwhile (issue 33: the kill
 * took 2-14 ms of that wait). `launcher` is the compiled launcher an earlier kernel kept
 * (`compiled_launcher.ts`), or null: the probe's sandbox is started by it as the kernel's
 * residents are, perl's launcher serving when there is none or it does not start. Perl's took
 * ~90 ms to its first spare while the kernel's modules loaded, and the first attach waited for it
 * (issue 33).
 */
export function probeSandbox(
  path: string,
  bash: string,
  os: string = Deno.build.os,
  launcher: string | null = null,
): SandboxProbe {
  let cleanup: Promise<void> = Promise.resolve();
  const runsStarted = Promise.withResolvers<void>();
  const host = (async (): Promise<SandboxHost> => {
    if (os !== "linux") return NO_SANDBOX;
    const [bwrap, nsenter, setpriv, prlimit] = ["bwrap", "nsenter", "setpriv", "prlimit"].map((
      n,
    ) => findOnPath(n, path));
    if (bwrap === null || nsenter === null || setpriv === null || prlimit === null) {
      return NO_SANDBOX;
    }
    const parent = Deno.makeTempDirSync({ prefix: "shoal-probe-" }); // bwrap starts before any await
    // A kernel that exits while this runs (another kernel owns the socket: status 3; a bad policy)
    // never reaches the clean-up below: its exit removes the directory instead (its bwrap dies
    // with it, --die-with-parent).
    const removeParent = () => {
      try {
        Deno.removeSync(parent, { recursive: true });
      } catch {
        // gone already
      }
    };
    globalThis.addEventListener("unload", removeParent);
    let resident: Resident | null = null;
    try {
      const view = sandboxView({ read: [], write: [] }, undefined, []);
      const started = Resident.start(
        { nsenter, setpriv, launcher },
        bash,
        { principal: "", bwrap, prlimit, view, net: null, portFloor: null, tmpfs: null }, // no principal's runs
        parent,
        () => {},
      );
      const sized = sizesTmpfs(bwrap).catch(() => false);
      resident = await started;
      const [cmd, ...args] = resident.command("/", UNIX_SOCKET_REFUSED);
      // Both ways at once: one after the other, the kernel's first attach waited for both.
      const runs = Promise.all([
        new Deno.Command(cmd, { args, stdin: "null", stdout: "null", stderr: "null" }).output(),
        launchedRun(resident),
      ]);
      runsStarted.resolve();
      const [entered, launched] = await runs;
      if (!entered.success || !launched) return NO_SANDBOX;
      const cc = findOnPath("cc", path);
      return { tier: "B", bwrap, nsenter, setpriv, prlimit, sizedTmpfs: await sized, cc };
    } catch {
      return NO_SANDBOX;
    } finally {
      const ending = resident;
      cleanup = (async () => {
        await ending?.kill();
        globalThis.removeEventListener("unload", removeParent);
        await Deno.remove(parent, { recursive: true }).catch(() => {});
      })().catch(() => {});
    }
  })();
  // not finally: a rejection (no TMPDIR for its directory) is the kernel's start's to report
  const settle = () => runsStarted.resolve();
  host.then(settle, settle);
  return { host, ended: host.then(() => cleanup), started: runsStarted.promise };
}
