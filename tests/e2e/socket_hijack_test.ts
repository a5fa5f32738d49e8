/**
 * G-SOCK-10 against a real second local user: that user plants a world-writable
 * `$TMPDIR/shoal-0/shoal` and listens on the session's socket path. The facade, the kernel CLI and
 * the kernel itself must refuse the path, and the impostor must never see a connection.
 */
import assert from "node:assert/strict";
import { RawFacade } from "../_support/facade.ts";
import { kernelUntilExit } from "../_support/kernel.ts";
import { sandbox } from "../_support/sandbox.ts";
import { waitUntil } from "../_support/wait.ts";

const USERADD = "/usr/sbin/useradd";
const PYTHON = "/usr/bin/python3";

/** Why this machine cannot run the test (it needs root, useradd, setpriv and a system python3). */
function skipReason(): string | null {
  if (Deno.uid() !== 0) return "needs root to create a second user";
  for (const tool of [USERADD, "/usr/sbin/userdel", "/usr/bin/setpriv", PYTHON]) {
    try {
      Deno.statSync(tool);
    } catch {
      return `needs ${tool}`;
    }
  }
  return null;
}

const SKIP = skipReason();
if (SKIP !== null) console.warn(`skipping the G-SOCK-10 hijack test: ${SKIP}`);

// The impostor: creates the directories 0777, listens on the socket path, prints "ready", then
// reports every connection and every byte it is sent.
const IMPOSTOR = `
import os, socket, sys
d = sys.argv[1] + "/shoal-0/shoal"
os.makedirs(d)
os.chmod(sys.argv[1] + "/shoal-0", 0o777)
os.chmod(d, 0o777)
s = socket.socket(socket.AF_UNIX)
s.bind(d + "/default.sock")
os.chmod(d + "/default.sock", 0o777)
s.listen(8)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    print("CONNECTED", flush=True)
    data = c.recv(65536)
    print("GOT", data, flush=True)
`;

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test({
  name:
    "G-SOCK-10 another user's shoal-0 with a listener on the session socket: facade, CLI and kernel refuse and send nothing",
  ignore: SKIP !== null,
  fn: async () => {
    const box = await sandbox();
    const user = `shoalhj${Math.floor(Math.random() * 1e6)}`;
    let impostor: Deno.ChildProcess | null = null;
    try {
      // A TMPDIR like /tmp (root-owned, sticky, world-writable) that the other user can reach.
      await Deno.chmod(box.dir, 0o755);
      const tmp = `${box.dir}/tmp`;
      await Deno.mkdir(tmp);
      await Deno.chmod(tmp, 0o1777);
      await run(USERADD, ["--no-create-home", "--shell", "/usr/sbin/nologin", user]);
      const uid = Number(await run("/usr/bin/id", ["-u", user]));
      const gid = Number(await run("/usr/bin/id", ["-g", user]));
      impostor = new Deno.Command("/usr/bin/setpriv", {
        args: [`--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", PYTHON, "-c", IMPOSTOR, tmp],
        stdin: "null",
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
      const seen: string[] = [];
      const reading = (async () => {
        for await (const chunk of impostor!.stdout.pipeThrough(new TextDecoderStream())) {
          seen.push(chunk);
        }
      })();
      assert.ok(await waitUntil(() => seen.join("").includes("ready"), 10000), "impostor ready");
      const socket = `${tmp}/shoal-0/shoal/default.sock`;
      const owner = new RegExp(`${tmp}/shoal-0 is owned by uid ${uid}`);
      const env = { TMPDIR: tmp, XDG_RUNTIME_DIR: "", SHOAL_TOKEN: "sekrit-token" };

      const facade = new RawFacade(box, [], env);
      try {
        const reply = await facade.request(1, "tools/call", { name: "shoal_pty_list" });
        const error = reply.error as { code: number; message: string };
        assert.equal(error.code, -32603);
        assert.match(error.message, /^kernel unavailable: untrusted socket path: /);
        assert.match(error.message, owner);
      } finally {
        facade.kill();
        await facade.exit().catch(() => {});
      }

      const cli = await kernelUntilExit(box, ["approvals"], env);
      assert.equal(cli.code, 1, cli.stderr);
      assert.match(cli.stderr, owner);

      const kernel = await kernelUntilExit(box, [], env);
      assert.equal(kernel.code, 1, kernel.stderr);
      assert.match(kernel.stderr, /owned by uid/);

      assert.ok((await Deno.lstat(socket)).isSocket, "the impostor's socket is untouched");
      assert.ok(!seen.join("").includes("CONNECTED"), seen.join(""));
      impostor.kill("SIGKILL");
      await impostor.status;
      await reading;
      impostor = null;
    } finally {
      if (impostor !== null) {
        impostor.kill("SIGKILL");
        await impostor.status;
      }
      await new Deno.Command("/usr/sbin/userdel", { args: [user] }).output();
      await box.cleanup();
    }
  },
});
