// A serving kernel whose socket path is removed under it (by hand, by a cleaner of temporary
// files) takes it back (G-SOCK-3/4, socket_keeper.ts).
import assert from "node:assert/strict";
import { kernelUntilExit, launchKernel } from "../../_support/kernel.ts";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import type { Rec } from "../../_support/rec.ts";
import { waitUntil } from "../../_support/wait.ts";

/** Whether a connection to `path` succeeds. */
async function connects(path: string): Promise<boolean> {
  try {
    (await Deno.connect({ transport: "unix", path })).close();
    return true;
  } catch {
    return false;
  }
}

/** The stdout of `src` run on `conn`, as its value's JSON. */
async function stdoutOf(conn: RpcConnection, src: string): Promise<string> {
  const result = await exec(conn, src, { position: "value" });
  return JSON.stringify((result.value as Rec).out);
}

/** A kernel serving `<box>/run/shoal/k.sock`, whose session holds `x=41`, and a connection kept open. */
async function kernelWithState() {
  const box = await sandbox();
  const socket = `${box.dir}/run/shoal/k.sock`;
  const k = await launchKernel(box, ["--socket", socket], socket);
  const kept = await k.attach();
  await exec(kept, "x=41");
  return { box, socket, k, kept };
}

for (
  const [what, remove] of [
    ["its socket file is removed", (socket: string) => Deno.remove(socket)],
    [
      "its socket directory is moved away with its socket and lock file",
      (socket: string) => {
        const dir = socket.slice(0, socket.lastIndexOf("/"));
        return Deno.rename(dir, `${dir}.gone`);
      },
    ],
    [
      "`rm -rf` of its socket directory's parent",
      async (socket: string) => {
        const run = socket.slice(0, socket.lastIndexOf("/shoal/"));
        // as a cleaner does; its rmdir may fail where the kernel made the socket again first
        await new Deno.Command("rm", { args: ["-rf", run] }).output();
      },
    ],
  ] as const
) {
  Deno.test(`G-SOCK-3/4: a kernel serves its socket path again after ${what} while it serves, and a next kernel exits 3; it held the lock and served nothing, so no client reached any kernel`, async () => {
    const { socket, k, kept } = await kernelWithState();
    try {
      await remove(socket);
      const locked = () => Deno.lstat(`${socket}.lock`).then((i) => i.isFile, () => false);
      assert.ok(
        await waitUntil(async () => await connects(socket) && await locked(), 10000),
        `the path is served again, its lock file made again; the kernel said:\n${
          k.stderr.join("\n")
        }`,
      );
      const again = await k.attach();
      assert.match(await stdoutOf(again, "echo x$x"), /x41/, "the same kernel, its session kept");
      assert.match(await stdoutOf(kept, "echo kept"), /kept/, "an open connection still works");
      const next = await kernelUntilExit(k.box, ["--socket", socket]);
      assert.equal(next.code, 3, next.stderr);
      assert.ok(k.stderr.some((l) => l.includes(`socket ${socket} was removed: serving it again`)));
    } finally {
      await k.cleanup();
    }
  });
}

Deno.test("G-SOCK-3 step 4: a kernel whose socket path was replaced by a file leaves the file, says so, and keeps serving its open connections", async () => {
  const { box, socket, k, kept } = await kernelWithState();
  try {
    const file = `${box.dir}/run/shoal/other`;
    await Deno.writeTextFile(file, "not a socket");
    await Deno.rename(file, socket);
    assert.ok(
      await waitUntil(() => k.stderr.some((l) => l.includes(`lost socket ${socket}`)), 10000),
      k.stderr.join("\n"),
    );
    assert.equal(await Deno.readTextFile(socket), "not a socket");
    assert.match(await stdoutOf(kept, "echo x$x"), /x41/);
  } finally {
    await k.cleanup();
  }
});

/** Swaps two paths in one step (renameat2 RENAME_EXCHANGE), so no watcher sees either missing. */
function exchange(a: string, b: string): void {
  const libc = Deno.dlopen("libc.so.6", {
    renameat2: { parameters: ["i32", "buffer", "i32", "buffer", "u32"], result: "i32" },
  });
  try {
    const c = (s: string) => new TextEncoder().encode(`${s}\0`);
    const AT_FDCWD = -100, RENAME_EXCHANGE = 2;
    assert.equal(libc.symbols.renameat2(AT_FDCWD, c(a), AT_FDCWD, c(b), RENAME_EXCHANGE), 0);
  } finally {
    libc.close();
  }
}

Deno.test({
  name:
    "G-SOCK-3/4: a kernel that cannot take its socket path back for a moment (its lock path a directory) tries again and serves it once the path is usable; it gave up at the first failure, as a cleaner's `rm -rf` racing its reclaim made it",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const { socket, k } = await kernelWithState();
    try {
      const dir = socket.slice(0, socket.lastIndexOf("/"));
      await Deno.mkdir(`${dir}.new/k.sock.lock`, { recursive: true });
      exchange(dir, `${dir}.new`);
      assert.ok(
        await waitUntil(() => k.stderr.some((l) => l.includes("trying again")), 10000),
        k.stderr.join("\n"),
      );
      await Deno.remove(`${socket}.lock`);
      assert.ok(await waitUntil(() => connects(socket), 10000), k.stderr.join("\n"));
      const again = await k.attach();
      assert.match(await stdoutOf(again, "echo x$x"), /x41/, "the same kernel, its session kept");
      assert.ok(!k.stderr.some((l) => l.includes("lost socket")), k.stderr.join("\n"));
    } finally {
      await k.cleanup();
    }
  },
});
