/**
 * M-ONB-1, G-STATE-3: re-reading the policy file of a running kernel. Whatever takes the file's
 * place (a malformed edit, a directory, a symlink, bursts of edits), the kernel keeps the last good
 * policy, says why once per change, and never runs an agent's command under grants wider than the
 * file's.
 */
import assert from "node:assert/strict";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, RUNNER, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";

interface Agent {
  k: TestKernel;
  file: string;
  proj: string;
  agent: Awaited<ReturnType<TestKernel["attach"]>>;
}

/** A kernel whose unsandboxed agent:a may write `proj` (`wide`) or nothing (else). */
function entry(proj: string, wide: boolean): Rec {
  return {
    ...RUNNER,
    sandbox: false,
    fs: { read: [`${proj}/**`], write: wide ? [`${proj}/**`] : [] },
  };
}

async function startAgent(wide: boolean): Promise<Agent> {
  const box = await sandbox();
  const proj = `${box.dir}/proj`;
  await Deno.mkdir(proj);
  const file = await writePolicy(box, { "agent:a": entry(proj, wide) });
  const k = await startKernel(["--policy", file], box);
  const agent = await k.attach("default", (await createToken(box, "agent:a")).secret);
  return { k, file, proj, agent };
}

/** Whether the agent's write of `proj/name` ran (-32010 when refused; anything else fails). */
async function writes(a: Agent, name: string): Promise<boolean> {
  try {
    await a.agent.request("exec", { src: `echo x > ${a.proj}/${name}` });
  } catch (e) {
    assert.equal((e as { code?: number }).code, -32010, String(e));
    return false;
  }
  return true;
}

Deno.test("M-ONB-1: a malformed edit is reported once, however many requests follow (every policy line was printed twice)", async () => {
  const a = await startAgent(true);
  try {
    await Deno.writeTextFile(a.file, '{ "principal": { "agent:a": ');
    for (let i = 0; i < 3; i++) assert.equal(await writes(a, `f${i}`), true);
    const said = a.k.stderr.filter((l) => /malformed/.test(l));
    assert.equal(said.length, 1, a.k.stderr.join("\n"));
    await writePolicy(a.file, { "agent:a": entry(a.proj, false) });
    assert.equal(await writes(a, "narrowed"), false);
    const reloaded = a.k.stderr.filter((l) => /reloaded/.test(l));
    assert.equal(reloaded.length, 1, a.k.stderr.join("\n"));
  } finally {
    await a.k.cleanup();
  }
});

Deno.test("M-ONB-1: a directory in the policy file's place keeps the last good policy (narrow stays narrow) and is named once", async () => {
  const a = await startAgent(false);
  try {
    await Deno.remove(a.file);
    await Deno.mkdir(a.file);
    for (let i = 0; i < 2; i++) assert.equal(await writes(a, `d${i}`), false);
    const said = a.k.stderr.filter((l) => l.includes(a.file) && /regular file|directory/.test(l));
    assert.equal(said.length, 1, a.k.stderr.join("\n"));
  } finally {
    await a.k.cleanup();
  }
});

Deno.test("M-ONB-1: the policy file replaced by a symlink to a wider policy, then the link retargeted to a narrow one: each exec runs under the file the link names now", async () => {
  const a = await startAgent(false);
  try {
    const wide = await writePolicy(`${a.k.box.dir}/wide.jsonc`, { "agent:a": entry(a.proj, true) });
    const narrow = await writePolicy(`${a.k.box.dir}/narrow.jsonc`, {
      "agent:a": entry(a.proj, false),
    });
    await Deno.remove(a.file);
    await Deno.symlink(wide, a.file);
    assert.equal(await writes(a, "via-wide"), true);
    // retargeted by rename, as `ln -sfn` does: the link's own stamp changes, the targets' do not
    await Deno.symlink(narrow, `${a.file}.new`);
    await Deno.rename(`${a.file}.new`, a.file);
    assert.equal(await writes(a, "via-narrow"), false);
  } finally {
    await a.k.cleanup();
  }
});

Deno.test("M-ONB-1: a burst of edits alternating wide and narrow: every exec after the last (narrow) edit is refused", async () => {
  const a = await startAgent(false);
  try {
    for (let i = 0; i < 20; i++) {
      await writePolicy(a.file, { "agent:a": entry(a.proj, i % 2 === 0) });
      void a.agent.request("exec", { src: "true" }).catch(() => {});
    }
    await writePolicy(a.file, { "agent:a": entry(a.proj, false) });
    for (let i = 0; i < 3; i++) assert.equal(await writes(a, `b${i}`), false);
    const e = await rpcError(a.agent.request("exec", { src: `echo x > ${a.proj}/last` }));
    assert.equal(e.code, -32010);
  } finally {
    await a.k.cleanup();
  }
});

/**
 * A source whose analysis takes a while, writing nothing: `lines` commands (50,000 take ~2 s here,
 * past the analysis budget; 5,000 ~0.3 s, within it).
 */
function slowSource(lines = 50000): string {
  return Array.from({ length: lines }, (_, i) => `echo ${i} > /dev/null`).join("\n");
}

Deno.test("M-ONB-1: an agent's exec waiting for its turn behind a long analysis runs under the policy in force when its turn comes: narrowed meanwhile, it is refused (it ran under the grants of its dispatch)", async () => {
  const a = await startAgent(true);
  try {
    const human = await a.k.attach();
    const first = human.request("exec", { src: slowSource() });
    first.catch(() => {});
    await new Promise((r) => setTimeout(r, 20));
    const queued = a.agent.request("exec", { src: `echo x > ${a.proj}/queued` });
    queued.catch(() => {});
    await writePolicy(a.file, { "agent:a": entry(a.proj, false) });
    const e = await rpcError(queued);
    assert.equal(e.code, -32010, e.message);
    await first;
    assert.equal(await writes(a, "after"), false);
  } finally {
    await a.k.cleanup();
  }
});

Deno.test("M-ONB-1: a policy narrowed while an agent's own long source is analysed judges that source: it is refused (it was judged by the grants of its turn's start)", async () => {
  const a = await startAgent(true);
  try {
    // within the analysis budget: judged by its effects, not as opaque work
    const src = `${slowSource(5000)}\necho x > ${a.proj}/late`;
    const run = a.agent.request("exec", { src });
    run.catch(() => {});
    await new Promise((r) => setTimeout(r, 10));
    await writePolicy(a.file, { "agent:a": entry(a.proj, false) });
    const e = await rpcError(run);
    assert.equal(e.code, -32010, e.message);
  } finally {
    await a.k.cleanup();
  }
});

Deno.test({
  name:
    "P-EVAL-1/P-SBX-3 (SPEC must decide whether the static layer guards the kernel's own files): an unsandboxed agent whose fs.write covers the policy file rewrites it and widens its own grants; only sandboxed runs have the file masked",
  ignore: true,
  fn: async () => {
    const a = await startAgent(false);
    try {
      const box = a.k.box.dir;
      await writePolicy(a.file, {
        "agent:a": { ...RUNNER, sandbox: false, fs: { read: [`${box}/**`], write: [a.file] } },
      });
      const wide = JSON.stringify({
        principal: { "agent:a": { ...RUNNER, sandbox: false, fs: { write: ["/**"] } } },
      });
      const e = await rpcError(a.agent.request("exec", { src: `echo '${wide}' > ${a.file}` }));
      assert.equal(e.code, -32010);
    } finally {
      await a.k.cleanup();
    }
  },
});

Deno.test("M-ONB-1, K-PTY-1: a policy narrowed while an agent's pty.open is analysed judges that program: it is refused (it was judged by the grants of its dispatch, and the program started)", async () => {
  const a = await startAgent(true);
  try {
    await Deno.writeTextFile(`${a.proj}/src`, "x");
    const sources = Array.from({ length: 20000 }, () => `${a.proj}/src`);
    const open = a.agent.request("pty.open", { cmd: "cp", args: [...sources, `${a.proj}/dst`] });
    open.catch(() => {});
    await new Promise((r) => setTimeout(r, 10));
    await writePolicy(a.file, { "agent:a": entry(a.proj, false) });
    const e = await rpcError(open);
    assert.equal(e.code, -32010, e.message);
  } finally {
    await a.k.cleanup();
  }
});
