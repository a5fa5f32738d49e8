/**
 * `shoal-kernel onboard <principal> [--project DIR]` (M-ONB-1): what `shoal-mcp --print-config`
 * runs to make an agent safe by default. Grants the principal the `project` profile on DIR in the
 * user's policy file, reuses or creates its token, and prints one line of JSON for the facade to
 * turn into a client configuration; each change is one line on stderr.
 */
import { existsSync, realpathSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseCommandArgs, stringOption, UsageError } from "../../protocol/cli_args.ts";
import { stateDir } from "../../protocol/state_dir.ts";
import { socketPath } from "../../protocol/socket_path.ts";
import { agentToken } from "../auth/agent_secrets.ts";
import { ensurePrivateDir } from "../auth/private_dir.ts";
import { bashCandidates, resolveBash } from "../bash/discover.ts";
import { readPolicyText, userPolicyPath } from "../policy/leash.ts";
import { grantProject, type ProjectGrant } from "../policy/project_profile.ts";
import { detectSandbox } from "../sandbox/probe.ts";
import { isExecutableFile } from "../bash/executable_file.ts";
import { PERL } from "../net/inside.ts";
import { printCliError } from "./cli_error.ts";
import { repositoryRoot } from "../sandbox/repository_root.ts";

const USAGE = "usage: shoal-kernel onboard <principal> [--project DIR]";

/** What `onboard` prints on stdout (one line of compact JSON). */
export interface OnboardResult {
  principal: string;
  /** The bearer secret the agent's facade attaches with. */
  token: string;
  /** The project directory, absolute and resolved. */
  project: string;
  policy: string;
  /** The variables the kernel found its state and policy by: the configuration must pass them on. */
  env: Record<string, string>;
  /** The sandbox tier agents get here (P-SBX-1). */
  tier: "B" | "D";
}

/** Variables that decide where a kernel keeps its state, policy and socket (G-STATE-1, G-SOCK-1). */
const PLACE_VARIABLES = ["HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "TMPDIR"];

/** Runs `onboard`; `args` are the words after it. Returns 0 done, 1 failure, 2 usage error. */
export async function runOnboardCommand(
  args: string[],
  given: Record<string, string>,
): Promise<number> {
  try {
    const env = absolutePlaces(given);
    const parsed = parseCommandArgs(args, { project: { type: "string" } }, true);
    if (parsed.positionals.length !== 1) throw new UsageError("onboard takes <principal>");
    const [principal] = parsed.positionals;
    if (!/^agent:[A-Za-z0-9._-]{1,64}$/.test(principal)) {
      throw new UsageError(`principal must look like agent:NAME, got ${principal}`);
    }
    const project = projectDir(stringOption(parsed, "project") ?? ".", env);
    const policy = userPolicyPath(env);
    if (policy === null) throw new Error("no policy location: XDG_CONFIG_HOME and HOME are unset");
    const state = stateDir(undefined, env);
    planPolicy(policy, principal, project); // a policy that does not parse changes nothing
    ensurePrivateDir(state);
    const { token, tokenLine, change } = provisionLocked(state, policy, principal, project);
    const host = await detectSandbox(
      env.PATH ?? "",
      await resolveBash(undefined, bashCandidates(Deno.build.os, env.PATH)),
    );
    console.error(
      change ?? `policy: ${policy} already lets ${principal} work in ${project} (unchanged)`,
    );
    console.error(tokenLine);
    if (host.tier !== "B") console.error(noSandboxWarning(env.PATH ?? ""));
    const top = repositoryRoot(project);
    if (top !== null && top !== project) console.error(enclosingRepositoryWarning(project, top));
    const places = printedPlaces(env, policy, state);
    const result: OnboardResult = {
      principal,
      token: token.secret,
      project,
      policy,
      env: places,
      tier: host.tier,
    };
    console.log(JSON.stringify(result));
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      printCliError(e.message, USAGE);
      return 2;
    }
    printCliError(e instanceof Error ? e.message : String(e));
    return 1;
  }
}

/**
 * The token, then the policy grant, under an exclusive lock on `<state>/agent_secrets.json.lock`:
 * onboards at the same time (a script printing every client's configuration) each read the
 * policy and secrets the one before wrote, instead of renaming over each other's (a grant
 * reported as added, then gone, and the printed configuration refused at attach). The token
 * first: one that cannot be had (a malformed secrets file) leaves the policy as it was; each
 * change is reported once made.
 */
function provisionLocked(state: string, policy: string, principal: string, project: string) {
  const lock = Deno.openSync(`${state}/agent_secrets.json.lock`, {
    create: true,
    write: true,
    mode: 0o600,
  });
  try {
    lock.lockSync(true);
    const grant = planPolicy(policy, principal, project);
    const token = agentToken(state, principal);
    const tokenLine = token.created
      ? `token: created ${token.id} for ${principal} (secret kept in ${state}/agent_secrets.json, 0600)`
      : `token: reusing ${token.id} of ${principal}`;
    try {
      return { token, tokenLine, change: writePolicy(grant) };
    } catch (e) {
      if (token.created) console.error(tokenLine);
      throw e;
    }
  } finally {
    lock.close();
  }
}

/**
 * The warning for a project inside a repository whose top is above it (a monorepo's package):
 * the project profile grants the project only (M-ONB-2), so the agent's git, which reads the
 * top's `.git`, fails there (M-ONB-3: what needs more gets a clear answer).
 */
function enclosingRepositoryWarning(project: string, top: string): string {
  return `warning: ${project} is inside the git repository ${top}, whose .git this grant does ` +
    "not cover: the agent's git status, log and commit will fail there. To let it use git, " +
    `print the configuration with --project ${top} instead.`;
}

/**
 * The tier D warning (M-ONB-3), with what to do: install bubblewrap when it is not on `path`, or
 * the tools beside it the sandbox needs; when all are there, bubblewrap could not make a sandbox
 * (Ubuntu 23.10 and later restrict unprivileged user namespaces through AppArmor; a container may
 * forbid them), which installing it again does not change.
 */
function noSandboxWarning(path: string): string {
  const head = "warning: no working bubblewrap here, so the OS wall is missing: the agent gets " +
    "only the policy check (tier D), and an interpreter or script it runs can reach past its " +
    "grants. ";
  const found = (name: string) =>
    name.startsWith("/")
      ? isExecutableFile(name)
      : path.split(":").some((dir) => dir.startsWith("/") && isExecutableFile(`${dir}/${name}`));
  if (!found("bwrap")) {
    return `${head}Install it (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf ` +
      "install bubblewrap) and restart shoal-kernel.";
  }
  const missing = ["nsenter", "setpriv", "prlimit", PERL].filter((name) => !found(name));
  if (missing.length > 0) {
    return `${head}bubblewrap is installed, but the sandbox also needs ${missing.join(", ")} ` +
      "(util-linux, perl): install them and restart shoal-kernel.";
  }
  return `${head}bubblewrap is installed but could not make a sandbox here: user namespaces are ` +
    "likely restricted (Ubuntu 23.10 and later: AppArmor, see sysctl " +
    "kernel.apparmor_restrict_unprivileged_userns; a container may forbid them). Run " +
    "'bwrap --ro-bind / / true' to see bubblewrap's own error, then restart shoal-kernel.";
}

/**
 * What the configuration passes on of where things are. The config and state directories
 * always, also when found through HOME: a client passes its servers its own environment, and one
 * whose XDG_* differ (a Flatpak editor's) would start a kernel on another policy and token store.
 * Not TMPDIR, which the agent's commands would inherit and its sandbox does not show (its
 * mktemp failed): when TMPDIR chose the socket (G-SOCK-1 rule 3), that socket as SHOAL_SOCKET,
 * where the terminal's `shoal-kernel approvals` finds it too.
 */
function printedPlaces(
  env: Record<string, string>,
  policy: string,
  state: string,
): Record<string, string> {
  const places: Record<string, string> = {
    ...(env.HOME ? { HOME: env.HOME } : {}),
    XDG_CONFIG_HOME: dirname(dirname(policy)),
    XDG_STATE_HOME: dirname(state),
    ...(env.XDG_RUNTIME_DIR ? { XDG_RUNTIME_DIR: env.XDG_RUNTIME_DIR } : {}),
  };
  const uid = Deno.uid() ?? 0;
  // A named socket's every directory is checked (G-SOCK-10), a found one's only below TMPDIR:
  // named, it goes through TMPDIR's real path, so a TMPDIR reached by a symlink still serves.
  const tmp = env.TMPDIR ? safeRealpath(env.TMPDIR) : undefined;
  const chosen = socketPath("default", undefined, { ...env, TMPDIR: tmp }, uid).path;
  const withoutTmp = socketPath("default", undefined, { ...env, TMPDIR: undefined }, uid).path;
  if (chosen !== withoutTmp) places.SHOAL_SOCKET = chosen;
  return places;
}

/**
 * `env` with each relative {@link PLACE_VARIABLES} value made absolute against the working
 * directory, where onboard uses it: printed as given, it would name other places for a facade and
 * kernel that a client starts elsewhere (Claude Desktop starts it in `/`), whose token then fails.
 */
function absolutePlaces(env: Record<string, string>): Record<string, string> {
  const relative = PLACE_VARIABLES.filter((name) => env[name] && !env[name].startsWith("/"));
  if (relative.length === 0) return env;
  const cwd = Deno.cwd();
  return { ...env, ...Object.fromEntries(relative.map((name) => [name, resolve(cwd, env[name])])) };
}

/**
 * Directories of HOME whose files programs you run later load as code or use as credentials: a
 * login key or an ssh `ProxyCommand`, git's and systemd's user configuration, autostart entries,
 * commands on `PATH` (`~/.local/bin`, and `~/bin`, which Debian's and Ubuntu's stock `~/.profile`
 * puts there too), what installers make the shell's startup files source or put on `PATH`
 * (rustup's `~/.cargo`, nvm, Oh My Zsh, SDKMAN, bun, Deno, pyenv, rbenv), cloud, Kubernetes and
 * Docker credential helpers, macOS login agents.
 */
const RUN_AS_YOU = [
  ".ssh",
  ".gnupg",
  ".config",
  ".local/bin",
  "bin",
  ".cargo",
  ".nvm",
  ".oh-my-zsh",
  ".sdkman",
  ".bun",
  ".deno",
  ".pyenv",
  ".rbenv",
  ".local/share/systemd",
  ".aws",
  ".kube",
  ".docker",
  "Library/LaunchAgents",
];

/** The system's command directories (a root user's, or Homebrew's, which its user owns). */
const SYSTEM_COMMANDS = [
  "/usr/local/bin",
  "/usr/local/sbin",
  "/usr/bin",
  "/usr/sbin",
  "/bin",
  "/sbin",
  "/opt/homebrew/bin",
];

/**
 * The system's configuration and the code its programs load: every login shell sources
 * `/etc/profile.d`, cron runs `/etc/cron.d`, the loader reads `/etc/ld.so.preload` and the
 * libraries, interactive shells source `/usr/share/bash-completion`. Refused as a project, and so
 * is any directory below one (a root user may write there, and it runs as root).
 */
const SYSTEM_CODE = [
  "/etc",
  "/boot",
  "/usr/lib",
  "/usr/lib32",
  "/usr/lib64",
  "/usr/libx32",
  "/usr/libexec",
  "/usr/share",
  "/usr/local/lib",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
];

/**
 * `dir` resolved to an existing directory's real path. `/`, HOME and the directories above it
 * are refused: granting them would hand the agent `~/.ssh` and everything else. So is a directory
 * that is or holds one of {@link RUN_AS_YOU} (or `XDG_CONFIG_HOME`): an agent's file there would
 * run as you, unconfined, or log in as you. A directory below one (`~/.config/nvim`) may be granted.
 */
function projectDir(dir: string, env: Record<string, string>): string {
  let real: string;
  try {
    real = realpathSync(dir);
    if (!Deno.statSync(real).isDirectory) throw new Error("not a directory");
  } catch (e) {
    // `--project=~/x` reaches here as written: shells expand a `~` only at the start of a word
    const tilde = /^~(\/|$)/.test(dir) && env.HOME
      ? ` (~ is not expanded after '='; write --project ${env.HOME}${dir.slice(1)})`
      : "";
    // said as a person would ("no such directory"), not as node's `ENOENT: …, lstat 'x'`
    const why = (e as { code?: string }).code === "ENOENT"
      ? "no such directory"
      : e instanceof Error
      ? e.message
      : String(e);
    throw new Error(`project ${dir}: ${why}${tilde}`);
  }
  const holds = (path: string) => path === real || path.startsWith(`${real}/`);
  const realHome = env.HOME ? safeRealpath(env.HOME) : null;
  if (real === "/" || (realHome !== null && holds(realHome))) {
    throw new Error(
      `refusing to grant ${real} to an agent: it holds your home directory; pass --project DIR`,
    );
  }
  const sensitive = [
    ...(realHome === null ? [] : RUN_AS_YOU.map((name) => `${realHome}/${name}`)),
    ...(env.XDG_CONFIG_HOME ? [env.XDG_CONFIG_HOME] : []),
    ...SYSTEM_COMMANDS.filter(existsSync),
  ].map(safeRealpath);
  const system = SYSTEM_CODE.filter(existsSync).map(safeRealpath);
  const within = system.find((path) => real === path || real.startsWith(`${path}/`));
  if (within !== undefined) {
    throw new Error(
      `refusing to grant ${real} to an agent: it lies in ${within}, whose files programs you run ` +
        `load as code; pass a project directory`,
    );
  }
  const held = [...sensitive, ...system].find(holds);
  if (held !== undefined) {
    throw new Error(
      `refusing to grant ${real} to an agent: it holds ${held}, whose files programs you run ` +
        `load as code or credentials; pass a project directory`,
    );
  }
  if (/[*?[\]{}\\]/.test(real)) {
    throw new Error(`project ${real}: a path with glob characters cannot be granted`);
  }
  return real;
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** A planned edit of the policy file: its path, where it is written, its text before and after. */
interface PolicyPlan {
  path: string;
  /** The file written: `path`, or the target of a symlink at `path`. */
  target: string;
  /** The text now, or null when there is no file. */
  text: string | null;
  grant: ProjectGrant;
}

/** The grant of the project in the policy file at `path`, computed but not written. */
function planPolicy(path: string, principal: string, project: string): PolicyPlan {
  let text: string | null = null;
  let target = path;
  try {
    target = realpathSync(path);
    // as the kernel reads it: a file it would refuse (not UTF-8, not regular) is refused here too
    text = readPolicyText(target);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound) && (e as { code?: string }).code !== "ENOENT") {
      throw e;
    }
  }
  return { path, target, text, grant: grantProject(text, path, principal, project) };
}

/**
 * Writes a planned grant: a new file is created 0600 in a 0700 directory; an existing one is
 * edited and replaced by rename (through a symlink, at its target), keeping its mode. Either is
 * written whole to a temporary file first, which a failure removes: written in place on a full
 * disk, a new policy was left empty, and every later onboard and kernel start refused it as
 * malformed (G-STATE-3). Returns the change line, or null when nothing changed.
 */
function writePolicy({ path, target, text, grant }: PolicyPlan): string | null {
  if (grant.change === null) return null;
  if (text === null) ensurePrivateDir(dirname(path));
  const mode = text === null ? 0o600 : (Deno.statSync(target).mode ?? 0o600) & 0o777;
  const temp = `${dirname(target)}/.leash.jsonc.${crypto.randomUUID()}.tmp`;
  try {
    const file = Deno.openSync(temp, { createNew: true, write: true, mode });
    try {
      const bytes = new TextEncoder().encode(grant.text);
      for (let done = 0; done < bytes.length;) done += file.writeSync(bytes.subarray(done));
      file.syncSync();
    } finally {
      file.close();
    }
    Deno.chmodSync(temp, mode);
    // a new file must not replace one made meanwhile: a link fails where the name is taken
    if (text === null) Deno.linkSync(temp, path);
    else Deno.renameSync(temp, target);
  } finally {
    rmSync(temp, { force: true });
  }
  return `policy: ${grant.change}`;
}
