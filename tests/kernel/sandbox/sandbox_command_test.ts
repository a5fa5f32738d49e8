/** The bubblewrap confinement built from grants, run for real (P-SBX-1, P-SBX-3, P-SBX-4). */
import assert from "node:assert/strict";
import { type Confinement, sandboxCommand } from "../../../src/kernel/sandbox/command.ts";
import { holdPlaceholders } from "../../../src/kernel/sandbox/placeholders.ts";
import { type SandboxGrants, sandboxView } from "../../../src/kernel/sandbox/view.ts";
import { HOST_SANDBOX, hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { groupMembers, processLive } from "../../_support/proc.ts";
import { withTcpListener } from "../../_support/tcp_listener.ts";
import { withTempDir } from "../../_support/temp_dir.ts";
import { waitUntil } from "../../_support/wait.ts";

/** The bubblewrap the tests run (they are ignored where there is none; `.ci/run` installs it on Linux). */
function bwrap(): string {
  return HOST_SANDBOX.bwrap!;
}

/** The prlimit the tests' sandboxes bound their processes with. */
function prlimit(): string {
  return HOST_SANDBOX.tier === "B" ? HOST_SANDBOX.prlimit : "prlimit";
}

/** The layout of one test: a project the agent may write, a secret beside it, a fake state dir. */
interface Layout {
  dir: string;
  home: string;
  proj: string;
  docs: string;
  secret: string;
  state: string;
}

/**
 * Runs `body` with a layout outside /tmp: inside the sandbox /tmp is a private writable tmpfs, so
 * a write below it would land there (harmless, but not the refusal these tests look for).
 */
async function withLayout(body: (l: Layout) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "shoal-sandbox-test-" });
  try {
    await body(await layout(dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function layout(dir: string): Promise<Layout> {
  const l = {
    dir,
    home: `${dir}/home`,
    proj: `${dir}/home/proj`,
    docs: `${dir}/docs`,
    secret: `${dir}/home/secret`,
    state: `${dir}/docs/state`,
  };
  for (const d of [l.proj, l.docs, l.state]) await Deno.mkdir(d, { recursive: true });
  await Deno.writeTextFile(l.secret, "s3cret\n");
  await Deno.writeTextFile(`${l.docs}/readme`, "docs\n");
  await Deno.writeTextFile(`${l.state}/tokens.json`, "{}\n");
  return l;
}

/** Runs `script` with bash inside the sandbox of `grants`, in `cwd`. */
async function confined(
  l: Layout,
  grants: SandboxGrants,
  script: string,
  cwd = l.proj,
): Promise<{ code: number; out: string; err: string }> {
  const c: Confinement = {
    principal: "agent:a",
    bwrap: bwrap(),
    prlimit: prlimit(),
    view: sandboxView(grants, l.home, [l.state]),
    cwd,
    scratch: null,
    net: null,
    portFloor: null,
    proxy: null,
    tmpfs: null,
  };
  const [cmd, ...args] = sandboxCommand(c, ["/bin/bash", "--noprofile", "--norc", "-c", script]);
  const release = holdPlaceholders(c.view.protection);
  const r = await new Deno.Command(cmd, {
    args,
    env: { PATH: "/usr/bin:/bin", HOME: l.home },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output().finally(release);
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: r.code, out: text(r.stdout), err: text(r.stderr) };
}

const AGENT: SandboxGrants = { read: ["~/proj/**"], write: ["~/proj/**"] };

hostTest("a write root is writable and nothing outside it is", NEEDS_TIER_B, async () => {
  await withLayout(async (l) => {
    const ok = await confined(l, AGENT, "echo hi > inside && cat inside");
    assert.equal(ok.code, 0, ok.err);
    assert.equal(ok.out, "hi\n");
    const escapes = [
      `python3 -c "open('${l.home}/py', 'w').write('x')"`,
      `eval "echo x > ${l.home}/ev"`,
      `printf 'echo x > ${l.docs}/script\\n' > s.sh && bash s.sh`,
      `ln -s ${l.home} link && echo x > link/via-link`,
      `echo x > ../dotdot`,
      `rm ${l.secret}`,
      `echo x > /usr/shoal-test-escape`,
    ];
    for (const script of escapes) {
      const r = await confined(l, AGENT, script);
      assert.notEqual(r.code, 0, `${script} must fail: ${r.out}`);
      assert.match(r.err, /Read-only file system|No such file or directory|Permission denied/);
    }
    for (const name of ["py", "ev", "via-link", "dotdot"]) {
      assert.equal(await Deno.stat(`${l.home}/${name}`).catch(() => null), null, name);
    }
    assert.equal(await Deno.stat(`${l.docs}/script`).catch(() => null), null);
    assert.equal(await Deno.readTextFile(l.secret), "s3cret\n");
    // the planted link really exists in the project, pointing outside: only the sandbox stopped it
    assert.equal(await Deno.readLink(`${l.proj}/link`), l.home);
  });
});

hostTest(
  "HOME and ungranted paths are unreadable; a read root is read-only",
  NEEDS_TIER_B,
  async () => {
    await withLayout(async (l) => {
      const grants = { ...AGENT, read: [...AGENT.read, `${l.docs}/**`] };
      const secret = await confined(l, grants, `cat ${l.secret}`);
      assert.notEqual(secret.code, 0);
      assert.match(secret.err, /No such file or directory/);
      const home = await confined(l, grants, `ls ${l.home}`);
      assert.equal(home.out, "proj\n", "only the granted project shows under HOME");
      const docs = await confined(l, grants, `cat ${l.docs}/readme && echo x > ${l.docs}/new`);
      assert.equal(docs.out, "docs\n");
      assert.match(docs.err, /Read-only file system/);
    });
  },
);

hostTest(
  "P-SBX-3: under a HOME no grant shows, ~/.cache and ~/.npm take a run's writes in tmpfs of its own (they were read-only: pip, npm and go failed making their caches), the host's stay untouched, and the rest of HOME stays read-only",
  NEEDS_TIER_B,
  async () => {
    await withLayout(async (l) => {
      await Deno.mkdir(`${l.home}/.cache/tool`, { recursive: true });
      await Deno.writeTextFile(`${l.home}/.cache/tool/host-cache`, "host\n");
      const r = await confined(
        l,
        AGENT,
        "mkdir -p ~/.cache/pip ~/.npm/_logs && echo x > ~/.cache/pip/c && echo y > ~/.npm/_logs/l " +
          "&& ls -A ~/.cache && cat ~/.cache/pip/c ~/.npm/_logs/l; echo x > ~/.profile-new",
      );
      assert.equal(r.out, "pip\nx\ny\n", r.err);
      assert.match(r.err, /Read-only file system/);
      assert.deepEqual([...Deno.readDirSync(`${l.home}/.cache`)].map((e) => e.name), ["tool"]);
      assert.equal(await Deno.stat(`${l.home}/.npm`).catch(() => null), null);
      assert.equal(await Deno.stat(`${l.home}/.profile-new`).catch(() => null), null);
      // a grant that shows HOME shows the host's cache instead
      const wide = { read: [`${l.home}/**`], write: [] };
      const shown = await confined(l, wide, "cat ~/.cache/tool/host-cache");
      assert.equal(shown.out, "host\n", shown.err);
    });
  },
);

hostTest(
  "the state directory is masked even under a grant of the whole file system",
  NEEDS_TIER_B,
  async () => {
    await withLayout(async (l) => {
      const wide = { read: ["/**", `${l.dir}/**`], write: [`${l.docs}/**`] };
      const r = await confined(l, wide, `ls -A ${l.state}; cat ${l.state}/tokens.json`);
      assert.equal(r.out, "", "the state dir shows empty");
      assert.match(r.err, /No such file or directory/);
      const secret = await confined(l, wide, `cat ${l.secret}`);
      assert.equal(secret.out, "s3cret\n", "a granted HOME is readable");
    });
  },
);

hostTest("/tmp is private; a granted root below it is bound into it", NEEDS_TIER_B, async () => {
  await withTempDir(async (dir) => {
    const l = await layout(dir);
    const r = await confined(l, AGENT, `ls -A /tmp; echo x > /tmp/scratch && cat /tmp/scratch`);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, `${dir.split("/")[2]}\nx\n`, "only the path to the granted root shows");
    assert.equal(await Deno.stat("/tmp/scratch").catch(() => null), null);
    const inside = await confined(l, AGENT, "echo y > kept");
    assert.equal(inside.code, 0, inside.err);
    assert.equal(await Deno.readTextFile(`${l.proj}/kept`), "y\n");
  });
});

hostTest(
  "a sandbox has a network of its own: the host's loopback cannot be reached",
  NEEDS_TIER_B,
  async () => {
    await withLayout(async (l) => {
      await withTcpListener(async (port) => {
        const connect =
          `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}), 5)"`;
        const cut = await confined(l, AGENT, connect);
        assert.notEqual(cut.code, 0);
        assert.match(cut.err, /Connection refused|unreachable/);
      });
    });
  },
);

hostTest("a signal to bwrap's process group stops every process inside", NEEDS_TIER_B, async () => {
  await withLayout(async (l) => {
    const c: Confinement = {
      principal: "agent:a",
      bwrap: bwrap(),
      prlimit: prlimit(),
      view: sandboxView(AGENT, l.home, []),
      cwd: l.proj,
      scratch: null,
      net: null,
      portFloor: null,
      proxy: null,
      tmpfs: null,
    };
    const [cmd, ...args] = sandboxCommand(c, ["/bin/bash", "-c", "sleep 300 & sleep 300 & wait"]);
    const release = holdPlaceholders(c.view.protection);
    const child = new Deno.Command(cmd, { args, stdout: "null", stderr: "null", detached: true })
      .spawn();
    child.status.finally(release);
    assert.ok(await waitUntil(() => groupMembers(child.pid).length >= 5, 10000)); // bwrap, its init, bash, 2 sleeps
    const members = groupMembers(child.pid);
    Deno.kill(-child.pid, "SIGTERM");
    const status = await child.status;
    assert.equal(status.signal, "SIGTERM");
    assert.ok(await waitUntil(() => members.every((pid) => !processLive(pid)), 10000));
  });
});
