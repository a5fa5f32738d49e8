// What resources/list, resources/read and the facade's log can be made to hold through the real
// stack (SDK client → shoal-mcp → autostarted kernel): by the agent's own terminals and runs,
// by what another party publishes, and by the URIs a client sends.
import assert from "node:assert/strict";
import { byteLength } from "../_support/bytes.ts";
import { RawFacade } from "../_support/facade.ts";
import { startKernel } from "../_support/kernel.ts";
import { createToken, writePolicy } from "../_support/principals.ts";
import type { Rec } from "../_support/rec.ts";
import { waitUntil } from "../_support/wait.ts";
import { sandbox } from "../_support/sandbox.ts";
import { connectMcp, mcpTest } from "./_mcp.ts";

/** The 64 KiB bound on what one reply hands a client (M-OUT-7, V-RENDER-3). */
const REPLY_LIMIT = 65536;

mcpTest(
  "M-RES-1: resources/list stays within 64 KiB with 16 terminals of 300 KB command lines, 100 tasks and 100 plans whose commands are control characters; each description is cut with …",
  async (mcp) => {
    const filler = ["a", "b", "c"].map((c) => c.repeat(100000));
    const ptys: string[] = [];
    for (let i = 0; i < 16; i++) {
      const opened = await mcp.call("shoal_pty_open", { cmd: "sleep", args: ["60", ...filler] });
      assert.equal(opened.isError, false);
      // Its structuredContent is truncated (M-OUT-7): the link names the PTY.
      ptys.push(opened.content[1].name as string);
    }
    // Each control character is six bytes of JSON (\u0001); the kernel keeps 256 of them.
    const control = "\x01".repeat(300);
    for (let i = 0; i < 100; i++) {
      await mcp.ok("shoal_exec", { src: `: ${i} '${control}'`, background: true });
      await mcp.ok("shoal_plan", { src: `: ${i} '${control}'` });
    }
    // The background tasks run beside the calls (K-BASH-2): the last may still be going on when
    // the last plan is stored. Every list read is within the bound; the descriptions checked are
    // of ended tasks, so the last is read once every task has completed.
    const list = async () => {
      const { resources } = await mcp.client.listResources();
      const size = byteLength({ resources });
      assert.ok(size <= REPLY_LIMIT, `resources/list is ${size} bytes`);
      return resources;
    };
    const running = (r: { uri: string; description?: string }) =>
      r.uri.startsWith("shoal://task/") && !r.description?.startsWith("completed task: ");
    let resources = await list();
    const ended = await waitUntil(
      async () => !resources.some(running) || !(resources = await list()).some(running),
      60000,
    );
    assert.ok(ended, "every task completed");
    const described = (prefix: string) =>
      resources.filter((r) => r.uri.startsWith(prefix)).map((r) => r.description as string);
    const terminals = described("shoal://pty/");
    assert.equal(terminals.length, 16);
    for (const d of terminals) assert.match(d, /^terminal: sleep 60 aaa+…$/);
    const tasks = described("shoal://task/");
    assert.equal(tasks.length, 100);
    for (const d of tasks) {
      assert.match(d, /^completed task: : [0-9]+ '/);
      assert.ok(d.endsWith("\x01…"), d);
    }
    assert.equal(described("shoal://plan/").length, 100);
    for (const id of ptys) await mcp.ok("shoal_pty_close", { pty_id: id });
  },
);

Deno.test({
  name:
    "ignored, needs a SPEC decision on M-RES-5 (a read's structuredContent is R, unbounded; V-RENDER-4 wants every large result bounded): another client's 200 user.* events of 60 KB make resources/read of shoal://events/user.big?limit=200 a 12 MB reply, past the 10 MiB line the MCP SDK 1.32.2 client reads, which drops the agent's connection (journal and pty reads of 10-16 MiB do the same)",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    const kernel = await startKernel([], box);
    const publisher = await kernel.attach("default");
    try {
      const pad = "p".repeat(60000);
      for (let i = 0; i < 200; i++) {
        await publisher.request("events.publish", { channel: "user.big", payload: { i, pad } });
      }
      const mcp = await connectMcp(box);
      try {
        const read = await mcp.read("shoal://events/user.big?limit=200");
        const size = byteLength(read);
        assert.ok(size <= REPLY_LIMIT, `the read is ${size} bytes`);
      } finally {
        await mcp.close();
      }
    } finally {
      publisher.close();
      await kernel.cleanup();
    }
  },
});

Deno.test("M-SUB-5: the line logged when a subscription's connection closes is one line of bounded length, whatever its URI holds (newlines, a megabyte)", async () => {
  const box = await sandbox();
  const facade = new RawFacade(box, [], { SHOAL_NO_AUTOSTART: "1" });
  const kernel = await startKernel([], box);
  try {
    const forged = "shoal-mcp: kernel unavailable: forged by the URI";
    const uri = `shoal://events/user.log?a=\n${forged}\n&pad=${"p".repeat(1_000_000)}`;
    assert.deepEqual((await facade.request(1, "resources/subscribe", { uri })).result, {});
    assert.equal(await kernel.stop(), 0);
    // The facade learns of the close; a request after it tells it has.
    const gone = await waitUntil(async () => {
      const r = await facade.request(`read-${Date.now()}`, "resources/read", {
        uri: "shoal://jobs",
      });
      return (r.error as Rec | undefined)?.code === -32603;
    }, 10000);
    assert.ok(gone, "the facade saw the kernel go");
    const { code, stderr } = await facade.stop();
    assert.equal(code, 0);
    const lines = stderr.split("\n");
    assert.equal(lines.filter((l) => l.startsWith(forged)).length, 0, "no line is the URI's");
    const logged = lines.filter((l) => l.includes("subscription to "));
    assert.equal(logged.length, 1);
    assert.match(logged[0], /^shoal-mcp: subscription to .*shoal:\/\/events\/user\.log.* ended/);
    assert.ok(byteLength(logged[0]) <= 2048, `the line is ${byteLength(logged[0])} bytes`);
  } finally {
    facade.kill();
    await facade.exit().catch(() => {});
    await kernel.cleanup();
  }
});

mcpTest(
  "M-OUT-2/7: a kernel error echoing a 70 KB id (shoal_pty_read, shoal_cancel) answers text and structuredContent within 64 KiB, with no link to a URI that long",
  async (mcp) => {
    const cases: [string, Rec][] = [
      ["shoal_pty_read", { pty_id: `pty:${"9".repeat(70000)}` }],
      ["shoal_cancel", { task: `task:${"9".repeat(70000)}` }],
    ];
    for (const [tool, args] of cases) {
      // The SDK's 60 s default would cut short the failure this test shows (minutes of work).
      const r = await mcp.call(tool, args, { timeout: 600000 });
      assert.equal(r.isError, true, tool);
      const text = r.content[0].text as string;
      assert.ok(byteLength(text) <= REPLY_LIMIT, `${tool}: text is ${byteLength(text)} bytes`);
      assert.ok(text.startsWith('{\n  "code": -320'), `${tool}: the text is the error's JSON`);
      assert.ok(byteLength(r.structuredContent) <= REPLY_LIMIT, `${tool}: structuredContent`);
      assert.equal(r.structuredContent.code, tool === "shoal_cancel" ? -32021 : -32022);
      for (const item of r.content.slice(1)) {
        assert.ok(byteLength(item) <= 2048, `${tool}: a link of ${byteLength(item)} bytes`);
      }
    }
  },
);

mcpTest(
  "M-RES-5/V-RENDER-3: a read whose URI carries 70 KB of unused query keeps its text within 64 KiB, the marker naming ref",
  async (mcp) => {
    for (let i = 0; i < 5; i++) await mcp.ok("shoal_exec", { src: `# ${"j".repeat(30000)}` });
    const uri = `shoal://journal?limit=5&pad=${"p".repeat(70000)}`;
    const read = await mcp.read(uri);
    const text = read.contents[0].text as string;
    assert.equal(read.contents[0].uri, uri);
    assert.ok(byteLength(text) <= REPLY_LIMIT, `text is ${byteLength(text)} bytes`);
    assert.match(text, /…\([0-9]+ more lines, fetch via ref\)$/);
  },
);

Deno.test("M-RES-3/4, M-TOOL-2: a -32602 for a megabyte URI, query value or argument name quotes at most a few hundred bytes of it, and still names what is wrong", async () => {
  const box = await sandbox();
  const facade = new RawFacade(box, [], { SHOAL_NO_AUTOSTART: "1" });
  try {
    const big = "q".repeat(1_000_000);
    const read = (uri: string) => ["resources/read", { uri }] as const;
    const call = (name: string, args: Rec) => ["tools/call", { name, arguments: args }] as const;
    const cases: [readonly [string, Rec], RegExp][] = [
      [read(`http://${big}`), /^not a shoal:\/\/ uri: http:\/\/q+…$/],
      [read(`shoal://nope/${big}`), /^unknown resource: shoal:\/\/nope\/q+…$/],
      [read(`shoal://out/x${big}`), /^invalid transcript number in shoal:\/\/out\/xq+…$/],
      [read(`shoal://journal?limit=${big}`), /^invalid query parameter limit: .*"q+…"$/],
      [read(`shoal://out/1?slice=${big}`), /^invalid query parameter slice: .*"q+…"$/],
      [call("shoal_exec", { src: "true", elide: { [big]: 1 } }), /elide: unknown property "q+…"$/],
      [
        call("shoal_pty_open", { cmd: "sh", env: { [big]: 5 } }),
        /^[^:]+: env\.q+…: expected string$/,
      ],
    ];
    let id = 0;
    for (const [[method, params], message] of cases) {
      const reply = await facade.request(++id, method, params);
      const error = reply.error as Rec;
      assert.equal(error.code, -32602, method);
      const size = byteLength(reply);
      assert.ok(size <= 2048, `${String(error.message).slice(0, 60)}: the reply is ${size} bytes`);
      assert.match(String(error.message), message);
    }
  } finally {
    await facade.stop();
    await box.cleanup();
  }
});

Deno.test({
  name:
    "ignored, needs the same M-RES-5 decision: a run that exports 11 MB of command output (export BIG=$(head -c 11000000 …)) makes resources/read of shoal://session/env a reply past the MCP SDK 1.32.2 client's 10 MiB line, and the client drops the connection",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      const mcp = await connectMcp(box);
      try {
        const src = "export BIG=$(head -c 11000000 /dev/zero | tr '\\0' a); echo ${#BIG}";
        const run = await mcp.call("shoal_exec", { src }, { timeout: 120000 });
        assert.equal(run.content[0].text, "11000000");
        const read = await mcp.read("shoal://session/env");
        const size = byteLength(read);
        assert.ok(size <= REPLY_LIMIT, `the read is ${size} bytes`);
      } finally {
        await mcp.close();
      }
    } finally {
      await box.cleanup();
    }
  },
});

Deno.test({
  name:
    "ignored, needs a SPEC decision on M-TOOL-2, M-SUB-1 and M-PROTO-2, which spell their messages with the client's input whole (unknown tool: <name>, resource is not subscribable: <uri>, -32601 with data.method): a 1 MB tool name, URI or method comes back as a 1 MB error (the method only in data.method since its message names a preview), and one as long as the 16 MiB frame allows as a frame over that limit (W-FRAME-2); the other -32602s quote 256 bytes",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    const facade = new RawFacade(box, [], { SHOAL_NO_AUTOSTART: "1" });
    try {
      const big = "q".repeat(1_000_000);
      const requests: [string, Rec][] = [
        ["tools/call", { name: big, arguments: {} }],
        ["resources/subscribe", { uri: `shoal://jobs?${big}` }],
        [big, {}],
      ];
      let id = 0;
      for (const [method, params] of requests) {
        const reply = await facade.request(++id, method, params);
        const size = byteLength(reply);
        assert.ok(size <= 2048, `${method.slice(0, 20)}: the reply is ${size} bytes`);
      }
    } finally {
      await facade.stop();
      await box.cleanup();
    }
  },
});

Deno.test({
  name:
    "ignored, needs a SPEC decision on a bound for M-SUB-3 notifications (K-EFF-7 bounds each effect and list, not an approval event): an agent's plan of 20 touch commands over 100 paths of control characters makes one approval event of ~590 KB, pushed whole to the human's subscription to shoal://events/approval",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    try {
      await writePolicy(`${box.dir}/config/shoal/leash.jsonc`, {
        "agent:big": {
          fs: { read: ["/**"], write: [`${box.dir}/work/**`] },
          proc_spawn: ["*"],
          session_write: true,
          auto_apply: "never",
        },
      });
      const env = { XDG_CONFIG_HOME: `${box.dir}/config` };
      const human = await connectMcp(box, env);
      const token = (await createToken(box, "agent:big", "big")).secret;
      const agent = await connectMcp(box, { ...env, SHOAL_TOKEN: token });
      try {
        await human.client.subscribeResource({ uri: "shoal://events/approval" });
        const seg = "\x01".repeat(250);
        const path = (c: number, i: number) =>
          `'${box.dir}/work/${seg}/${seg}/${seg}/${seg}${c}-${i}'`;
        const src = Array.from(
          { length: 20 },
          (_, c) => `touch ${Array.from({ length: 100 }, (_, i) => path(c, i)).join(" ")}`,
        ).join("\n");
        const asked = await agent.call("shoal_exec", { src });
        assert.equal(asked.structuredContent.code, -32011);
        assert.ok(await waitUntil(() => human.updates.length > 0, 10000));
        const size = byteLength(human.updates[0]);
        assert.ok(size <= REPLY_LIMIT, `the notification is ${size} bytes`);
      } finally {
        await agent.close();
        await human.close();
      }
    } finally {
      await box.cleanup();
    }
  },
});
