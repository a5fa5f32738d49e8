/**
 * Prints, one per line, the Deno executable running this script (so `bin/shoal-mcp` checks for
 * Deno once), then the flags it runs the facade under for this command line and environment:
 * exactly M-PERM-2's for the resolved socket and kernel executable. `--print-config` may run the
 * kernel (to provision the agent) and read its variables; any other command line that does not
 * serve (help, version, `--as-human`, usage errors) gets only `--no-prompt`: the facade then
 * needs no permission at all, except to read its variables when one of them is the usage error.
 */
import { UsageError } from "../src/protocol/cli_args.ts";
import { parseCommandLine } from "../src/mcp/command_line.ts";
import { EnvReader, resolveConfig } from "../src/mcp/config.ts";
import {
  FACADE_ENV,
  localFlags,
  printConfigFlags,
  RELEASE_KERNEL,
} from "../src/mcp/permissions.ts";

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

/** `name` as the facade's spawn will find it: a path made absolute, else the first match on PATH. */
function resolveExecutable(name: string, path: string): string {
  if (name.includes("/")) return absolute(name);
  for (const dir of path.split(":")) {
    if (dir !== "" && isExecutable(`${dir}/${name}`)) return absolute(`${dir}/${name}`);
  }
  return name;
}

function flags(args: string[]): string[] {
  const env = new EnvReader(() => {}); // the facade itself warns, once
  let config;
  const kernel = resolveExecutable(
    env.get("SHOAL_KERNEL") ?? RELEASE_KERNEL,
    Deno.env.get("PATH") ?? "",
  );
  let command;
  try {
    command = parseCommandLine(args);
  } catch (e) {
    if (e instanceof UsageError) return ["--no-prompt"];
    throw e;
  }
  if (command.action === "print-config" && !command.asHuman) return printConfigFlags(kernel);
  if (command.action !== "serve") return ["--no-prompt"];
  try {
    config = resolveConfig(command.flags, env);
  } catch (e) {
    // A variable's value is the usage error (M-CLI-1/2: SHOAL_SESSION=a/b, SHOAL_PROJECT=~/p):
    // the facade reads its variables to say so and exit 2; without them it served the default
    // session with no permission, every call 'kernel unavailable: permission denied for sys:uid'.
    if (e instanceof UsageError) return ["--no-prompt", `--allow-env=${FACADE_ENV.join(",")}`];
    throw e;
  }
  return localFlags(
    config.socket === null ? null : absolute(config.socket),
    kernel,
    config.socketRoot,
  );
}

if (import.meta.main) console.log([Deno.execPath(), ...flags(Deno.args)].join("\n"));
