/**
 * Launcher behind `deno task mcp`: resolves the socket path and the kernel executable, then runs
 * the facade (`main.ts`) under exactly the permissions of M-PERM-2 with stdio inherited, and
 * exits with its status.
 */
import { EnvReader, errorText, parseCommandLine, resolveConfig, USAGE } from "../src/mcp/config.ts";
import { localFlags } from "../src/mcp/permissions.ts";

const REPO = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

function absolute(path: string): string {
  return path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
}

function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

function onPath(name: string): string | null {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir !== "" && isExecutable(`${dir}/${name}`)) return absolute(`${dir}/${name}`);
  }
  return null;
}

/** SHOAL_KERNEL, else `shoal-kernel` on PATH, else the repository's `bin/shoal-kernel`. */
function kernelExecutable(env: EnvReader): string {
  const named = env.get("SHOAL_KERNEL");
  if (named !== undefined) return named.includes("/") ? absolute(named) : onPath(named) ?? named;
  return onPath("shoal-kernel") ?? `${REPO}/bin/shoal-kernel`;
}

async function launch(args: string[]): Promise<number> {
  // `deno task mcp -- ARGS` forwards the `--`.
  if (args[0] === "--") args = args.slice(1);
  const env = new EnvReader((line) => console.error(line));
  const parsed = parseCommandLine(args);
  if (!parsed.ok) {
    if (parsed.reason !== null) console.error(`shoal-mcp: ${parsed.reason}`);
    console.error(USAGE);
    return 2;
  }
  let config;
  try {
    config = resolveConfig(parsed.flags, env);
  } catch (e) {
    console.error(`shoal-mcp: ${errorText(e)}`);
    console.error(USAGE);
    return 2;
  }
  const kernel = kernelExecutable(env);
  const socket = absolute(config.socket ?? "");
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...localFlags(socket, kernel, config.socketRoot),
      `--config=${REPO}/deno.json`,
      `${REPO}/main.ts`,
      ...args,
    ],
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
    env: { SHOAL_KERNEL: kernel },
  }).spawn();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(signal, () => child.kill(signal));
  }
  return (await child.status).code;
}

if (import.meta.main) Deno.exit(await launch(Deno.args));
