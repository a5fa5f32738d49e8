/**
 * A program started directly (a PTY's `cmd`, `args` and `env` overrides) as the bash command line
 * that does the same, so its effects are derived like an exec of it (issue 14): `bash -c …` is
 * opaque, `rm -f x` deletes x, `LD_PRELOAD=…` overrides make it opaque.
 */
import { quoted } from "../bash/quote.ts";

/** The bash source that runs `cmd args…` with the environment overrides `env`. */
export function programLine(
  cmd: string,
  args: readonly string[],
  env: Record<string, string>,
): string {
  const assigns: string[] = [];
  const odd: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) assigns.push(`${name}=${quoted(value)}`);
    else odd.push(quoted(`${name}=${value}`));
  }
  // A name bash cannot assign goes through `env`, which analysis treats as running a program.
  const prefix = odd.length > 0 ? ["env", ...odd] : [];
  return [...assigns, ...prefix, ...[cmd, ...args].map(quoted)].join(" ");
}
