import { terminalJson } from "../../protocol/unshowable.ts";

/**
 * Prints `shoal-kernel: <text>` (then `usage`, when given) on stderr, with control and invisible
 * characters written as `\u` escapes (K-CLI-3): the arguments and paths an error repeats may have
 * been pasted from an agent's words, and a terminal would run an escape sequence in them.
 */
export function printCliError(text: string, usage?: string): void {
  const line = `shoal-kernel: ${terminalJson(text)}`;
  console.error(usage === undefined ? line : `${line}\n${usage}`);
}
