// M-START-4 between two slices of a long run (M-PROG-1): the kernel the run's task lives in is
// killed while the facade is between its slices, and a restarted kernel numbers its tasks anew.
import assert from "node:assert/strict";
import { spawnFacade } from "../_support/facade.ts";
import { kernelPid, pidsMentioning } from "../_support/proc.ts";
import type { Rec } from "../_support/rec.ts";
import { sandbox } from "../_support/sandbox.ts";
import { delay, waitUntil } from "../_support/wait.ts";
import { connectMcp, type Mcp, type ToolReply } from "./_mcp.ts";

/** Requests whose answers fill the facade's stdout pipe while nobody reads it. */
const FILLERS = 40;

Deno.test("M-START-4: a shoal_exec whose kernel is killed between two of its slices fails with -32603 kernel disconnected; it never answers the run a restarted kernel gave the same task:N (before: the next task.await reconnected, and the call answered another run's output as its own)", async () => {
  const box = await sandbox();
  const marker = `sleep 41.${Deno.pid}`;
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
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "r", version: "0" },
      },
    });
    await send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "shoal_exec", arguments: { src: marker }, _meta: { progressToken: "p" } },
    });
    assert.ok(await waitUntil(() => pidsMentioning(marker).length > 0, 20000), "the run started");
    // Nobody reads the agent's stdout yet: once its pipe is full the facade waits to write the
    // run's first progress notification, between the first slice and the next task.await.
    for (let i = 0; i < FILLERS; i++) {
      await send({ jsonrpc: "2.0", id: 100 + i, method: "tools/list" });
    }
    await delay(2500); // past the first 1000 ms slice
    Deno.kill(kernelPid(box.socket()), "SIGKILL");
    const other = await otherRun(human);
    assert.equal(other.isError, false, JSON.stringify(other.structuredContent));

    const answer = await frames.responseTo(2);
    assert.equal(JSON.stringify(answer).includes("OTHER-RUN"), false, "another run's output");
    const error = answer.error as Rec | undefined;
    assert.equal(error?.code, -32603, JSON.stringify(answer).slice(0, 500));
    assert.match(String(error?.message), /kernel disconnected/);
  } finally {
    await writer.close().catch(() => {});
    await frames.cancel();
    agent.kill("SIGKILL");
    await agent.status;
    await human.close();
    for (const pid of pidsMentioning(marker)) Deno.kill(pid, "SIGKILL");
    await box.cleanup();
  }
});

Deno.test("M-START-4/M-TASKS-1: an MCP task whose kernel is killed between two of its slices is failed and tasks/result answers -32603 kernel disconnected, never the run a restarted kernel gave the same task:N (before: the task completed with another run's output as its own)", async () => {
  const box = await sandbox();
  const marker = `sleep 42.${Deno.pid}`;
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
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "r", version: "0" },
      },
    });
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
    // Nobody reads the agent's stdout now: once its pipe is full the task's watcher waits to
    // write its first progress notification, between the first slice and the next task.await.
    for (let i = 0; i < FILLERS; i++) {
      await send({ jsonrpc: "2.0", id: 100 + i, method: "tools/list" });
    }
    await delay(2500); // past the first 1000 ms slice
    Deno.kill(kernelPid(box.socket()), "SIGKILL");
    const other = await otherRun(human);
    assert.equal(other.isError, false, JSON.stringify(other.structuredContent));

    await send({ jsonrpc: "2.0", id: 3, method: "tasks/result", params: { taskId } });
    const answer = await frames.responseTo(3);
    assert.equal(JSON.stringify(answer).includes("OTHER-RUN"), false, "another run's output");
    const error = answer.error as Rec | undefined;
    assert.equal(error?.code, -32603, JSON.stringify(answer).slice(0, 500));
    assert.match(String(error?.message), /kernel disconnected/);
    await send({ jsonrpc: "2.0", id: 4, method: "tasks/get", params: { taskId } });
    assert.equal(((await frames.responseTo(4)).result as Rec).status, "failed");
  } finally {
    await writer.close().catch(() => {});
    await frames.cancel();
    agent.kill("SIGKILL");
    await agent.status;
    await human.close();
    for (const pid of pidsMentioning(marker)) Deno.kill(pid, "SIGKILL");
    await box.cleanup();
  }
});

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
