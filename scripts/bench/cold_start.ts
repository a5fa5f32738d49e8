/**
 * A cold start as a client makes it (issue 33): shoal's client command from the configuration
 * `--print-config` prints, and any MCP server timed to its `initialize` result and to its first
 * tool call's. Shared by `startup.ts` and `startup_stages.ts`.
 */
import { INITIALIZE } from "../../tests/_support/converse.ts";
import { spawnPiped } from "../../tests/_support/proc.ts";
import { parsePrinted, shoalMcp } from "../../tests/_support/printed_config.ts";
import { type Sandbox, sandbox } from "../../tests/_support/sandbox.ts";

/** How a shoal row starts its facade: the printed agent configuration, or the human's. */
export type Mode = "agent" | "human";

/** A provisioned sandbox and the client command of the configuration printed in it. */
export interface Printed {
  box: Sandbox;
  argv: string[];
  env: Record<string, string>;
}

/**
 * A fresh sandbox in which the checkout at `repo` printed its `claude-desktop` configuration for
 * `mode` (the agent's with a project of its own in the sandbox), and that configuration's command.
 */
export async function printedStart(repo: string, mode: Mode): Promise<Printed> {
  const box = await sandbox();
  const project = `${box.dir}/project`;
  await Deno.mkdir(project);
  const args = ["--print-config", "claude-desktop"];
  args.push(...(mode === "human" ? ["--as-human"] : ["--project", project]));
  const out = await shoalMcp(args, box.env(), "/", repo);
  if (out.code !== 0) {
    await box.cleanup();
    throw new Error(`--print-config failed: ${out.stderr}`);
  }
  const printed = parsePrinted("claude-desktop", out.stdout);
  return { box, argv: [printed.command, ...printed.args], env: box.env(printed.env) };
}

/** A started server after its first call: ms from the spawn, and how to end it. */
export interface FirstCall {
  child: Deno.ChildProcess;
  /** Wall-clock ms (epoch) of the spawn. */
  spawnedAt: number;
  init: number;
  firstCall: number;
  /** Closes the server's stdin and waits for its exit. */
  end: () => Promise<void>;
}

/** Spawns `argv` with exactly `env`, sends `initialize` and then the `tools/call` of `call`. */
export async function firstCall(
  argv: string[],
  env: Record<string, string>,
  call: { name: string; arguments: Record<string, unknown> },
): Promise<FirstCall> {
  const spawnedAt = performance.timeOrigin + performance.now();
  const t0 = performance.now();
  const child = spawnPiped(argv, env, "null");
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const until = async (id: number) => {
    while (!buffered.split("\n").some((l) => l.startsWith("{") && JSON.parse(l).id === id)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`${argv[0]} closed stdout`);
      buffered += value;
    }
  };
  const send = (m: unknown) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  await send(INITIALIZE);
  await until(1);
  const init = performance.now() - t0;
  await send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: call });
  await until(2);
  const first = performance.now() - t0;
  const end = async () => {
    await writer.close();
    await reader.cancel();
    await child.status;
  };
  return { child, spawnedAt, init, firstCall: first, end };
}
