/**
 * G-SOCK-10 [FIX] "before every connect (facade …)": a facade that connected while the socket
 * path was trusted checks it again when it reconnects after a kernel restart, and for a
 * subscription's dedicated connection. Real kernel, real facade (`bin/shoal-mcp`).
 */
import assert from "node:assert/strict";
import { RawFacade } from "../_support/facade.ts";
import { startKernel } from "../_support/kernel.ts";
import { kernelConnections, kernelPid } from "../_support/proc.ts";
import { sandbox } from "../_support/sandbox.ts";

const INIT = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "e2e", version: "0" },
};

Deno.test("G-SOCK-10 a socket directory made other-writable after the facade connected is refused at the facade's reconnect and at a subscription's connect: the new kernel sees no connection", async () => {
  const box = await sandbox();
  const socket = box.socket();
  const dir = socket.replace(/\/[^/]+$/, "");
  let kernel = await startKernel([], box);
  const facade = new RawFacade(box);
  try {
    await facade.request(0, "initialize", INIT);
    const first = await facade.request(1, "tools/call", { name: "shoal_pty_list" });
    assert.ok(first.result, JSON.stringify(first.error));

    // The kernel restarts on a trusted path; then the directory becomes writable by everyone.
    assert.equal(await kernel.stop(), 0);
    kernel = await startKernel([], box);
    const pid = kernelPid(socket);
    await Deno.chmod(dir, 0o777);

    const again = await facade.request(2, "tools/call", { name: "shoal_pty_list" });
    const error = again.error as { code: number; message: string } | undefined;
    assert.equal(error?.code, -32603, JSON.stringify(again));
    assert.match(error!.message, /^kernel unavailable: untrusted socket path: /);
    assert.match(error!.message, new RegExp(dir));
    const sub = await facade.request(3, "resources/subscribe", { uri: "shoal://events/user.x" });
    assert.equal((sub.error as { code: number } | undefined)?.code, -32603, JSON.stringify(sub));
    assert.equal(kernelConnections(pid, socket), 0, "the facade connected to the new kernel");
  } finally {
    await Deno.chmod(dir, 0o700).catch(() => {});
    facade.kill();
    await facade.exit().catch(() => {});
    await kernel.cleanup();
  }
});
