/** M-PERM-1..3: what network the facade's permission flags leave open, probed for real. */
import assert from "node:assert/strict";
import { localFlags, releaseFlags } from "../../src/mcp/permissions.ts";
import { converse } from "../_support/converse.ts";
import { startKernel } from "../_support/kernel.ts";
import { REPO } from "../_support/sandbox.ts";

const PROBE = new URL("./_net_probe.ts", import.meta.url).pathname;

/** Runs the probe under `flags` against live loopback listeners; what each attempt met. */
async function probe(flags: string[]): Promise<Record<string, string>> {
  const v4 = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const v6 = Deno.listen({ hostname: "::1", port: 0 });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...flags, PROBE, String(v4.addr.port), String(v6.addr.port)],
      stdin: "null",
      stderr: "inherit",
    }).output();
    assert.equal(out.code, 0);
    return JSON.parse(new TextDecoder().decode(out.stdout));
  } finally {
    v4.close();
    v6.close();
  }
}

/** The probe's view with no permission flags at all, so a refusal means something. */
const UNRESTRICTED = ["--allow-net"];

Deno.test("M-PERM-3: under exactly the release flags TCP to 127.0.0.1, ::1 and :: and a resolver query are refused", async () => {
  assert.equal((await probe(UNRESTRICTED))["tcp 127.0.0.1"], "allowed", "the listeners are live");
  const seen = await probe(releaseFlags());
  for (const name of ["tcp 127.0.0.1", "tcp ::1", "tcp ::", "tcp localhost", "Deno.resolveDns"]) {
    assert.equal(seen[name], "refused", name);
  }
  // Not asserted: getaddrinfo (node:dns lookup) and global IPv6 stay open under --allow-net,
  // which Deno 2.9 needs for a Unix socket whose path is chosen at run time.
});

Deno.test("M-PERM-2: under the local flags every TCP connect and both kinds of DNS look-up are refused", async () => {
  const seen = await probe(localFlags("/tmp/x/default.sock", "/bin/true", "/tmp"));
  assert.deepEqual(seen, {
    "tcp 127.0.0.1": "refused",
    "tcp ::1": "refused",
    "tcp ::": "refused",
    "tcp localhost": "refused",
    "Deno.resolveDns": "refused",
    "node:dns lookup": "refused",
  });
});

Deno.test("M-PERM-3: the facade under exactly the release flags serves tool calls from a live kernel", async () => {
  const kernel = await startKernel();
  try {
    assert.ok(kernel.socket.startsWith("/tmp/"), "the sandbox lies under a release runtime root");
    const exec = { name: "shoal_exec", arguments: { src: "echo released" } };
    const { code, frames, stderr } = await converse(
      Deno.execPath(),
      ["run", ...releaseFlags(), `--config=${REPO}/deno.json`, `${REPO}/main.ts`],
      kernel.box.env({ SHOAL_NO_AUTOSTART: "1" }),
      [{ jsonrpc: "2.0", id: 1, method: "tools/call", params: exec }],
    );
    assert.equal(code, 0, stderr);
    const result = frames.get(1)?.result as { content?: { text?: string }[] } | undefined;
    assert.equal(result?.content?.[0]?.text, "released", JSON.stringify(frames.get(1)));
  } finally {
    await kernel.cleanup();
  }
});
