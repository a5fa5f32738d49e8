// A kernel that cannot watch its socket's directory keeps its socket all the same (G-SOCK-3/4,
// socket_keeper.ts): inotify instances are a per-user resource (128 by default) that editors and
// file watchers use up.
import assert from "node:assert/strict";
import { hostTest } from "../../_support/host.ts";
import { launchKernel, type TestKernel } from "../../_support/kernel.ts";
import {
  AS_OTHER_USER,
  giveToOtherUser,
  OTHER_UID,
  otherUserMissing,
} from "../../_support/other_user.ts";
import { KERNEL_BIN, sandbox } from "../../_support/sandbox.ts";
import { waitUntil } from "../../_support/wait.ts";

/** Takes every inotify instance the user may have, holds them for at most 120 s. */
const TAKE_ALL = "import ctypes, time\n" +
  "libc = ctypes.CDLL(None)\n" +
  "held = [fd for fd in (libc.inotify_init() for _ in range(100000)) if fd >= 0]\n" +
  "print(len(held), flush=True)\n" +
  "time.sleep(120)\n";

hostTest(
  "G-SOCK-3/4 a kernel whose user has no inotify instance left still serves its socket path again after it is removed, looking at it from time to time instead",
  await otherUserMissing(null),
  async () => {
    const box = await sandbox();
    const denoDir = await giveToOtherUser(box);
    const holder = new Deno.Command(AS_OTHER_USER[0], {
      // a system python3: root's own may be below a home the other user cannot enter
      args: [...AS_OTHER_USER.slice(1), "env", "PATH=/usr/bin:/bin", "python3", "-c", TAKE_ALL],
      cwd: "/",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = holder.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let k: TestKernel | undefined;
    try {
      const taken = Number((await reader.read()).value);
      assert.ok(taken > 0, `uid ${OTHER_UID} holds ${taken} inotify instances`);
      const socket = box.socket();
      k = await launchKernel(
        box,
        ["--socket", socket],
        socket,
        { DENO_DIR: denoDir },
        [...AS_OTHER_USER, KERNEL_BIN],
      );
      // Said just after ready: by the time a test reads that line, maybe not yet (it failed so
      // while a build of the kernel's bundle started beside it).
      const said = () => k!.stderr.some((l) => l.includes("cannot watch"));
      assert.ok(await waitUntil(said, 10000), k.stderr.join("\n"));
      await Deno.remove(socket);
      const served = async () => {
        try {
          (await Deno.connect({ transport: "unix", path: socket })).close();
          return true;
        } catch {
          return false;
        }
      };
      assert.ok(await waitUntil(served, 10000), `not served again:\n${k.stderr.join("\n")}`);
    } finally {
      holder.kill("SIGKILL");
      await reader.cancel();
      await holder.status;
      await (k ?? box).cleanup();
    }
  },
);
