// M-START-4 between two slices of a long run (M-PROG-1): the kernel the run's task lives in is
// killed while the facade is between its slices, and a restarted kernel numbers its tasks anew.
import assert from "node:assert/strict";
import { spawnFacade } from "../_support/facade.ts";
import { kernelPid, pidsMentioning } from "../_support/proc.ts";
import type { Rec } from "../_support/rec.ts";
import { type Sandbox, sandbox } from "../_support/sandbox.ts";
import { delay, waitUntil } from "../_support/wait.ts";
import { connectMcp, type Mcp, type ToolReply } from "./_mcp.ts";

/** Requests whose answers fill the facade's stdout pipe while nobody reads it. */
const FILLERS = 40;

Deno.test("M-START-4: a shoal_exec whose kernel is killed between two of its slices fails with -32603 kernel disconnected; it never answers the run a restarted kernel gave the same task:N (before: the next task.await reconnected, and the call answered another run's output as its own)", async () => {
  const marker = `sleep 41.${Deno.pid}`;
  await withAgent(marker, "2025-06-18", async ({ box, human, send, frames }) => {
    await send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "shoal_exec", arguments: { src: marker }, _meta: { progressToken: "p" } },
    });
    assert.ok(await waitUntil(() => pidsMentioning(marker).length > 0, 20000), "the run started");
    await stallAndKill(box, human, send);

    const answer = await frames.responseTo(2);
    assertDisconnected(answer);
  });
});

Deno.test("M-START-4/M-TASKS-1: an MCP task whose kernel is killed between two of its slices is failed and tasks/result answers -32603 kernel disconnected, never the run a restarted kernel gave the same task:N (before: the task completed with another run's output as its own)", async () => {
  const marker = `sleep 42.${Deno.pid}`;
  await withAgent(marker, "2025-11-25", async ({ box, human, send, frames }) => {
    await send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: {
        name: "shoal_exec",
        arguments: { src: marker },
        task: {},
        _meta: { progressToken: "p" },
      },
    });
    const created = await frames.responseTo(2);
    const taskId = ((created.result as Rec).task as Rec).taskId;
    await stallAndKill(box, human, send);

    await send({ jsonrpc: "2.0", id: 3, method: "tasks/result", params: { taskId } });
    assertDisconnected(await frames.responseTo(3));
    await send({ jsonrpc: "2.0", id: 4, method: "tasks/get", params: { taskId } });
    assert.equal(((await frames.responseTo(4)).result as Rec).status, "failed");
  });
});

/** What the agent's side of a test has: the box, the human's client, the agent's raw facade. */
interface Agent {
  box: Sandbox;
  human: Mcp;
  send: (m: Rec) => Promise<void>;
  frames: Frames;
}

/**
 * Runs `body` with a human's MCP client and an agent's raw facade initialized with `version` on
 * one kernel, then stops both, and every process of `marker`.
 */
async function withAgent(marker: string, version: string, body: (a: Agent) => Promise<void>) {
  const box = await sandbox();
  const human = await connectMcp(box);
  const agent = spawnFacade(box);
  const writer = agent.stdin.getWriter();
  const frames = new Frames(agent.stdout);
  const send = (m: Rec) => writer.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
  try {
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: version,
        capabilities: {},
        clientInfo: { name: "r", version: "0" },
      },
    });
    await body({ box, human, send, frames });
  } finally {
    await writer.close().catch(() => {});
    await frames.cancel();
    agent.kill("SIGKILL");
    await agent.status;
    await human.close();
    for (const pid of pidsMentioning(marker)) Deno.kill(pid, "SIGKILL");
    await box.cleanup();
  }
}

/**
 * Stalls the agent's facade between two slices of its run (nobody reads its stdout: once the pipe
 * is full it waits to write the run's first progress notification, between the first slice and
 * the next task.await), kills the kernel, and has the human run another task on the restarted one.
 */
async function stallAndKill(box: Sandbox, human: Mcp, send: (m: Rec) => Promise<void>) {
  for (let i = 0; i < FILLERS; i++) {
    await send({ jsonrpc: "2.0", id: 100 + i, method: "tools/list" });
  }
  await delay(2500); // past the first 1000 ms slice
  Deno.kill(kernelPid(box.socket()), "SIGKILL");
  const other = await otherRun(human);
  assert.equal(other.isError, false, JSON.stringify(other.structuredContent));
}

/** That `answer` is -32603 kernel disconnected, not another run's output. */
function assertDisconnected(answer: Rec): void {
  assert.equal(JSON.stringify(answer).includes("OTHER-RUN"), false, "another run's output");
  const error = answer.error as Rec | undefined;
  assert.equal(error?.code, -32603, JSON.stringify(answer).slice(0, 500));
  assert.match(String(error?.message), /kernel disconnected/);
}

/**
 * Another run of the same principal and session, the first task of the restarted kernel; a call
 * that meets the kill, or a kernel another facade started at the same time, is tried again.
 */
async function otherRun(human: Mcp): Promise<ToolReply> {
  for (let attempt = 1;; attempt++) {
    try {
      return await human.call("shoal_exec", { src: "sleep 1; echo OTHER-RUN" });
    } catch (e) {
      if (attempt === 5) throw e;
      await delay(200);
    }
  }
}

/** The frames of a facade's stdout, read only when asked for. */
class Frames {
  #reader: ReadableStreamDefaultReader<string>;
  #pending = "";

  constructor(stdout: ReadableStream<Uint8Array>) {
    this.#reader = stdout.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** Reads frames until the response with `id` (within 30 s). */
  async responseTo(id: number): Promise<Rec> {
    const timer = setTimeout(() => this.#reader.cancel(), 30000);
    try {
      while (true) {
        let nl: number;
        while ((nl = this.#pending.indexOf("\n")) !== -1) {
          const frame = JSON.parse(this.#pending.slice(0, nl)) as Rec;
          this.#pending = this.#pending.slice(nl + 1);
          if (frame.id === id && !("method" in frame)) return frame;
        }
        const { value, done } = await this.#reader.read();
        if (done) throw new Error("no response before stdout closed");
        this.#pending += value;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops reading. */
  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}
