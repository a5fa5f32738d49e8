/** End to end: MCP client → shoal-mcp (started as clients run it, `bin/shoal-mcp`) → shoal-kernel → bash. */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { createToken } from "../_support/principals.ts";
import {
  commandLine,
  fdTarget,
  kernelConnections,
  kernelPid,
  outermost,
  processGroup,
  startEnvironment,
} from "../_support/proc.ts";
import {
  KERNEL_BIN,
  KERNEL_ENTRY,
  pidsMentioning,
  type Sandbox,
  sandbox,
} from "../_support/sandbox.ts";
import { delay, EVENT_WAIT_MS, waitUntil } from "../_support/wait.ts";
import { RawFacade, sdkTransport } from "../_support/facade.ts";

type Frame = Record<string, unknown>;

const INIT = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "e2e", version: "0" },
};

/** Starts `bin/shoal-kernel` on the sandbox's default socket and waits until it accepts. */
async function startKernel(box: Sandbox): Promise<Deno.ChildProcess> {
  const child = new Deno.Command(KERNEL_BIN, {
    args: ["--socket", box.socket()],
    env: box.env(),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const deadline = Date.now() + 20000;
  let up = false;
  while (!up && Date.now() < deadline) {
    try {
      (await Deno.connect({ transport: "unix", path: box.socket() })).close();
      up = true;
    } catch {
      await delay(20);
    }
  }
  assert.ok(up, "kernel accepts connections");
  return child;
}

/** An attached raw kernel connection (for publishing events). */
async function kernelConnection(box: Sandbox): Promise<RpcConnection> {
  const conn = await RpcConnection.connect(box.socket());
  await conn.request("session.attach", { session: "default", token: null, client: {} });
  return conn;
}

function toolCall(id: number, name: string, args: unknown, meta?: unknown): Frame {
  const params: Frame = { name, arguments: args };
  if (meta !== undefined) params._meta = meta;
  return { jsonrpc: "2.0", id, method: "tools/call", params };
}

function result(frame: Frame): Record<string, unknown> {
  assert.ok(frame.result, `expected a result, got ${JSON.stringify(frame.error)}`);
  return frame.result as Record<string, unknown>;
}

/**
 * Client connections the sandbox's kernel holds, counted on the kernel's side: the facade's own
 * socket fds also include socket pairs the runtime creates lazily for itself.
 */
function kernelClients(box: Sandbox): number {
  return kernelConnections(kernelPid(box.socket()), box.socket());
}

async function withRaw(
  fn: (facade: RawFacade, box: Sandbox) => Promise<void>,
  options: { env?: Record<string, string>; args?: string[]; kernel?: boolean } = {},
): Promise<void> {
  const box = await sandbox();
  let kernel: Deno.ChildProcess | null = null;
  let facade: RawFacade | null = null;
  try {
    if (options.kernel !== false) kernel = await startKernel(box);
    facade = new RawFacade(box, options.args ?? [], options.env ?? {});
    await fn(facade, box);
  } finally {
    facade?.kill();
    await facade?.exit().catch(() => {});
    if (kernel !== null) {
      try {
        kernel.kill("SIGTERM");
      } catch {
        // already gone
      }
      await kernel.status;
    }
    await box.cleanup();
  }
}

Deno.test("M-START-1/2: autostart with no kernel running; shoal_exec echo hi returns out, ref and link; socket 0600 in a 0700 dir", async () => {
  const box = await sandbox();
  const client = new Client({ name: "e2e", version: "0" });
  const transport = sdkTransport(box);
  try {
    await client.connect(transport);
    // The first request may race the startup autostart; it waits for the kernel too.
    assert.deepEqual(await client.subscribeResource({ uri: "shoal://events/user.first" }), {});
    const r = await client.callTool({ name: "shoal_exec", arguments: { src: "echo hi" } });
    assert.equal(r.isError, false);
    const sc = r.structuredContent as { ref: string; uri: string; value: Frame };
    assert.match(sc.ref, /^out:[0-9]+$/);
    assert.equal(sc.value.ok, true);
    assert.deepEqual(sc.value.out, { $: "str", v: "hi\n" });
    const content = r.content as Frame[];
    assert.deepEqual(content[0], { type: "text", text: "hi" });
    assert.deepEqual(content[1], {
      type: "resource_link",
      uri: `shoal://out/${sc.ref.slice(4)}`,
      name: sc.ref,
      mimeType: "application/json",
    });
    const socket = box.socket();
    assert.equal(Deno.statSync(socket).mode! & 0o777, 0o600);
    assert.equal(Deno.statSync(`${box.dir}/run/shoal`).mode! & 0o777, 0o700);
    // A child the kernel is forking shares its command line until it execs: count it once.
    const kernels = outermost(
      pidsMentioning(socket).filter((p) => KERNEL_ENTRY.test(commandLine(p) ?? "")),
    );
    assert.equal(kernels.length, 1, "exactly one kernel was autostarted");
    assert.notEqual(
      processGroup(kernels[0]),
      processGroup(transport.pid!),
      "the kernel has its own process group",
    );
    await client.close();
    await delay(300);
    assert.ok(
      pidsMentioning(socket).includes(kernels[0]),
      "the kernel outlives the facade",
    );
  } finally {
    await client.close();
    await box.cleanup();
  }
});

Deno.test("M-TOOL-5, M-OUT-1..4: value-position failure is a result, stmt-position failure is isError with a link", async () => {
  await withRaw(async (facade) => {
    await facade.request(0, "initialize", INIT);
    await facade.send(toolCall(1, "shoal_exec", { src: "false" }));
    const failed = result(await facade.response(1));
    assert.equal(failed.isError, false);
    assert.equal(((failed.structuredContent as Frame).value as Frame).ok, false);
    await facade.send(
      toolCall(2, "shoal_exec", { src: "echo oops >&2; exit 3", position: "stmt" }),
    );
    const raised = result(await facade.response(2));
    assert.equal(raised.isError, true);
    const sc = raised.structuredContent as { code: number; data: Frame };
    assert.equal(sc.code, -32002);
    assert.equal(sc.data.status, 3);
    const link = (raised.content as Frame[])[1];
    assert.equal(link.type, "resource_link");
    assert.equal(link.uri, sc.data.uri);
    assert.equal(link.name, sc.data.ref);
    await facade.send(toolCall(3, "shoal_journal", { limit: 5 }));
    const journal = result(await facade.response(3));
    assert.ok(Array.isArray((journal.structuredContent as Frame).items));
    await facade.send(toolCall(4, "shoal_exec", { src: "sleep 1", background: true }));
    const bg = (result(await facade.response(4)).structuredContent) as Frame;
    assert.match(String(bg.task), /^task:[0-9]+$/);
    assert.equal(bg.uri, `shoal://task/${String(bg.task).slice(5)}`);
  });
});

Deno.test("M-PROG-1/2: a long exec reports increasing progress, then the result, and nothing after it", async () => {
  await withRaw(async (facade) => {
    await facade.send(
      toolCall(7, "shoal_exec", { src: "sleep 2.3; echo done" }, { progressToken: "tok" }),
    );
    const response = await facade.response(7);
    const progress = facade.queued.filter((f) => (f as Frame).method === "notifications/progress");
    assert.ok(progress.length >= 1, "at least one progress notification");
    let last = 0;
    for (const p of progress as Frame[]) {
      const params = p.params as Frame;
      assert.equal(params.progressToken, "tok");
      assert.ok((params.progress as number) > last, "progress strictly increases");
      last = params.progress as number;
      assert.equal("total" in params, false);
      assert.match(String(params.message), /^task:[0-9]+ running, [0-9]+\.[0-9]s elapsed$/);
    }
    const sc = result(response).structuredContent as Frame;
    assert.deepEqual((sc.value as Frame).out, { $: "str", v: "done\n" });
    assert.ok((sc.elapsed_ms as number) >= 2000, "elapsed_ms covers the whole run");
    const before = facade.queued.length;
    await delay(1500);
    assert.equal(facade.queued.length, before, "nothing is sent after the response");
  });
});

Deno.test("M-PROG-1: a budget shorter than the run returns the timed_out task form", async () => {
  await withRaw(async (facade) => {
    await facade.send(toolCall(1, "shoal_exec", { src: "sleep 5", timeout_ms: 1500 }));
    const sc = result(await facade.response(1)).structuredContent as Frame;
    assert.equal(sc.timed_out, true);
    assert.match(String(sc.task), /^task:[0-9]+$/);
    assert.equal(sc.events, `task.${String(sc.task).slice(5)}`);
    await facade.send(toolCall(2, "shoal_cancel", { task: sc.task }));
    assert.equal((result(await facade.response(2)).structuredContent as Frame).task, sc.task);
  });
});

Deno.test("M-PROG-3: notifications/cancelled suppresses the response and cancels the task", async () => {
  await withRaw(async (facade) => {
    await facade.send(toolCall(0, "shoal_exec", { src: "sleep 30" }, { progressToken: 1 }));
    const progress = await facade.next((f) => f.method === "notifications/progress");
    const task = /^(task:[0-9]+) /.exec(String((progress.params as Frame).message))![1];
    await facade.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 0, reason: "test" },
    });
    let reads = 0;
    const read = async () =>
      (await facade.request(`read${reads++}`, "resources/read", {
        uri: `shoal://task/${task.slice(5)}`,
      })).result as Frame;
    let state = "";
    for (let i = 0; i < 100 && state !== "cancelled"; i++) {
      state = String(((await read()).structuredContent as Frame).state);
      if (state !== "cancelled") await delay(100);
    }
    assert.equal(state, "cancelled");
    await delay(1200);
    assert.equal(facade.queued.some((f) => (f as Frame).id === 0), false, "no response for id 0");
  });
});

Deno.test("M-SUB-2..4: subscribe delivers kernel events; unsubscribe closes the dedicated connection", async () => {
  await withRaw(async (facade, box) => {
    await facade.request(0, "initialize", INIT);
    assert.deepEqual((await facade.request(1, "ping")).result, {});
    await facade.request(2, "resources/read", { uri: "shoal://session/cwd" });
    const base = kernelClients(box);
    const uri = "shoal://events/user.e2e";
    assert.deepEqual((await facade.request(3, "resources/subscribe", { uri })).result, {});
    assert.deepEqual((await facade.request(4, "resources/subscribe", { uri })).result, {});
    assert.equal(
      kernelClients(box),
      base + 1,
      "one dedicated connection, even when subscribed twice",
    );
    const publisher = await kernelConnection(box);
    try {
      for (let i = 0; i < 3; i++) {
        await publisher.request("events.publish", { channel: "user.e2e", payload: { i } });
      }
      const seqs: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const n = await facade.next((f) => f.method === "notifications/resources/updated");
        const params = n.params as Frame;
        assert.equal(params.uri, uri);
        assert.deepEqual(params.payload, { i });
        seqs.push(params.seq);
      }
      assert.deepEqual(seqs, [0, 1, 2]);
      assert.deepEqual((await facade.request(5, "resources/unsubscribe", { uri })).result, {});
      assert.ok(
        // The publisher's connection is still open.
        await waitUntil(() => kernelClients(box) === base + 1, EVENT_WAIT_MS),
        "dedicated connection closed",
      );
      await publisher.request("events.publish", { channel: "user.e2e", payload: { i: 9 } });
      await delay(500);
      assert.equal(
        facade.queued.some((f) => (f as Frame).method === "notifications/resources/updated"),
        false,
      );
      assert.deepEqual((await facade.request(6, "resources/unsubscribe", { uri })).result, {});
      const bad = await facade.request(7, "resources/subscribe", { uri: "shoal://journal" });
      assert.equal((bad.error as Frame).code, -32602);
    } finally {
      publisher.close();
    }
  });
});

Deno.test("M-RES-1/4/5: resources list and read through the kernel", async () => {
  await withRaw(async (facade) => {
    await facade.send(toolCall(1, "shoal_exec", { src: "printf '[1,2,3]'" }));
    const ref = String((result(await facade.response(1)).structuredContent as Frame).ref);
    const n = ref.slice(4);
    const list = result(await facade.request(2, "resources/list")).resources as Frame[];
    assert.deepEqual(list.slice(0, 6).map((r) => [r.uri, r.name]), [
      ["shoal://journal", "journal"],
      ["shoal://jobs", "jobs"],
      ["shoal://session/cwd", "cwd"],
      ["shoal://session/env", "env"],
      ["shoal://session/reef", "reef"],
      ["shoal://pty", "pty"],
    ]);
    const cwd = result(await facade.request(3, "resources/read", { uri: "shoal://session/cwd" }));
    assert.equal(typeof (cwd.structuredContent as Frame).display, "string");
    const value = result(
      await facade.request(4, "resources/read", { uri: `shoal://out/${n}?path=out&slice=1..3` }),
    );
    const contents = value.contents as Frame[];
    assert.equal(contents[0].mimeType, "application/json");
    assert.equal((value.structuredContent as Frame).$, "list");
    const render = result(
      await facade.request(5, "resources/read", { uri: `shoal://out/${n}?format=render` }),
    );
    assert.equal((render.contents as Frame[])[0].mimeType, "text/plain");
    const missing = await facade.request(6, "resources/read", { uri: "shoal://out/999999" });
    const error = missing.error as { code: number; message: string; data: Frame };
    assert.equal(error.code, -32602);
    assert.match(error.message, /^kernel error: /);
    assert.equal(error.data.code, -32004);
    const badQuery = await facade.request(7, "resources/read", { uri: `shoal://out/${n}?slice=x` });
    assert.equal((badQuery.error as Frame).code, -32602);
  });
});

Deno.test("M-PROTO-1: clients older than 2025-06-18 get no resource_link", async () => {
  await withRaw(async (facade) => {
    await facade.request(0, "initialize", { ...INIT, protocolVersion: "2024-11-05" });
    await facade.send(toolCall(1, "shoal_exec", { src: "echo old" }));
    const content = result(await facade.response(1)).content as Frame[];
    assert.deepEqual(content.map((c) => c.type), ["text"]);
  });
});

Deno.test("M-START-3/4: a kernel that appears later is found; a dropped kernel fails in-flight calls and is reconnected", async () => {
  await withRaw(async (facade, box) => {
    const first = await facade.request(1, "tools/call", { name: "shoal_pty_list" });
    assert.match(String((first.error as Frame).message), /^kernel unavailable: /);
    const kernel = await startKernel(box);
    try {
      assert.equal(
        result(await facade.request(2, "tools/call", { name: "shoal_pty_list" })).isError,
        false,
      );
      await facade.send(toolCall(3, "shoal_exec", { src: "sleep 20" }));
      await delay(500);
      kernel.kill("SIGTERM");
      await kernel.status;
      const dropped = await facade.response(3);
      assert.deepEqual(dropped.error, { code: -32603, message: "kernel disconnected" });
    } finally {
      try {
        kernel.kill("SIGTERM");
      } catch {
        // already gone
      }
      await kernel.status;
    }
    const again = await startKernel(box);
    try {
      assert.equal(
        result(await facade.request(4, "tools/call", { name: "shoal_pty_list" })).isError,
        false,
      );
    } finally {
      again.kill("SIGTERM");
      await again.status;
    }
  }, { kernel: false, env: { SHOAL_NO_AUTOSTART: "1" } });
});

Deno.test("M-START-3: an unknown token is reported as authentication failed (-32030), and the log says what to do about it", async () => {
  await withRaw(async (facade) => {
    const r = await facade.request(1, "tools/call", { name: "shoal_pty_list" });
    assert.deepEqual(r.error, {
      code: -32603,
      message: "kernel unavailable: authentication failed (-32030)",
    });
    facade.kill();
    const { stderr } = await facade.exit();
    // the client's log: why a pasted configuration stopped working, and how to get a working one
    assert.match(stderr, /kernel unavailable: authentication failed \(-32030\)/);
    assert.match(stderr, /token .*(revoked|not known)/);
    assert.match(stderr, /--print-config/);
  }, { args: ["--token", "not-a-real-token"] });
});

Deno.test("M-SUB-5: a subscription whose connection drops is removed, logged, and can be made again", async () => {
  const box = await sandbox();
  const facade = new RawFacade(box, [], { SHOAL_NO_AUTOSTART: "1" });
  let kernel = await startKernel(box);
  try {
    const uri = "shoal://events/user.restart";
    assert.deepEqual((await facade.request(1, "resources/subscribe", { uri })).result, {});
    kernel.kill("SIGTERM");
    await kernel.status;
    kernel = await startKernel(box);
    // The old entry is gone, so this subscribes anew on the new kernel.
    assert.deepEqual((await facade.request(2, "resources/subscribe", { uri })).result, {});
    const publisher = await kernelConnection(box);
    try {
      await publisher.request("events.publish", { channel: "user.restart", payload: "again" });
      const n = await facade.next((f) => f.method === "notifications/resources/updated");
      assert.deepEqual(n.params, { uri, seq: 0, payload: "again" });
    } finally {
      publisher.close();
    }
    const { code, stderr } = await facade.stop();
    assert.equal(code, 0);
    assert.match(stderr, /subscription to shoal:\/\/events\/user\.restart ended/);
  } finally {
    facade.kill();
    await facade.exit().catch(() => {});
    try {
      kernel.kill("SIGTERM");
    } catch {
      // already gone
    }
    await kernel.status;
    await box.cleanup();
  }
});

Deno.test("M-SUB-2, E-2: at most 64 subscriptions per facade (-32040), and a freed slot can be reused", async () => {
  await withRaw(async (facade) => {
    const lines: string[] = [];
    for (let i = 0; i < 64; i++) {
      lines.push(JSON.stringify({
        jsonrpc: "2.0",
        id: i,
        method: "resources/subscribe",
        params: { uri: `shoal://events/user.q${i}` },
      }));
    }
    await facade.write(lines.join("\n") + "\n");
    for (let i = 0; i < 64; i++) assert.deepEqual((await facade.response(i)).result, {});
    const over = await facade.request(64, "resources/subscribe", {
      uri: "shoal://events/user.q64",
    });
    assert.deepEqual(over.error, {
      code: -32040,
      message: "quota exceeded: subscriptions",
      data: { quota: "subscriptions", limit: 64 },
    });
    await facade.request(65, "resources/unsubscribe", { uri: "shoal://events/user.q0" });
    const again = await facade.request(66, "resources/subscribe", {
      uri: "shoal://events/user.q64",
    });
    assert.deepEqual(again.result, {});
  });
});

/** Reads `shoal://jobs` through the facade until the job whose cmd is `cmd` is in `state`. */
async function jobInState(facade: RawFacade, cmd: string, state: string): Promise<Frame | null> {
  let reads = 0;
  const deadline = Date.now() + EVENT_WAIT_MS;
  while (Date.now() < deadline) {
    const jobs = result(
      await facade.request(`jobs${reads++}`, "resources/read", {
        uri: "shoal://jobs",
      }),
    ).structuredContent as Frame[];
    const job = jobs.find((j) => j.cmd === cmd);
    if (job?.state === state) return job;
    await delay(100);
  }
  return null;
}

Deno.test("M-PROG-3: a cancellation read in the same chunk as its request still cancels the task", async () => {
  await withRaw(async (facade) => {
    await facade.request(0, "initialize", INIT);
    // Connected first: a run cancelled while the kernel is still being started is never sent.
    const up = await facade.request(2, "tools/call", { name: "shoal_pty_list", arguments: {} });
    assert.equal((up.result as Frame).isError, false, JSON.stringify(up));
    const cancelled = {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 1, reason: "at once" },
    };
    await facade.write(
      JSON.stringify(toolCall(1, "shoal_exec", { src: "sleep 31" })) + "\n" +
        JSON.stringify(cancelled) + "\n",
    );
    assert.ok(await jobInState(facade, "sleep 31", "cancelled"), "the task was cancelled");
    assert.equal(facade.queued.some((f) => (f as Frame).id === 1), false, "no response for id 1");
  });
});

Deno.test("M-PROG-3: a request cancelled during its only slice (budget ≤ 1000 ms) cancels the task when that slice times out", async () => {
  await withRaw(async (facade, box) => {
    // Connected first, then the kernel stopped: its slice cannot time out before the cancel is
    // read, however slow this machine (a 1000 ms slice ran out first under load).
    const up = await facade.request(2, "tools/call", { name: "shoal_pty_list", arguments: {} });
    assert.equal((up.result as Frame).isError, false, JSON.stringify(up));
    const kernel = kernelPid(box.socket());
    Deno.kill(kernel, "SIGSTOP");
    try {
      await facade.send(toolCall(1, "shoal_exec", { src: "sleep 32", timeout_ms: 1000 }));
      // Requests are read in order and a ping is answered by the facade itself: once it is, the
      // exec is in flight, and after the next one the cancel has been read too.
      await facade.request(3, "ping");
      assert.equal(facade.queued.some((f) => (f as Frame).id === 1), false, "still in its slice");
      await facade.send({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 1 },
      });
      await facade.request(4, "ping");
    } finally {
      Deno.kill(kernel, "SIGCONT");
    }
    assert.ok(await jobInState(facade, "sleep 32", "cancelled"), "the task was cancelled");
    assert.equal(facade.queued.some((f) => (f as Frame).id === 1), false, "no response for id 1");
  });
});

Deno.test("M-CLI-3, M-PROG-3: a run still in flight when the facade closes at stdin EOF is not cancelled: only a client's cancellation cancels", async () => {
  await withRaw(async (facade, box) => {
    // Longer than the facade's drain at EOF (5 s), so the transport closes with it in flight.
    await facade.send(toolCall(1, "shoal_exec", { src: "sleep 7" }));
    assert.ok(await jobInState(facade, "sleep 7", "running"));
    await facade.closeStdin();
    assert.equal((await facade.exit()).code, 0);
    assert.equal(facade.queued.some((f) => (f as Frame).id === 1), false, "no response for id 1");
    const next = new RawFacade(box);
    try {
      assert.ok(await jobInState(next, "sleep 7", "completed"), "the task ran to its end");
    } finally {
      await next.stop();
    }
  });
});

Deno.test("M-PROG-2: every slice that ends with the task running is reported, the last one of a budget too, with the exact message", async () => {
  await withRaw(async (facade) => {
    await facade.send(
      toolCall(1, "shoal_exec", { src: "sleep 5", timeout_ms: 1500 }, { progressToken: "p1" }),
    );
    const sc = result(await facade.response(1)).structuredContent as Frame;
    assert.equal(sc.timed_out, true);
    const progress = facade.queued
      .filter((f) => (f as Frame).method === "notifications/progress")
      .map((f) => (f as Frame).params as Frame);
    assert.ok(progress.length >= 1);
    for (const p of progress) {
      const seconds = ((p.progress as number) / 1000).toFixed(1);
      assert.equal(p.message, `${sc.task} running, ${seconds}s elapsed`);
    }
    // Only the slice that used up the budget is reported at or after the 1500 ms mark.
    assert.ok((progress.at(-1)!.progress as number) >= 1500, "the last slice is reported");
    await facade.send(
      toolCall(2, "shoal_exec", { src: "sleep 5", timeout_ms: 300 }, { progressToken: "p2" }),
    );
    const short = result(await facade.response(2)).structuredContent as Frame;
    assert.equal(short.timed_out, true);
    const single = facade.queued.filter((f) =>
      ((f as Frame).params as Frame | undefined)?.progressToken === "p2"
    );
    assert.equal(single.length, 1, "a budget within one slice still reports that slice");
    for (const task of [sc.task, short.task]) {
      await facade.request(`cancel ${task}`, "tools/call", {
        name: "shoal_cancel",
        arguments: { task },
      });
    }
  });
});

Deno.test("M-SUB-2: a failed events.subscribe is -32603 subscription failed: …, nothing is registered and its connection is closed", async () => {
  await withRaw(async (facade, box) => {
    assert.deepEqual((await facade.request(1, "ping")).result, {});
    await facade.request(2, "resources/read", { uri: "shoal://jobs" });
    const base = kernelClients(box);
    const uri = "shoal://events/not%20a%20channel";
    for (const id of [3, 4]) {
      const r = await facade.request(id, "resources/subscribe", { uri });
      const error = r.error as { code: number; message: string };
      assert.equal(error.code, -32603);
      assert.match(error.message, /^subscription failed: /);
    }
    assert.ok(
      await waitUntil(() => kernelClients(box) === base, EVENT_WAIT_MS),
      "no connection is left open",
    );
    assert.deepEqual((await facade.request(5, "resources/unsubscribe", { uri })).result, {});
  });
});

Deno.test("M-START-1: the autostarted kernel gets `--socket <path>`, /dev/null stdin, the facade's environment and an empty SHOAL_TOKEN", async () => {
  const box = await sandbox();
  const { secret } = await createToken(box, "agent:env", "env");
  const facade = new RawFacade(box, [], { SHOAL_TOKEN: secret, SHOAL_E2E_MARK: "inherited" });
  try {
    const listed = result(await facade.request(1, "tools/call", { name: "shoal_pty_list" }));
    assert.equal(listed.isError, false, "the facade itself attached with its token");
    const pid = kernelPid(box.socket());
    assert.ok(commandLine(pid)!.endsWith(` --socket ${box.socket()}`), commandLine(pid)!);
    const environ = startEnvironment(pid);
    assert.ok(environ.includes("SHOAL_E2E_MARK=inherited"), "the environment is inherited");
    assert.deepEqual(environ.filter((e) => e.startsWith("SHOAL_TOKEN=")), ["SHOAL_TOKEN="]);
    assert.equal(fdTarget(pid, 0), "/dev/null");
  } finally {
    facade.kill();
    await facade.exit().catch(() => {});
    await box.cleanup();
  }
});

Deno.test("M-ONB-1: SHOAL_PROJECT starts the facade's session in it; the kernel it autostarts gets it empty, and Deno's update check off", async () => {
  const box = await sandbox();
  const project = `${box.dir}/project`;
  await Deno.mkdir(project);
  const facade = new RawFacade(box, [], { SHOAL_PROJECT: project });
  try {
    const ran = result(
      await facade.request(1, "tools/call", { name: "shoal_exec", arguments: { src: "pwd" } }),
    );
    assert.equal(ran.isError, false);
    const [first] = ran.content as { text: string }[];
    assert.equal(first.text, project, "the session starts in SHOAL_PROJECT");
    const environ = startEnvironment(kernelPid(box.socket()));
    assert.deepEqual(environ.filter((e) => e.startsWith("SHOAL_PROJECT=")), ["SHOAL_PROJECT="]);
    // No DNS query for dl.deno.land from the facade or the kernel (seen with strace without it).
    assert.ok(environ.includes("DENO_NO_UPDATE_CHECK=1"), environ.join(" "));
  } finally {
    facade.kill();
    await facade.exit().catch(() => {});
    await box.cleanup();
  }
});

Deno.test("M-START-1: three facades autostarting at once all end up on the one kernel that won the socket", async () => {
  const box = await sandbox();
  const facades = [0, 1, 2].map(() => new RawFacade(box));
  try {
    const replies = await Promise.all(
      facades.map((f) =>
        f.request(1, "tools/call", { name: "shoal_exec", arguments: { src: "echo up" } })
      ),
    );
    for (const r of replies) assert.equal(result(r).isError, false, JSON.stringify(r.error));
    // A losing kernel may still be starting up; it exits (status 3) once it meets the lock.
    const oneKernel = () => {
      try {
        return kernelPid(box.socket()) > 0;
      } catch {
        return false;
      }
    };
    const stablyOne = async () => oneKernel() && (await delay(300), oneKernel());
    assert.ok(await waitUntil(stablyOne, 15000), "exactly one kernel stays on the socket");
    const refs = replies.map((r) => (result(r).structuredContent as Frame).ref);
    assert.equal(new Set(refs).size, 3, `one session, three transcript refs: ${refs}`);
  } finally {
    for (const f of facades) {
      f.kill();
      await f.exit().catch(() => {});
    }
    await box.cleanup();
  }
});

Deno.test("M-RES-1: resources/list lists the 100 newest plans, ascending, as shoal://plan/<hex> named plan:<hex>", async () => {
  await withRaw(async (facade) => {
    const refs: string[] = [];
    for (let i = 0; i < 101; i++) {
      const r = await facade.request(i, "tools/call", {
        name: "shoal_plan",
        arguments: { src: `echo ${i}` },
      });
      refs.push(String((result(r).structuredContent as Frame).plan_ref));
    }
    const list = result(await facade.request("list", "resources/list")).resources as Frame[];
    const plans = list.filter((r) => String(r.uri).startsWith("shoal://plan/"));
    assert.deepEqual(
      plans.map((p) => [p.uri, p.name]),
      refs.slice(1).map((ref) => [`shoal://plan/${ref.slice(5)}`, ref]),
    );
    for (const p of plans) {
      assert.equal(p.mimeType, "application/json");
      assert.equal(typeof p.description, "string");
    }
    assert.equal(list.length, 6 + 100, "no task or terminal entries besides the roots");
  });
});
