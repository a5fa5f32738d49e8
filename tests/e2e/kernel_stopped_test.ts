// A facade whose kernel does not answer for a while (stopped by SIGSTOP, as a debugger or a
// suspended machine leaves it) while an MCP task runs (M-TASKS-1).
import assert from "node:assert/strict";
import { launcherArgs, withRawFacade } from "../_support/facade.ts";
import { launchKernel } from "../_support/kernel.ts";
import { kernelConnections, kernelPid, memoryKiB, socketCount } from "../_support/proc.ts";
import type { Rec } from "../_support/rec.ts";
import { sandbox } from "../_support/sandbox.ts";
import { delay, pollUntil, waitUntil } from "../_support/wait.ts";

Deno.test("M-TASKS-1: tasks/cancel of a running task whose kernel is stopped answers the task cancelled after the kill grace, and the kernel cancels the run once it goes on; before, tasks/cancel waited for the kernel's task.cancel answer and did not answer at all while the kernel was stopped", async () => {
  await withRawFacade(async (facade, box) => {
    const src = "sleep 35 # stopped kernel";
    const created = await facade.request(2, "tools/call", {
      name: "shoal_exec",
      arguments: { src },
      task: {},
    });
    const taskId = ((created.result as Rec).task as Rec).taskId;
    const kernel = kernelPid(box.socket());
    Deno.kill(kernel, "SIGSTOP");
    try {
      await facade.send({ jsonrpc: "2.0", id: 3, method: "tasks/cancel", params: { taskId } });
      // The kill grace (2000 ms) and a slice (1000 ms) bound the wait, with room to spare.
      const cancel = await facade.response(3, 15000);
      assert.equal((cancel.result as Rec | undefined)?.status, "cancelled", JSON.stringify(cancel));
    } finally {
      Deno.kill(kernel, "SIGCONT");
    }
    const get = await facade.request(4, "tasks/get", { taskId });
    assert.equal((get.result as Rec).status, "cancelled", "a terminal status stays");
    // The cancel sent while the kernel was stopped reaches the run once it goes on.
    await pollUntil(
      async () => {
        const jobs = await facade.request(crypto.randomUUID(), "resources/read", {
          uri: "shoal://jobs",
        });
        return ((jobs.result as Rec).structuredContent as Rec[]).find((j) => j.cmd === src);
      },
      (job) => job?.state === "cancelled",
      15000,
    );
  });
});

Deno.test("M-SUB-4: resources/unsubscribe of a subscription still being made while the kernel does not answer (stopped) answers within its 1000 ms wait, and the connection made for it is closed once the kernel goes on; before, it waited for the subscription to be made, as long as the kernel was stopped", async () => {
  await withRawFacade(async (facade, box) => {
    const up = await facade.request(2, "tools/call", { name: "shoal_pty_list", arguments: {} });
    assert.equal((up.result as Rec).isError, false, JSON.stringify(up));
    const socket = box.socket();
    const kernel = kernelPid(socket);
    const uri = "shoal://events/user.stopped";
    const sockets = socketCount(facade.facadePid());
    Deno.kill(kernel, "SIGSTOP");
    try {
      await facade.send({ jsonrpc: "2.0", id: 3, method: "resources/subscribe", params: { uri } });
      // Its connection is made (the stopped kernel's backlog takes it); its attach waits.
      assert.ok(await waitUntil(() => socketCount(facade.facadePid()) > sockets, 10000));
      await facade.send({
        jsonrpc: "2.0",
        id: 4,
        method: "resources/unsubscribe",
        params: { uri },
      });
      const unsubscribed = await facade.response(4, 15000);
      assert.deepEqual(unsubscribed.result, {}, JSON.stringify(unsubscribed));
    } finally {
      Deno.kill(kernel, "SIGCONT");
    }
    // Only the main connection is left once the kernel goes on.
    assert.ok(await waitUntil(() => kernelConnections(kernel, socket) === 1, 15000));
  });
});

Deno.test("M-START-5, W-FRAME-3: requests for a kernel that does not read them (stopped) do not grow the facade by what it cannot send: it stops reading stdin once a frame's worth waits for the kernel, and serves everything once the kernel goes on (before: 60 calls of 4 MiB each grew it by ~620 MiB within 3 s, now ~120 MiB)", async () => {
  await withRawFacade(async (facade, box) => {
    const up = await facade.request(2, "tools/call", { name: "shoal_pty_list", arguments: {} });
    assert.equal((up.result as Rec).isError, false, JSON.stringify(up));
    const kernel = kernelPid(box.socket());
    const pid = facade.facadePid();
    const before = memoryKiB(pid);
    const count = 60;
    // Cheap for the kernel once it reads them (an unknown PTY), 4 MiB each on the way.
    const input = "x".repeat(4 * 1024 * 1024);
    Deno.kill(kernel, "SIGSTOP");
    let sent: Promise<void> = Promise.resolve();
    try {
      // Not awaited one by one: a facade that stops reading leaves the client's writes waiting.
      sent = (async () => {
        for (let i = 0; i < count; i++) {
          await facade.send({
            jsonrpc: "2.0",
            id: 100 + i,
            method: "tools/call",
            params: { name: "shoal_pty_send", arguments: { pty_id: "pty:999", input } },
          });
        }
      })();
      // What the facade reads of them while the kernel is stopped, it has read by then.
      await delay(3000);
      const grown = (memoryKiB(pid).rss - before.rss) / 1024;
      assert.ok(grown < 240, `the facade grew by ${grown.toFixed(0)} MiB`);
    } finally {
      Deno.kill(kernel, "SIGCONT");
    }
    await sent;
    for (let i = 0; i < count; i++) {
      const r = await facade.response(100 + i, 60000);
      const error = (r.result as Rec | undefined)?.structuredContent as Rec | undefined;
      assert.equal(error?.code, -32022, JSON.stringify(r).slice(0, 300));
    }
  });
});

Deno.test({
  name:
    "M-CLI-3 a client that exits while the facade's reading waits for a stopped kernel to take its requests does not keep the facade [ignored: needs the decision probe67's blocking-stdout test asks for (unread_stdout_test.ts): the facade stops reading stdin while more than 16 MiB waits for a kernel that does not read (M-START-5, without which 60 requests of 4 MiB grew it by ~620 MiB), so the EOF behind the frames still in its stdin is unseen until the kernel goes on; decide whether M-CLI-3's exit on stdin EOF must hold then (a read-ahead that only looks for EOF) or the rule is scoped to kernels that read]",
  ignore: true,
  fn: async () => {
    const box = await sandbox();
    const socket = box.socket();
    const kernel = await launchKernel(box, ["--socket", socket], socket);
    let facade: Deno.ChildProcess | null = null;
    let stopped = 0;
    try {
      const big = `${box.dir}/big`;
      const go = `${box.dir}/go`;
      const input = "x".repeat(4 * 1024 * 1024);
      const frame = JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "shoal_pty_send", arguments: { pty_id: "pty:999", input } },
      }) + "\n";
      await Deno.writeTextFile(big, frame.repeat(6));
      const first = `${box.dir}/first`;
      await Deno.writeTextFile(
        first,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "shoal_pty_list", arguments: {} },
        }) + "\n",
      );
      const { command, args } = launcherArgs();
      // The facade's stdin: a first call, then its requests once `go` exists, from a client
      // killed after 3 s (one that exits with frames still unread in the pipe).
      const client = 'cat "$1"; while [ ! -e "$2" ]; do sleep 0.1; done; timeout 3 cat "$3"';
      facade = new Deno.Command("sh", {
        args: [
          "-c",
          `{ ${client}; } | { shift 3; exec "$@"; }`,
          "sh",
          first,
          go,
          big,
          command,
          ...args,
        ],
        env: box.env({ SHOAL_SOCKET: socket }),
        clearEnv: true,
        stdout: "piped",
        stderr: "null",
      }).spawn();
      // Its answer to the first call: the facade is attached, the kernel serving it.
      const reader = facade.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let out = "";
      while (!out.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        out += value;
      }
      assert.match(out, /"id":1,"result"/, out);
      (async () => {
        while (!(await reader.read()).done);
      })().catch(() => {});
      stopped = kernelPid(socket);
      Deno.kill(stopped, "SIGSTOP");
      await Deno.writeTextFile(go, "");
      const exited = await Promise.race([
        facade.status.then(() => true),
        delay(30000).then(() => false),
      ]);
      assert.ok(exited, "the facade still ran 30 s after its client exited");
    } finally {
      if (stopped !== 0) Deno.kill(stopped, "SIGCONT");
      try {
        facade?.kill("SIGKILL");
      } catch {
        // it exited
      }
      await facade?.status;
      await kernel.stop();
      await box.cleanup();
    }
  },
});
