/**
 * Bash spawned by glibc's posix_spawn through FFI (issue 10): a session and group leader under
 * its own pid, exactly its environment and cwd, stdin /dev/null, nothing of the kernel's
 * inherited, its exit and signals as Deno reports them, output pipes read to EOF with BYOB reads.
 */
import assert from "node:assert/strict";
import type { BashChild } from "../../../src/kernel/bash/bash_child.ts";
import { outputPipes } from "../../../src/kernel/bash/pipe_holders.ts";
import { posixSpawn, posixSpawnAvailable } from "../../../src/kernel/bash/posix_spawn.ts";

const ignore = !posixSpawnAvailable();
const BASH = "/bin/bash";
const O_CLOEXEC = 0o2000000;

/** Reads `stream` to its end through a BYOB reader (as run.ts's pump does). */
async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = stream.getReader({ mode: "byob" });
  const parts: Uint8Array[] = [];
  let buffer = new Uint8Array(4096);
  while (true) {
    const { done, value } = await reader.read(buffer);
    if (done) break;
    parts.push(value.slice());
    buffer = new Uint8Array(value.buffer);
  }
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) [all.set(p, at), at += p.length];
  return all;
}

/** The child's stdout and stderr as text, and its status. */
async function finish(child: BashChild) {
  const [out, err, status] = await Promise.all([
    readAll(child.stdout),
    readAll(child.stderr),
    child.status,
  ]);
  const text = new TextDecoder();
  return { out: text.decode(out), err: text.decode(err), status };
}

function spawnBash(src: string, cwd = "/", env = new Map([["PATH", "/usr/bin:/bin"]])) {
  return posixSpawn({ argv: [BASH, "--noprofile", "--norc", "-c", src], cwd, env });
}

/** This process's open descriptors and what they point to. */
function ownFds(): Map<string, string> {
  const fds = new Map<string, string>();
  for (const e of Deno.readDirSync("/proc/self/fd")) {
    try {
      fds.set(e.name, Deno.readLinkSync(`/proc/self/fd/${e.name}`));
    } catch {
      // the directory listing's own descriptor, closed meanwhile
    }
  }
  return fds;
}

Deno.test({
  name: "K-BASH-1 the spawned bash leads a new session and process group under its own pid",
  ignore,
  fn: async () => {
    const child = spawnBash('read -r stat < /proc/$$/stat; echo "$stat"');
    const { out, status } = await finish(child);
    assert.equal(status.code, 0);
    const [, ppid, pgrp, session] = out.slice(out.lastIndexOf(")") + 2).split(" ");
    assert.equal(Number(ppid), Deno.pid);
    assert.equal(Number(pgrp), child.pid);
    assert.equal(Number(session), child.pid);
  },
});

Deno.test({
  name:
    "K-BASH-1 the program gets exactly the given environment, the given cwd and /dev/null as stdin",
  ignore,
  fn: async () => {
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "shoal-posix-spawn-" }));
    try {
      const env = new Map([["A", "1"], ["MULTI", "x=y\nz"], ["EMPTY", ""], ["PATH", "/nowhere"]]);
      const envDump = await finish(posixSpawn({ argv: ["/usr/bin/env", "-0"], cwd: dir, env }));
      const seen = envDump.out.split("\0").filter((e) => e !== "").map((e) => {
        const i = e.indexOf("=");
        return [e.slice(0, i), e.slice(i + 1)];
      });
      assert.deepEqual(new Map(seen as [string, string][]), env);
      const where = await finish(
        posixSpawn({ argv: ["/bin/pwd", "-P"], cwd: dir, env: new Map() }),
      );
      assert.equal(where.out, `${dir}\n`);
      const stdin = await finish(
        posixSpawn({ argv: ["/usr/bin/readlink", "/proc/self/fd/0"], cwd: dir, env: new Map() }),
      );
      assert.equal(stdin.out, "/dev/null\n");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "no descriptor of the kernel leaks into bash, and the kernel keeps none of a finished child's",
  ignore,
  fn: async () => {
    const before = ownFds();
    const file = await Deno.open("/proc/self/status"); // open in this process meanwhile
    const other = spawnBash("sleep 30"); // another child's pipe ends are open meanwhile
    const child = spawnBash("echo started; sleep 30; exit");
    const stdout = child.stdout.getReader({ mode: "byob" });
    try {
      // Bash has started (its dynamic loader, which opens libraries for a while, is done).
      const started = await stdout.read(new Uint8Array(16));
      assert.equal(new TextDecoder().decode(started.value), "started\n");
      const fds = [...Deno.readDirSync(`/proc/${child.pid}/fd`)].map((e) => Number(e.name));
      assert.deepEqual(fds.filter((fd) => fd <= 2).sort(), [0, 1, 2]);
      for (const fd of fds.filter((fd) => fd > 2)) {
        // Only what this process itself inherited and passes on to any child (not close-on-exec).
        const info = Deno.readTextFileSync(`/proc/self/fdinfo/${fd}`);
        const flags = parseInt(/^flags:\s*([0-7]+)$/m.exec(info)![1], 8);
        assert.equal(flags & O_CLOEXEC, 0, `fd ${fd} of this process reached bash`);
        assert.ok(before.has(String(fd)), `fd ${fd} was opened by this process`);
      }
    } finally {
      file.close();
      for (const c of [child, other]) Deno.kill(-c.pid, "SIGKILL");
      await Promise.all([child.status, stdout.cancel(), child.stderr.cancel(), finish(other)]);
    }
    assert.deepEqual(ownFds(), before);
  },
});

Deno.test({
  name:
    "exit statuses and signals read as Deno reports them; SIGPIPE, which Deno ignores, is default in bash",
  ignore,
  fn: async () => {
    assert.deepEqual({ ...(await finish(spawnBash("exit 0"))).status }, {
      success: true,
      code: 0,
      signal: null,
    });
    assert.deepEqual({ ...(await finish(spawnBash("exit 7"))).status }, {
      success: false,
      code: 7,
      signal: null,
    });
    assert.deepEqual({ ...(await finish(spawnBash("kill -TERM $$"))).status }, {
      success: false,
      code: 143,
      signal: "SIGTERM",
    });
    const sleeper = spawnBash("sleep 30");
    Deno.kill(-sleeper.pid, "SIGKILL");
    assert.deepEqual({ ...(await finish(sleeper)).status }, {
      success: false,
      code: 137,
      signal: "SIGKILL",
    });
    const pipe = await finish(spawnBash('yes | head -c1 >/dev/null; echo "${PIPESTATUS[0]}"'));
    assert.equal(pipe.out, "141\n"); // yes killed by SIGPIPE (128 + 13)
  },
});

Deno.test({
  name: "output is read to the end in order, large output too, on both pipes",
  ignore,
  fn: async () => {
    const { out, err, status } = await finish(
      spawnBash("echo one; echo two >&2; head -c 3000000 /dev/zero | tr '\\0' x; echo three >&2"),
    );
    assert.equal(status.code, 0);
    assert.equal(out.length, 3 + 1 + 3_000_000);
    assert.ok(out.startsWith("one\nxxx") && out.endsWith("x"));
    assert.equal(err, "two\nthree\n");
  },
});

Deno.test({
  name:
    "K-BASH-3 a background holder keeps the pipe open after bash's exit; its later output and EOF still arrive, and a cancel closes the read end",
  ignore,
  fn: async () => {
    const late = spawnBash("(sleep 0.3; echo late) & echo early");
    const status = await late.status;
    assert.equal(status.code, 0);
    const [out] = await Promise.all([readAll(late.stdout), readAll(late.stderr)]);
    assert.equal(new TextDecoder().decode(out), "early\nlate\n");

    const before = ownFds();
    const held = spawnBash("sleep 30 & echo x");
    try {
      await held.status;
      const reader = held.stdout.getReader({ mode: "byob" });
      const first = await reader.read(new Uint8Array(16));
      assert.equal(new TextDecoder().decode(first.value), "x\n");
      const pending = reader.read(new Uint8Array(16)); // waits: the holder keeps the pipe
      await reader.cancel();
      assert.equal((await pending).done, true);
      await held.stderr.cancel();
      // The read end is closed once its wait on a worker thread is over (bounded).
      for (let i = 0; i < 100 && ownFds().size > before.size; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.deepEqual(ownFds(), before);
    } finally {
      Deno.kill(-held.pid, "SIGKILL");
    }
  },
});

Deno.test({
  name: "a missing program or cwd is NotFound, and the kernel keeps no descriptor of the attempt",
  ignore,
  fn: () => {
    const before = ownFds();
    assert.throws(
      () => posixSpawn({ argv: [BASH], cwd: "/nonexistent-shoal-dir", env: new Map() }),
      Deno.errors.NotFound,
    );
    assert.throws(
      () => posixSpawn({ argv: ["/nonexistent-shoal-program"], cwd: "/", env: new Map() }),
      Deno.errors.NotFound,
    );
    assert.deepEqual(ownFds(), before);
  },
});

Deno.test({
  name: "many live children hold no worker thread each: an async file read completes while 40 run",
  ignore,
  fn: async () => {
    const children = Array.from({ length: 40 }, () => spawnBash("sleep 30; exit"));
    let ended = 0;
    for (const child of children) child.status.then(() => ended++);
    try {
      await new Promise((r) => setTimeout(r, 50)); // all waited for by now
      await Deno.readTextFile("/proc/self/status"); // a blocking operation on Deno's pool
      assert.equal(ended, 0, "the read waited for children to end");
    } finally {
      for (const child of children) Deno.kill(-child.pid, "SIGKILL");
      await Promise.all(children.map(finish));
    }
  },
});

Deno.test({
  name:
    "children exiting together are each reaped with their own status and read to their own output",
  ignore,
  fn: async () => {
    const children = Array.from({ length: 30 }, (_, i) => spawnBash(`echo ${i}; exit ${i}`));
    const ends = await Promise.all(children.map(finish));
    ends.forEach(({ out, status }, i) => {
      assert.equal(out, `${i}\n`);
      assert.equal(status.code, i);
    });
  },
});

Deno.test({
  name:
    "the spawned child carries its stdout and stderr pipes' identities, read from the kernel's ends",
  ignore,
  fn: async () => {
    const child = spawnBash("read -r _ </proc/self/fd/0; sleep 5");
    try {
      assert.ok(child.pipes);
      assert.equal(child.pipes.size, 2);
      for (const pipe of child.pipes) assert.match(pipe, /^pipe:\[[0-9]+\]$/);
      assert.deepEqual(child.pipes, outputPipes(child.pid)); // the child's own fds 1 and 2
    } finally {
      Deno.kill(-child.pid, "SIGKILL");
      await finish(child);
    }
  },
});
