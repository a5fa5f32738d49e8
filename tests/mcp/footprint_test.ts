// Issue 33: what a facade holds besides its work. Started without arguments it never loads Deno's
// Node layer (the global setTimeout and node:util load it, and it stays resident), and V8 runs no
// worker threads in it (their stacks and malloc arenas stay resident too), whatever it serves.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { localFlags } from "../../src/mcp/permissions.ts";
import { sdkTransport } from "../_support/facade.ts";
import { KERNEL_BIN, REPO, sandbox } from "../_support/sandbox.ts";
import { pollUntil } from "../_support/wait.ts";
import type { Rec } from "../_support/rec.ts";

const NODE_MODULE = /^(node:|ext:deno_node\/)/;

/** A TCP port on 127.0.0.1 free a moment ago, for an inspector. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

/** The debugger URL of the inspector listening on `port`, once it listens. */
async function inspectorUrl(port: number): Promise<string> {
  const url = await pollUntil(async () => {
    try {
      const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
      return targets[0].webSocketDebuggerUrl as string;
    } catch {
      return null;
    }
  }, (url) => url !== null);
  return url!;
}

/** The Node modules (node:…, ext:deno_node/…) loaded so far in the process behind `url`. */
async function nodeModulesLoaded(url: string): Promise<string[]> {
  const ws = new WebSocket(url);
  const urls: string[] = [];
  await new Promise((resolve, reject) => {
    ws.onerror = reject;
    ws.onopen = () => ws.send(JSON.stringify({ id: 1, method: "Debugger.enable" }));
    ws.onmessage = (e) => {
      const message = JSON.parse(e.data);
      if (message.method === "Debugger.scriptParsed") urls.push(message.params.url);
      if (message.id === 1) resolve(null);
    };
  });
  ws.close();
  await new Promise((resolve) => ws.onclose = resolve);
  return urls.filter((u) => NODE_MODULE.test(u)).sort();
}

/** What any Deno program has loaded of the Node layer: one that only waits for stdin. */
async function bareProgramNodeModules(dir: string): Promise<string[]> {
  const program = `${dir}/wait.js`;
  await Deno.writeTextFile(program, "await Deno.stdin.read(new Uint8Array(1));\n");
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", `--inspect=127.0.0.1:${port}`, "--no-config", "--no-lock", program],
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    return await nodeModulesLoaded(await inspectorUrl(port));
  } finally {
    await child.stdin.close();
    await child.status;
  }
}

/** The V8 worker threads of process `pid` (Linux thread names). */
function v8WorkerThreads(pid: number): number {
  let n = 0;
  for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
    if (Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/comm`).startsWith("V8 ")) n++;
  }
  return n;
}

Deno.test("issue 33: a facade without arguments serves an exec and a subscription without loading the Node layer or starting V8 worker threads", async () => {
  const box = await sandbox();
  const client = new Client({ name: "node-layer-test", version: "0" });
  const port = freePort();
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [
      "run",
      ...localFlags(box.socket(), KERNEL_BIN, box.socketRoot),
      `--inspect=127.0.0.1:${port}`,
      "--no-config",
      "--no-lock",
      "--no-code-cache",
      `${REPO}/main.ts`,
    ],
    env: box.env({ SHOAL_KERNEL: KERNEL_BIN }),
    stderr: "ignore",
  });
  try {
    await client.connect(transport);
    const exec = await client.callTool({ name: "shoal_exec", arguments: { src: "echo hi" } });
    assert.notEqual(exec.isError, true, JSON.stringify(exec));
    await client.subscribeResource({ uri: "shoal://events/user.test" });
    await client.unsubscribeResource({ uri: "shoal://events/user.test" });
    const loaded = await nodeModulesLoaded(await inspectorUrl(port));
    const bare = await bareProgramNodeModules(box.dir);
    assert.deepEqual(loaded.filter((u) => !bare.includes(u)), []);
    if (Deno.build.os === "linux") assert.equal(v8WorkerThreads(transport.pid!), 0);
  } finally {
    await client.close().catch(() => {});
    await box.cleanup();
  }
});

Deno.test("issue 33: a facade started as clients start it holds no V8 code cache database open", {
  ignore: Deno.build.os !== "linux",
}, async () => {
  const box = await sandbox();
  const client = new Client({ name: "footprint-test", version: "0" });
  const transport = sdkTransport(box);
  try {
    await client.connect(transport);
    await client.callTool({ name: "shoal_exec", arguments: { src: "echo hi" } });
    const open = [...Deno.readDirSync(`/proc/${transport.pid}/fd`)].map((fd) => {
      try {
        return Deno.readLinkSync(`/proc/${transport.pid}/fd/${fd.name}`);
      } catch {
        return "";
      }
    });
    assert.ok(open.some((path) => path.endsWith(".sock") || path.startsWith("socket:")));
    assert.deepEqual(open.filter((path) => path.includes("code_cache")), []);
  } finally {
    await client.close().catch(() => {});
    await box.cleanup();
  }
});

/** The modules `entry` imports statically (all of them, transitively), as repository paths. */
async function staticGraph(entry: string): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--no-config", "--no-lock", entry],
    env: { NO_COLOR: "1" },
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout));
  const modules = new Map<string, { dependencies?: Rec[] }>(
    info.modules.map((m: { specifier: string }) => [m.specifier, m]),
  );
  const seen = new Set<string>();
  const walk = (specifier: string) => {
    if (seen.has(specifier)) return;
    seen.add(specifier);
    for (const dep of modules.get(specifier)?.dependencies ?? []) {
      const code = (dep.code as { specifier?: string } | undefined)?.specifier;
      if (!dep.isDynamic && code !== undefined) walk(code);
    }
  };
  walk(info.roots[0]);
  return [...seen].map((s) => s.replace(`file://${REPO}/`, ""));
}

Deno.test("issue 33: what a facade compiles before it can autostart its kernel is what finds, connects to or starts it: no MCP server module, no other command's", async () => {
  const before = await staticGraph(`${REPO}/main.ts`);
  assert.ok(before.includes("src/mcp/kernel_client.ts"), before.join(" "));
  const later = [
    "src/mcp/server.ts",
    "src/mcp/stdio_transport.ts",
    "src/mcp/tools.ts",
    "src/mcp/onboard.ts",
    "src/mcp/help.ts",
  ];
  assert.deepEqual(later.filter((path) => before.includes(path)), []);
});
