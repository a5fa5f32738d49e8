/**
 * The sandbox probe and a host without bubblewrap (P-SBX-1, issue 15): tier D is reported
 * honestly and everything else works; on macOS bwrap is never looked for. Runs on every host.
 */
import assert from "node:assert/strict";
import { existsSync as exists } from "node:fs";
import { detectSandbox, NO_SANDBOX, probeSandbox } from "../../../src/kernel/sandbox/probe.ts";
import { compiledLauncher } from "../../../src/kernel/sandbox/compiled_launcher.ts";
import { exec } from "../../_support/exec.ts";
import { kernelUntilExit, startKernel } from "../../_support/kernel.ts";
import { createToken, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { waitUntil } from "../../_support/wait.ts";
import { childrenMentioning } from "../../_support/proc.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B, needsLinux } from "../../_support/host.ts";

/** Writes an executable `bwrap` in `dir` that leaves `ran` behind and exits with `status`. */
async function fakeBwrap(dir: string, status: number): Promise<string> {
  const path = `${dir}/bwrap`;
  await Deno.writeTextFile(path, `#!/bin/sh\n: > '${dir}/ran'\nexit ${status}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

Deno.test("P-SBX-1 no bwrap on PATH (missing, relative or not executable dirs): tier D", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/bwrap`, "#!/bin/sh\nexit 0\n"); // not executable
    for (const os of ["linux", "darwin"]) {
      assert.deepEqual(
        await detectSandbox(`${dir}/none:relative::${dir}`, "/bin/bash", os),
        NO_SANDBOX,
      );
      assert.deepEqual(await detectSandbox("", "/bin/bash", os), NO_SANDBOX);
    }
  });
});

/** Links util-linux's `nsenter`, `setpriv` and `prlimit` into `dir`, as a PATH with them needs. */
async function linkEnterTools(dir: string): Promise<void> {
  for (const tool of ["nsenter", "setpriv", "prlimit"]) {
    const found = ["/usr/bin", "/bin"].map((d) => `${d}/${tool}`).find(exists);
    assert.ok(found, `no ${tool}`);
    await Deno.symlink(found, `${dir}/${tool}`);
  }
}

hostTest(
  "P-SBX-1 tier B only when a run really enters a sandbox: a bwrap that fails or only exits 0 gives tier D",
  needsLinux("util-linux's nsenter and setpriv"),
  async () => {
    await withTempDir(async (dir) => {
      await linkEnterTools(dir);
      for (const status of [1, 0]) {
        await fakeBwrap(dir, status);
        assert.deepEqual(
          await detectSandbox(`${dir}/none:${dir}`, "/bin/bash", "linux"),
          NO_SANDBOX,
        );
        assert.ok(exists(`${dir}/ran`), "the probe ran it");
        await Deno.remove(`${dir}/ran`);
      }
    });
  },
);

hostTest(
  "P-SBX-1 the real bubblewrap, nsenter, setpriv and prlimit give tier B with their paths",
  NEEDS_TIER_B,
  async () => {
    const host = await detectSandbox(Deno.env.get("PATH") ?? "/usr/bin:/bin", "/bin/bash");
    assert.equal(host.tier, "B");
    if (host.tier !== "B") return;
    assert.deepEqual(
      [host.bwrap, host.nsenter, host.setpriv, host.prlimit].map((path) => path.split("/").pop()),
      ["bwrap", "nsenter", "setpriv", "prlimit"],
    );
  },
);

hostTest(
  "P-SBX-1/3 a sandbox whose launched runs would not carry the socket filter gives tier D: a bwrap that drops the filter's wrapper from its command",
  NEEDS_TIER_B,
  async () => {
    await withTempDir(async (dir) => {
      const bwrap = ["/usr/bin", "/bin"].map((d) => `${d}/bwrap`).find(exists);
      // the filter's wrapper is 7 words: perl -e SCRIPT PRCTL SECCOMP HEX --
      await Deno.writeTextFile(
        `${dir}/bwrap`,
        `#!/bin/bash
args=()
while (($#)); do
  if [[ $1 == /usr/bin/perl && $2 == -e && $3 == *seccomp* ]]; then shift 7; continue; fi
  args+=("$1"); shift
done
: > '${dir}/ran'
exec ${bwrap} "\${args[@]}"
`,
      );
      await Deno.chmod(`${dir}/bwrap`, 0o755);
      // nsenter, setpriv and prlimit found where they are (the last two run inside, where /usr is)
      const path = `${dir}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
      assert.deepEqual(await detectSandbox(path, "/bin/bash", "linux"), NO_SANDBOX);
      assert.ok(exists(`${dir}/ran`), "the probe's sandbox started through it");
    });
  },
);

Deno.test("P-SBX-1 on macOS a bwrap on PATH is neither run nor used: tier D (no Seatbelt profile yet)", async () => {
  await withTempDir(async (dir) => {
    await fakeBwrap(dir, 0);
    assert.deepEqual(await detectSandbox(dir, "/bin/bash", "darwin"), NO_SANDBOX);
    assert.equal(exists(`${dir}/ran`), false);
  });
});

/** A PATH directory holding only what `bin/shoal-kernel` needs to start: no bwrap. */
async function pathWithoutBwrap(dir: string): Promise<string> {
  const bin = `${dir}/bin`;
  await Deno.mkdir(bin);
  await Deno.symlink(Deno.execPath(), `${bin}/deno`);
  for (const tool of ["dirname", "head", "grep"]) {
    const found = ["/usr/bin", "/bin"].map((d) => `${d}/${tool}`).find(exists);
    assert.ok(found, `no ${tool}`);
    await Deno.symlink(found, `${bin}/${tool}`);
  }
  return bin;
}

Deno.test("P-SBX-1/2 a kernel that finds no bwrap: an agent's caps say tier D, not enforced; its execs run; hermetic is refused", async () => {
  const box = await sandbox();
  const principals = {
    "agent:a": { proc_spawn: ["*"], opaque: "allow", auto_apply: "in-grant", sandbox: true },
    "agent:h": { proc_spawn: ["*"], opaque: "allow", auto_apply: "in-grant", hermetic: true },
  };
  const a = await createToken(box, "agent:a");
  const h = await createToken(box, "agent:h");
  const k = await startKernel(["--policy", await writePolicy(box, principals)], box, {
    PATH: await pathWithoutBwrap(box.dir),
  });
  try {
    const conn = await k.connect();
    const agent = await conn.request("session.attach", { token: a.secret }) as Rec;
    const caps = agent.caps as Rec;
    assert.deepEqual([caps.tier, caps.available_tier, caps.enforced], ["D", "D", false]);
    assert.equal(agent.caps_enforced, false);
    const r = (await exec(conn, "echo $((6*7))", { position: "value" })).value as Rec;
    assert.equal((r.out as Rec).v, 42, "the value of its stdout");
    const hermetic = await k.attach("default", h.secret);
    const e = await rpcError(exec(hermetic, "echo hi"));
    assert.equal(e.code, -32010);
    assert.equal((e.data as Rec).reason, "hermetic_unavailable");
  } finally {
    await k.cleanup();
  }
});

hostTest(
  "P-SBX-1 a kernel that exits while its sandbox probe runs (another kernel owns the socket: exit 3; a bad policy: exit 1) leaves no shoal-probe- directory in TMPDIR: autostart races leave one loser per competing facade",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const tmp = `${box.dir}/tmpdir`;
    await Deno.mkdir(tmp);
    const k = await startKernel([], box, { TMPDIR: tmp });
    try {
      // its sandbox is killed and its directory removed while the kernel answers (issue 33)
      const cleaned = await waitUntil(() => [...Deno.readDirSync(tmp)].length === 0, 5000);
      assert.ok(cleaned, "the winner's probe cleaned up after it");
      for (let i = 0; i < 3; i++) {
        const lost = await kernelUntilExit(box, ["--socket", box.socket()], { TMPDIR: tmp });
        assert.equal(lost.code, 3, lost.stderr);
      }
      const missing = ["--socket", `${box.dir}/other.sock`, "--policy", `${box.dir}/missing.jsonc`];
      assert.equal((await kernelUntilExit(box, missing, { TMPDIR: tmp })).code, 1);
      assert.deepEqual([...Deno.readDirSync(tmp)].map((e) => e.name), []);
    } finally {
      await k.cleanup();
    }
  },
);

hostTest(
  "P-SBX-1 the probe's answer does not wait for its own sandbox to go (a starting kernel's first attach waits for the answer only); once `ended` settles its processes and directory are gone",
  NEEDS_TIER_B,
  async () => {
    await withTempDir(async (tmp) => {
      const before = Deno.env.get("TMPDIR");
      Deno.env.set("TMPDIR", tmp); // where the probe makes its directory
      let probe;
      try {
        probe = probeSandbox(Deno.env.get("PATH") ?? "/usr/bin:/bin", "/bin/bash");
      } finally {
        if (before === undefined) Deno.env.delete("TMPDIR");
        else Deno.env.set("TMPDIR", before);
      }
      assert.equal((await probe.host).tier, "B");
      await probe.ended;
      assert.deepEqual(childrenMentioning(Deno.pid, tmp), [], "no process of the probe's is left");
      assert.deepEqual([...Deno.readDirSync(tmp)].map((e) => e.name), [], "nor its directory");
    });
  },
);

hostTest(
  "P-SBX-1 the probe's `started` settles once its runs in its sandbox are under way, before its answer: a starting kernel loads its modules, which hold every turn of its event loop, only then (issue 33)",
  NEEDS_TIER_B,
  async () => {
    await withTempDir(async (dir) => {
      // an nsenter that waits for the test before it enters: the entered run cannot end early
      const nsenter = ["/usr/bin", "/bin"].map((d) => `${d}/nsenter`).find(exists);
      const fifo = `${dir}/go`;
      assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success);
      await Deno.writeTextFile(
        `${dir}/nsenter`,
        `#!/bin/sh\nread -r _ < '${fifo}'\nexec ${nsenter} "$@"\n`,
        { mode: 0o755 },
      );
      const probe = probeSandbox(`${dir}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`, "/bin/bash");
      const order: string[] = [];
      probe.host.then(() => order.push("host"));
      await probe.started;
      order.push("started");
      assert.equal(
        childrenMentioning(Deno.pid, `${dir}/nsenter`).length,
        1,
        "entered run under way",
      );
      await Deno.writeTextFile(fifo, "go\n");
      assert.equal((await probe.host).tier, "B");
      await probe.ended;
      assert.deepEqual(order, ["started", "host"]);
    });
  },
);

Deno.test("P-SBX-1 without a sandbox to start (no bwrap on PATH, or not Linux), the probe's `started` settles with its answer", async () => {
  await withTempDir(async (dir) => {
    for (const os of ["linux", "darwin"]) {
      const probe = probeSandbox(`${dir}/none`, "/bin/bash", os);
      await probe.started;
      assert.deepEqual(await probe.host, NO_SANDBOX);
      await probe.ended;
    }
  });
});

/**
 * A bwrap in `dir` that writes each command line it is given to a file of its own in `dir/calls`
 * (its words NUL-terminated), then runs the real one.
 */
async function recordingBwrap(dir: string): Promise<void> {
  const bwrap = ["/usr/bin", "/bin"].map((d) => `${d}/bwrap`).find(exists);
  await Deno.mkdir(`${dir}/calls`);
  await Deno.writeTextFile(
    `${dir}/bwrap`,
    `#!/bin/sh\nprintf '%s\\0' "$@" > '${dir}/calls/'$$\nexec ${bwrap} "$@"\n`,
    { mode: 0o755 },
  );
}

/** The programs run by the sandboxes {@link recordingBwrap} started (not `--help`): each one's last word. */
async function sandboxPrograms(dir: string): Promise<string[]> {
  const programs = [];
  for (const entry of Deno.readDirSync(`${dir}/calls`)) {
    const words = (await Deno.readTextFile(`${dir}/calls/${entry.name}`)).split("\0").slice(0, -1);
    if (words[0] !== "--help") programs.push(words.at(-1)!);
    await Deno.remove(`${dir}/calls/${entry.name}`);
  }
  return programs;
}

hostTest(
  "P-SBX-1 the probe's sandbox is started by the compiled launcher an earlier kernel kept, as the residents' are (issue 33: perl's took ~90 ms to its first spare); one that does not start leaves it to perl's: tier B both ways",
  HOST_SANDBOX.tier === "B" && HOST_SANDBOX.cc === null ? "needs a C compiler (cc)" : NEEDS_TIER_B,
  async () => {
    await withTempDir(async (dir) => {
      await recordingBwrap(dir);
      const path = `${dir}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
      const cc = (HOST_SANDBOX as { cc: string }).cc;
      const kept = await compiledLauncher(dir, cc, new AbortController().signal);
      assert.ok(kept !== null, "compiled");
      const probe = probeSandbox(path, "/bin/bash", "linux", kept);
      assert.equal((await probe.host).tier, "B");
      await probe.ended;
      assert.deepEqual(await sandboxPrograms(dir), ["/dev/shoal/launcher"]);
      // a kept file that does not run: perl's launcher serves, as it does for a resident
      const broken = `${dir}/launcher-broken`;
      await Deno.writeTextFile(broken, "#!/nonexistent\n", { mode: 0o700 });
      const fallback = probeSandbox(path, "/bin/bash", "linux", broken);
      assert.equal((await fallback.host).tier, "B");
      await fallback.ended;
      const programs = await sandboxPrograms(dir);
      assert.equal(programs.length, 2, "the kept one, then perl's");
      assert.ok(programs.includes("/dev/shoal/launcher"));
    });
  },
);
