/** Test support: one MCP conversation by raw frames with a server process started as a client would. */
import { spawnPiped } from "./proc.ts";

/** An `initialize` request (id 1) as clients send it. */
export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "shoal-test", version: "0" },
  },
};

/** How a conversation ended: exit status, every frame with an id by id, stderr. */
export interface Conversation {
  code: number;
  frames: Map<unknown, Record<string, unknown>>;
  stderr: string;
}

/**
 * Spawns `command args` with exactly `env`, writes `messages` as frames, waits until every
 * request among them is answered (at most `ms`), then closes stdin and waits for the exit.
 */
export async function converse(
  command: string,
  args: string[],
  env: Record<string, string>,
  messages: Record<string, unknown>[],
  ms = 60000,
): Promise<Conversation> {
  const child = spawnPiped([command, ...args], env, "piped");
  const stderr = new Response(child.stderr).text();
  const timer = setTimeout(() => child.kill("SIGKILL"), ms);
  const writer = child.stdin.getWriter();
  await writer.write(
    new TextEncoder().encode(messages.map((m) => JSON.stringify(m) + "\n").join("")),
  );
  const wanted = messages.filter((m) => "id" in m && "method" in m).map((m) => m.id);
  if (wanted.length === 0) await writer.close();
  const frames = new Map<unknown, Record<string, unknown>>();
  let pending = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines.filter((l) => l !== "")) {
      const frame = JSON.parse(line);
      if ("id" in frame) frames.set(frame.id, frame);
    }
    if (wanted.every((id) => frames.has(id))) await writer.close().catch(() => {});
  }
  await writer.close().catch(() => {});
  const status = await child.status;
  clearTimeout(timer);
  return { code: status.code, frames, stderr: await stderr };
}
