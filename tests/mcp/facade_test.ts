/**
 * The facade spawned as clients run it (`bin/shoal-mcp`) with no kernel (SHOAL_NO_AUTOSTART=1), driven by the
 * SDK client and by raw frames.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { FRAME_LIMIT, NESTING_LIMIT } from "../../src/protocol/limits.ts";
import { SERVER_DESCRIPTION } from "../../src/mcp/server.ts";
import { rssBytes, spawnPiped } from "../_support/proc.ts";
import { type Sandbox, sandbox } from "../_support/sandbox.ts";
import { launcherArgs, RawFacade, sdkTransport } from "../_support/facade.ts";

const NO_KERNEL = { SHOAL_NO_AUTOSTART: "1" };

async function withRaw(
  fn: (facade: RawFacade, box: Sandbox) => Promise<void>,
  extraEnv: Record<string, string> = NO_KERNEL,
): Promise<void> {
  const box = await sandbox();
  const facade = new RawFacade(box, [], extraEnv);
  try {
    await fn(facade, box);
  } finally {
    facade.kill();
    await facade.exit().catch(() => {});
    await box.cleanup();
  }
}

async function withClient(fn: (client: Client) => Promise<void>): Promise<void> {
  const box = await sandbox();
  const client = new Client({ name: "shoal-test", version: "0" });
  const transport = sdkTransport(box, NO_KERNEL);
  try {
    await client.connect(transport);
    await fn(client);
  } finally {
    await client.close();
    await box.cleanup();
  }
}

/** The SPEC's tool table (M-TOOL-3/4): name, title, RO, destructive, idempotent, open, required. */
const TOOL_TABLE: [string, string, boolean, boolean, boolean, boolean, string[]][] = [
  ["shoal_exec", "Run bash", false, true, false, true, ["src"]],
  ["shoal_plan", "Plan bash", true, false, false, false, ["src"]],
  ["shoal_apply", "Apply plan", false, true, false, true, ["plan_ref"]],
  ["shoal_get", "Get value", true, false, true, false, ["ref"]],
  ["shoal_journal", "Query journal", true, false, true, false, []],
  ["shoal_cancel", "Cancel task", false, true, true, false, ["task"]],
  ["shoal_cap_request", "Request approval", false, false, true, false, ["plan_ref"]],
  ["shoal_pty_open", "Open terminal", false, true, false, true, ["cmd"]],
  ["shoal_pty_send", "Type into terminal", false, true, false, true, ["pty_id", "input"]],
  ["shoal_pty_read", "Read terminal", true, false, false, false, ["pty_id"]],
  ["shoal_pty_resize", "Resize terminal", false, false, true, false, ["pty_id", "cols", "rows"]],
  ["shoal_pty_close", "Close terminal", false, true, true, false, ["pty_id"]],
  ["shoal_pty_list", "List terminals", true, false, true, false, []],
];

const ELIDE = {
  type: "object",
  properties: {
    max_bytes: { type: "integer", minimum: 0 },
    max_rows: { type: "integer", minimum: 0 },
    max_items: { type: "integer", minimum: 0 },
  },
  additionalProperties: false,
};

Deno.test("M-TOOL-1/3/4: tools/list shows the 13 tools with closed schemas, titles and annotations", async () => {
  await withClient(async (client) => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), TOOL_TABLE.map((r) => r[0]));
    for (const [name, title, ro, destructive, idempotent, open, required] of TOOL_TABLE) {
      const tool = tools.find((t) => t.name === name)!;
      assert.equal(tool.title, title);
      assert.ok(typeof tool.description === "string" && tool.description.length > 0);
      assert.deepEqual(tool.annotations, {
        readOnlyHint: ro,
        destructiveHint: destructive,
        idempotentHint: idempotent,
        openWorldHint: open,
      });
      const schema = tool.inputSchema as Record<string, unknown>;
      assert.equal(schema.type, "object");
      assert.equal(schema.additionalProperties, false);
      assert.deepEqual(schema.required ?? [], required);
      assert.equal("outputSchema" in tool, false);
    }
    const exec = tools[0].inputSchema as { properties: Record<string, unknown> };
    assert.deepEqual(exec.properties, {
      src: { type: "string" },
      mode: { type: "string", enum: ["run", "plan"] },
      position: { type: "string", enum: ["stmt", "value"] },
      background: { type: "boolean" },
      timeout_ms: { type: "integer", minimum: 1, maximum: 2147483647 },
      elide: ELIDE,
    });
    const get = tools[3].inputSchema as { properties: Record<string, unknown> };
    assert.deepEqual(get.properties.slice, {
      type: "array",
      items: { type: "integer", minimum: 0 },
      minItems: 2,
      maxItems: 2,
    });
    assert.deepEqual((tools[12].inputSchema as { properties: unknown }).properties, {});
  });
});

Deno.test("M-RES-2: resources/templates/list returns exactly the nine templates in order", async () => {
  await withClient(async (client) => {
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => [t.uriTemplate, t.name]), [
      ["shoal://out/{n}{?path,slice,format}", "transcript-value"],
      ["shoal://val/{hash}", "content-value"],
      ["shoal://task/{id}", "task"],
      ["shoal://task/{id}/out{?path,slice,format}", "task-output"],
      ["shoal://plan/{ref}", "plan"],
      ["shoal://session/{view}", "session-view"],
      ["shoal://pty/{id}", "pty-screen"],
      ["shoal://journal{?since,until,head,principal,ok,effects,limit}", "journal"],
      ["shoal://events/{channel}{?since,limit}", "events"],
    ]);
    for (const t of resourceTemplates) {
      assert.equal(t.mimeType, "application/json");
      assert.ok(t.description);
    }
  });
});

Deno.test("M-START-3: without a kernel, kernel-backed requests fail -32603 kernel unavailable", async () => {
  await withClient(async (client) => {
    assert.deepEqual(client.getServerVersion(), {
      name: "shoal-mcp",
      version: "0.1.0",
      description: SERVER_DESCRIPTION,
    });
    await client.ping();
    const calls: [string, () => Promise<unknown>][] = [
      ["tools/call", () => client.callTool({ name: "shoal_exec", arguments: { src: "echo hi" } })],
      ["resources/read", () => client.readResource({ uri: "shoal://session/cwd" })],
      ["resources/list", () => client.listResources()],
      ["resources/subscribe", () => client.subscribeResource({ uri: "shoal://task/1" })],
    ];
    for (const [what, call] of calls) {
      await assert.rejects(call, (e) => {
        assert.ok(e instanceof McpError, what);
        assert.equal(e.code, -32603, what);
        assert.match(e.message, /kernel unavailable: /, what);
        return true;
      });
    }
  });
});

Deno.test("M-TOOL-2: argument errors and unknown tools are -32602 even without a kernel", async () => {
  await withClient(async (client) => {
    await assert.rejects(
      () => client.callTool({ name: "shoal_exec", arguments: { src: "x", bogus: 1 } }),
      (e) =>
        e instanceof McpError && e.code === -32602 &&
        /invalid arguments for shoal_exec: /.test(e.message),
    );
    await assert.rejects(
      () => client.callTool({ name: "shoal_nope", arguments: {} }),
      (e) =>
        e instanceof McpError && e.code === -32602 && /unknown tool: shoal_nope/.test(e.message),
    );
  });
});

Deno.test("M-PROTO-1, M-TASKS-1, M-META-1: initialize negotiates the version; 2025-11-25 (also for newer or unknown versions) adds tasks and a description, older ones get exactly SPEC's capabilities", async () => {
  await withRaw(async (facade) => {
    const cases: [string, string][] = [
      ["2025-06-18", "2025-06-18"],
      ["2025-11-25", "2025-11-25"],
      ["2026-07-28", "2025-11-25"],
      ["2024-11-05", "2024-11-05"],
      ["2025-03-26", "2025-03-26"],
      ["2024-10-07", "2024-10-07"],
      ["1999-01-01", "2025-11-25"],
    ];
    const base = {
      tools: { listChanged: false },
      resources: { subscribe: true, listChanged: false },
    };
    for (const [i, [requested, answered]] of cases.entries()) {
      const r = await facade.request(i + 1, "initialize", {
        protocolVersion: requested,
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
      });
      const result = r.result as { serverInfo: { description?: unknown } };
      assert.deepEqual(
        r.result,
        answered === "2025-11-25"
          ? {
            protocolVersion: answered,
            capabilities: {
              ...base,
              tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
            },
            serverInfo: {
              name: "shoal-mcp",
              version: "0.1.0",
              description: result.serverInfo.description,
            },
          }
          : {
            protocolVersion: answered,
            capabilities: base,
            serverInfo: { name: "shoal-mcp", version: "0.1.0" },
          },
      );
      if (answered === "2025-11-25") {
        const description = result.serverInfo.description;
        assert.ok(typeof description === "string" && /^[^\n]{10,200}$/.test(description));
      }
    }
  });
});

Deno.test("M-PROTO-2, W-FRAME-2: an unknown method of 9 MiB is answered -32601 with data.method in a frame within the 16 MiB limit: the message does not name the method a second time", async () => {
  await withRaw(async (facade) => {
    const method = "m".repeat(9 * 1024 * 1024);
    const r = await facade.request(1, method, {});
    const error = r.error as { code: number; message: string; data: { method: string } };
    assert.equal(error.code, -32601);
    assert.equal(error.data.method === method, true, "data.method names the method");
    const size = new TextEncoder().encode(JSON.stringify(r)).length;
    assert.ok(size <= FRAME_LIMIT, `a ${size}-byte frame exceeds the limit`);
  });
});

Deno.test("M-PROTO-2: requests before initialize are served; unknown methods are -32601 with data.method", async () => {
  await withRaw(async (facade) => {
    assert.deepEqual((await facade.request("p", "ping")).result, {});
    const tools = await facade.request(2, "tools/list");
    assert.equal((tools.result as { tools: unknown[] }).tools.length, 13);
    for (const method of ["prompts/list", "logging/setLevel", "completion/complete", "no/such"]) {
      const r = await facade.request(method, method, {});
      assert.deepEqual((r.error as { code: number; data: unknown }).code, -32601);
      assert.deepEqual((r.error as { data: unknown }).data, { method });
    }
    await facade.send({ jsonrpc: "2.0", method: "notifications/whatever", params: {} });
    await facade.send({ jsonrpc: "2.0", id: 99, result: {} });
    assert.deepEqual((await facade.request(3, "ping")).result, {});
    assert.deepEqual(facade.queued, [], "ignored notifications and client responses got no answer");
  });
});

Deno.test("W-RPC-1/2, W-FRAME-6/7: envelope errors on stdin; ids are echoed exactly", async () => {
  await withRaw(async (facade) => {
    await facade.write("{oops\n");
    const parse = await facade.next();
    assert.equal(parse.id, null);
    assert.equal((parse.error as { code: number }).code, -32700);
    assert.equal(typeof (parse.error as { data: { detail: unknown } }).data.detail, "string");
    for (const bad of ["{}", "[1]", "1.5", "true", "9007199254740992"]) {
      await facade.write(`{"jsonrpc":"2.0","id":${bad},"method":"ping"}\n`);
      const r = await facade.next();
      assert.equal(r.id, null, bad);
      assert.equal((r.error as { code: number }).code, -32600, bad);
    }
    await facade.write('[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n');
    assert.equal(((await facade.next()).error as { code: number }).code, -32600);
    await facade.write('{"jsonrpc":"2.0","id":"x","method":"ping","params":"p"}\n');
    assert.equal(((await facade.response("x")).error as { code: number }).code, -32602);
    const max = await facade.request(9007199254740991, "ping");
    assert.deepEqual(max.result, {});
    const neg = await facade.request(-3, "ping");
    assert.deepEqual(neg.result, {});
    assert.deepEqual(facade.junk, []);
  });
});

Deno.test("M-IN-1: requests whose params nest up to NESTING_LIMIT levels are processed, 5,000 levels are -32600; each is answered under its own id", async () => {
  // Inside the frame's object and its params: NESTING_LIMIT levels in all.
  const depth = NESTING_LIMIT - 2;
  const arrays = "[".repeat(depth) + "]".repeat(depth);
  const objects = '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
  const deeper = "[".repeat(5000) + "]".repeat(5000);
  await withRaw(async (facade) => {
    const frame = (id: number, method: string, params: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}\n`;
    await facade.write(frame(9, "ping", `{"x":${arrays}}`));
    await facade.write(frame(10, "ping", `{"x":${objects}}`));
    await facade.write(frame(11, "tools/call", `{"name":${arrays}}`));
    await facade.write(frame(12, "tools/call", `{"name":"shoal_exec","arguments":${arrays}}`));
    await facade.write(frame(13, "resources/read", `{"uri":${objects}}`));
    await facade.write(frame(14, "no/such", `{"x":${arrays}}`));
    await facade.write(frame(15, "ping", `{"x":${deeper}}`));
    await facade.write(frame(16, "tools/call", `{"name":"shoal_exec","arguments":${deeper}}`));
    assert.deepEqual((await facade.response(9)).result, {});
    assert.deepEqual((await facade.response(10)).result, {});
    const code = async (id: number) => ((await facade.response(id)).error as { code: number }).code;
    for (const id of [11, 12, 13]) assert.equal(await code(id), -32602, `id ${id}`);
    assert.equal(await code(14), -32601);
    for (const id of [15, 16]) assert.equal(await code(id), -32600, `id ${id}`);
    assert.deepEqual(facade.queued, [], "no other frame (such as an id-null error) was written");
  });
});

Deno.test("W-FRAME-3/5: a 17 MiB stdin frame gets -32600 id null, the next frame is served, memory stays bounded", async () => {
  await withRaw(async (facade) => {
    assert.deepEqual((await facade.request(1, "ping")).result, {});
    const pid = facade.facadePid();
    assert.ok(pid !== null);
    const before = rssBytes(pid);
    const mib = new Uint8Array(1 << 20).fill(0x20);
    for (let i = 0; i < 64; i++) await facade.write(mib); // 64 MiB without a newline
    await facade.write('\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    const oversize = await facade.next();
    assert.deepEqual(oversize, {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "frame exceeds 16 MiB" },
    });
    assert.deepEqual((await facade.response(2)).result, {});
    const growth = rssBytes(pid) - before;
    assert.ok(growth < 48 * 1024 * 1024, `RSS grew by ${growth} bytes`);
    const frame = new Uint8Array(17 * (1 << 20)).fill(0x20);
    frame[frame.length - 1] = 0x0a;
    await facade.write(frame);
    assert.equal(((await facade.next()).error as { code: number }).code, -32600);
    assert.deepEqual((await facade.request(3, "ping")).result, {});
  });
});

Deno.test("W-FRAME-8, M-START-5: many concurrent requests are answered as whole frames", async () => {
  await withRaw(async (facade) => {
    const lines: string[] = [];
    for (let i = 0; i < 200; i++) {
      const method = i % 2 === 0 ? "tools/list" : "resources/templates/list";
      lines.push(JSON.stringify({ jsonrpc: "2.0", id: i, method }));
    }
    await facade.write(lines.join("\n") + "\n");
    const seen = new Set<unknown>();
    for (let i = 0; i < 200; i++) seen.add((await facade.next()).id);
    assert.equal(seen.size, 200);
    assert.deepEqual(facade.junk, []);
  });
});

Deno.test("M-CLI-3: stdin EOF exits 0 after answering what was asked; stdout carries only frames", async () => {
  const box = await sandbox();
  const facade = new RawFacade(box, [], NO_KERNEL);
  try {
    await facade.send({ jsonrpc: "2.0", id: 1, method: "ping" });
    await facade.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "shoal_pty_list" },
    });
    await facade.closeStdin();
    const { code, stderr } = await facade.exit();
    assert.equal(code, 0);
    assert.deepEqual((await facade.response(1)).result, {});
    const call = await facade.response(2);
    assert.match((call.error as { message: string }).message, /^kernel unavailable: /);
    assert.match(stderr, /kernel unavailable/);
    assert.deepEqual(facade.junk, []);
  } finally {
    facade.kill();
    await box.cleanup();
  }
});

Deno.test("M-CLI-2: usage errors print the usage line and exit 2", async () => {
  const box = await sandbox();
  try {
    for (
      const args of [["--bogus"], ["--socket"], ["--session", "bad name"], ["extra"], [
        "--print-config",
        "emacs",
      ]]
    ) {
      const { command, args: full } = launcherArgs(args);
      const out = await new Deno.Command(command, {
        args: full,
        env: box.env(NO_KERNEL),
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 2, args.join(" "));
      assert.equal(out.stdout.length, 0);
      assert.match(
        new TextDecoder().decode(out.stderr),
        /usage: shoal-mcp \[--socket PATH\] \[--session NAME\] \[--token TOKEN\]/,
      );
    }
  } finally {
    await box.cleanup();
  }
});

Deno.test("M-CLI-3: when the client stops reading stdout the facade exits 0", async () => {
  const box = await sandbox();
  const { command, args } = launcherArgs();
  const child = spawnPiped([command, ...args], box.env(NO_KERNEL), "null");
  try {
    await child.stdout.cancel();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"method":"ping"}\n'));
    const status = await child.status;
    assert.equal(status.code, 0);
    await writer.close().catch(() => {});
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already exited
    }
    await box.cleanup();
  }
});

Deno.test("M-RES-3/4: malformed resource URIs and query values are -32602 naming the problem, before any kernel call", async () => {
  await withRaw(async (facade) => {
    const cases: [string, RegExp][] = [
      ["file:///etc/passwd", /shoal:\/\//],
      ["shoal://nope", /unknown resource/],
      ["shoal://session", /unknown resource/],
      ["shoal://session/nope", /unknown resource/],
      ["shoal://out/1/x", /unknown resource/],
      ["shoal://task/1/err", /unknown resource/],
      ["shoal://jobs/1", /unknown resource/],
      ["shoal://out/0", /transcript number/],
      ["shoal://out/01", /transcript number/],
      ["shoal://out/abc", /transcript number/],
      ["shoal://out/1?slice=1..", /slice/],
      ["shoal://out/1?format=yaml", /format/],
      ["shoal://out/1?offset=-1", /offset/],
      ["shoal://out/1?elide=%5B1%5D", /elide/],
      // Nested past what a value may hold (VALUE_NESTING_LIMIT): refused, not passed on to the
      // kernel (at 5,000 levels the facade's stack ran out: -32603).
      [`shoal://out/1?elide=${"%7B%22a%22:".repeat(600)}1${"%7D".repeat(600)}`, /elide/],
      ["shoal://journal?limit=0", /limit/],
      ["shoal://journal?ok=yes", /ok/],
      ["shoal://journal?since=1.5", /since/],
      ["shoal://events/user.x?since=-2", /since/],
      ["shoal://task/1/out?cursor=-1", /cursor/],
      ["shoal://task/1/out?max_bytes=0", /max_bytes/],
      ["shoal://task/1/out?stream=stdin", /stream/],
    ];
    for (const [i, [uri, detail]] of cases.entries()) {
      const r = await facade.request(i, "resources/read", { uri });
      const error = r.error as { code: number; message: string; data?: { parameter?: string } };
      assert.equal(error?.code, -32602, `${uri}: ${JSON.stringify(r)}`);
      assert.match(error.message, detail, uri);
      const parameter = /[?&]([a-z_]+)=[^&]*$/.exec(uri)?.[1];
      if (parameter !== undefined) assert.equal(error.data?.parameter, parameter, uri);
    }
  });
});

Deno.test("M-SUB-1: a URI that is not subscribable is -32602 resource is not subscribable: <uri>", async () => {
  await withRaw(async (facade) => {
    for (const uri of ["shoal://journal", "shoal://out/1", "shoal://task/1/err", "http://x/y"]) {
      const r = await facade.request(uri, "resources/subscribe", { uri });
      assert.deepEqual(r.error, { code: -32602, message: `resource is not subscribable: ${uri}` });
    }
  });
});

Deno.test("M-START-3: the reason the kernel is unavailable is logged to stderr once, however many requests fail", async () => {
  const box = await sandbox();
  const facade = new RawFacade(box, [], NO_KERNEL);
  try {
    for (let i = 0; i < 4; i++) {
      const r = await facade.request(i, "tools/call", { name: "shoal_pty_list" });
      assert.match((r.error as { message: string }).message, /^kernel unavailable: /);
    }
    const { code, stderr } = await facade.stop();
    assert.equal(code, 0);
    assert.equal(stderr.split("\n").filter((l) => l.includes("kernel unavailable")).length, 1);
  } finally {
    facade.kill();
    await box.cleanup();
  }
});
