/** Issue 34 item 4: bin/shoal-mcp and bin/shoal-kernel work when reached through symlinks (e.g. in ~/.local/bin). */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { VERSION } from "../../src/protocol/version.ts";
import { KERNEL_BIN, REPO, type Sandbox, sandbox } from "../_support/sandbox.ts";

/** Runs `command args` to completion with exactly `env`; its status and output. */
async function run(command: string, args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(command, { args, env, clearEnv: true, stdin: "null" })
    .output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/** `target` linked three ways under `dir`: absolute, relative, and a chain of two (relative then absolute). */
function links(dir: string, name: string, target: string): string[] {
  Deno.mkdirSync(`${dir}/a/b`, { recursive: true });
  Deno.symlinkSync(target, `${dir}/${name}`);
  const up = dir.split("/").filter((p) => p !== "").map(() => "..").join("/");
  Deno.symlinkSync(`${up}/../..${target}`, `${dir}/a/b/${name}-rel`);
  Deno.symlinkSync(`../${name}`, `${dir}/a/${name}-hop`);
  Deno.symlinkSync(`${dir}/a/${name}-hop`, `${dir}/a/b/${name}-chain`);
  return [`${dir}/${name}`, `${dir}/a/b/${name}-rel`, `${dir}/a/b/${name}-chain`];
}

async function withBox(fn: (box: Sandbox, dir: string) => Promise<void>): Promise<void> {
  const box = await sandbox();
  try {
    const dir = `${box.dir}/links`;
    Deno.mkdirSync(dir);
    await fn(box, dir);
  } finally {
    await box.cleanup();
  }
}

Deno.test("issue 34: --version through an absolute, a relative and a chained symlink of each launcher", async () => {
  await withBox(async (box, dir) => {
    const mcp = links(`${dir}/m`, "shoal-mcp", `${REPO}/bin/shoal-mcp`);
    const kernel = links(`${dir}/k`, "shoal-kernel", KERNEL_BIN);
    assert.equal(Deno.realPathSync(mcp[1]), `${REPO}/bin/shoal-mcp`, "the relative link resolves");
    for (const link of mcp) {
      const out = await run(link, ["--version"], box.env());
      assert.equal(out.code, 0, `${link}: ${out.stderr}`);
      assert.equal(out.stdout, `shoal-mcp ${VERSION}\n`);
    }
    for (const link of kernel) {
      const out = await run(link, ["--version"], box.env());
      assert.equal(out.code, 0, `${link}: ${out.stderr}`);
      assert.equal(out.stdout, `shoal-kernel ${VERSION}\n`);
    }
  });
});

Deno.test("issue 34: --print-config through a symlink names this checkout's launcher and bin/", async () => {
  await withBox(async (box, dir) => {
    for (const link of links(dir, "shoal-mcp", `${REPO}/bin/shoal-mcp`)) {
      const out = await run(link, ["--print-config", "cursor"], box.env());
      assert.equal(out.code, 0, out.stderr);
      const server = JSON.parse(out.stdout).mcpServers.shoal;
      assert.equal(server.command, `${REPO}/bin/shoal-mcp`);
      assert.equal(server.env.PATH.split(":")[0], `${REPO}/bin`);
    }
  });
});

Deno.test("issue 34: an MCP client starts the facade through a chained symlink, which autostarts the kernel through another, and runs one exec", async () => {
  await withBox(async (box, dir) => {
    const facade = links(`${dir}/m`, "shoal-mcp", `${REPO}/bin/shoal-mcp`)[2];
    const kernel = links(`${dir}/k`, "shoal-kernel", KERNEL_BIN)[2];
    // Twice: the second start takes bin/shoal-mcp's cached flags.
    for (const round of [1, 2]) {
      const client = new Client({ name: "shoal-symlink", version: "0" });
      const transport = new StdioClientTransport({
        command: facade,
        args: [],
        env: box.env({ SHOAL_KERNEL: kernel }),
        stderr: "pipe",
      });
      await client.connect(transport);
      try {
        const reply = await client.callTool({
          name: "shoal_exec",
          arguments: { src: `echo round ${round}` },
        }) as { isError: boolean; content: { text?: string }[] };
        assert.equal(reply.isError, false, JSON.stringify(reply));
        assert.equal(reply.content[0].text, `round ${round}`);
      } finally {
        await client.close();
      }
    }
  });
});
