/** Test support: what `shoal-mcp --print-config` prints (M-ONB-1, M-CLI-6), run and parsed. */
import assert from "node:assert/strict";
import { REPO, type Sandbox } from "./sandbox.ts";

const DENO_DIR = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;

/** A fresh user's environment: HOME and the runtime dir in `box`, nothing else set up. */
export function freshUser(box: Sandbox): Record<string, string> {
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: `${box.dir}/home`,
    XDG_RUNTIME_DIR: `${box.dir}/run`,
    DENO_DIR,
    NO_COLOR: "1",
  };
}

/** Runs `bin/shoal-mcp args` of the checkout `repo` in `cwd` under exactly `env`. */
export async function shoalMcp(
  args: string[],
  env: Record<string, string>,
  cwd = "/",
  repo = REPO,
) {
  const out = await new Deno.Command(`${repo}/bin/shoal-mcp`, {
    args,
    env,
    clearEnv: true,
    cwd,
    stdin: "null",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/** The server a printed configuration starts: command, args and env. */
export interface Printed {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Splits a POSIX shell line of plain and single-quoted words (what `--print-config` writes). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  // `\'` first: a plain run stops at a backslash, as in `'José'\''s'`
  for (const m of line.trim().matchAll(/(?:\\'|[^\s'\\]+|'[^']*')+/g)) {
    words.push(m[0].replace(/'([^']*)'|\\'/g, (_w, q) => (q === undefined ? "'" : q)));
  }
  return words;
}

/** Parses the configuration printed for `client` (M-CLI-6). */
export function parsePrinted(client: string, text: string): Printed {
  if (client === "claude-code") {
    // `cd PROJECT && claude mcp add --scope local shoal …`: registered for the project
    const all = shellWords(text);
    const words = all[0] === "cd" && all[2] === "&&" ? all.slice(3) : all;
    const scoped = words[3] === "--scope";
    assert.deepEqual(words.slice(0, 4), ["claude", "mcp", "add", scoped ? "--scope" : "shoal"]);
    if (scoped) assert.deepEqual(words.slice(4, 6), ["local", "shoal"]);
    const env: Record<string, string> = {};
    let i = scoped ? 6 : 4;
    for (; words[i] === "--env"; i += 2) {
      const [name, ...value] = words[i + 1].split("=");
      env[name] = value.join("=");
    }
    assert.equal(words[i], "--", text);
    return { command: words[i + 1], args: words.slice(i + 2), env };
  }
  const config = JSON.parse(text);
  const server = client === "vscode" ? config.servers.shoal : config.mcpServers.shoal;
  if (client === "vscode") assert.equal(server.type, "stdio");
  return { command: server.command, args: server.args, env: server.env };
}
