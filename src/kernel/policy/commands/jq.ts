/** jq: its input files, and whether its filter reads the environment or modules. */
import { type ArgValue, type CommandIO, eachPath } from "./command_io.ts";

/** jq: input files; a filter using `env`/`$ENV` reads the environment, modules are opaque. */
export function jq(args: ArgValue[], io: CommandIO): void {
  let filter: ArgValue | null = null;
  let positionalArgs = false;
  const files: ArgValue[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const text = arg.text;
    if (text === null) {
      if (!arg.single || arg.prefix === "" || arg.prefix.startsWith("-")) {
        io.opaque("dynamic argument");
        return;
      }
    } else if (text === "--args" || text === "--jsonargs") {
      positionalArgs = true;
      continue;
    } else if (["--arg", "--argjson"].includes(text)) {
      i += 2;
      continue;
    } else if (["--slurpfile", "--rawfile", "--argfile"].includes(text)) {
      if (args[i + 2]) io.path("fs_read", args[i + 2]);
      i += 2;
      continue;
    } else if (
      ["--from-file", "--library-path"].includes(text) || /^-[^-]*[fL]/.test(text)
    ) {
      // `-f` or `-L` alone or among other letters (`-nf prog.jq`)
      io.opaque("jq program from files");
      return;
    } else if (text === "--indent") {
      i++;
      continue;
    } else if (text.startsWith("-") && text !== "-") {
      continue;
    }
    if (filter === null) filter = arg;
    else if (!positionalArgs) files.push(arg);
  }
  if (filter !== null) {
    // jq's grammar takes `$` and the name as two tokens: `$ ENV` and `$ # c⏎ENV` are `$ENV`
    if (filter.text === null || /\b(env|ENV)\b/.test(filter.text)) {
      io.names("env_read", ["*"]);
    }
    if (filter.text === null || /\b(import|include|modulemeta)\b/.test(filter.text)) {
      io.opaque("jq modules");
    }
  }
  eachPath(io, "fs_read", files);
}
