// `complete` for a sandboxed principal (K-COMP-1, P-SBX-3): a listing is a read, so it offers only
// what the principal's runs could list inside their sandbox, never what the sandbox masks.
import assert from "node:assert/strict";
import { startKernel } from "../../_support/kernel.ts";
import { AGENT_RIGHTS, createToken, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";

hostTest(
  "K-COMP-1/P-SBX-3/K-BLOB-3 a sandboxed agent whose grant covers the kernel's state completes none of its entries (no CAS hashes of the human's outputs to blob.get), as its runs see none",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const k = await startKernel(
      [
        "--policy",
        await writePolicy(box, { "agent:s": { fs: { read: [`${box.dir}/**`] }, ...AGENT_RIGHTS } }),
      ],
      box,
    ).catch(async (e) => {
      await box.cleanup();
      throw e;
    });
    try {
      const state = `${box.dir}/state/shoal`;
      await Deno.mkdir(`${box.dir}/home/proj`);
      await Deno.writeTextFile(`${box.dir}/home/proj/notes.txt`, "");
      const human = await k.attach();
      await human.request("exec", { src: "echo the human output" });
      await human.request("exec", { src: `cd ${box.dir}/home` });
      const agent = await k.attach("default", (await createToken(box, "agent:s")).secret);
      const candidates = async (
        src: string,
      ) => ((await agent.request("complete", { src }) as Rec).candidates as string[]);
      // What a run of the agent lists there: the state is masked by an empty tmpfs.
      const listed = await agent.request("exec", {
        src: `ls -A ${state} | wc -l; test -e ${state}/cas || echo no-cas`,
        position: "value",
      }) as Rec;
      assert.equal((listed.render as string).trim(), "0\nno-cas");
      assert.deepEqual(await candidates(`cat ${state}/`), []);
      assert.deepEqual(await candidates(`cat ${state}/cas/`), []);
      assert.deepEqual(await candidates(`cat ${state}/t`), []);
      assert.deepEqual(await candidates(`cat ${box.dir}/run/shoal/`), []);
      // What the sandbox shows is still offered, relative to the cwd and absolute.
      assert.deepEqual(await candidates("cat proj/"), ["proj/notes.txt"]);
      assert.deepEqual(await candidates(`cat ${box.dir}/home/proj/n`), [
        `${box.dir}/home/proj/notes.txt`,
      ]);
    } finally {
      await k.cleanup();
    }
  },
);

hostTest(
  "K-COMP-1/P-SBX-3 a sandboxed agent that may read / completes no host /tmp, /proc or /dev entries: its runs have a private /tmp, their own /proc and a minimal /dev",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const k = await startKernel(
      [
        "--policy",
        await writePolicy(box, { "agent:s": { fs: { read: ["/**"] }, ...AGENT_RIGHTS } }),
      ],
      box,
    ).catch(async (e) => {
      await box.cleanup();
      throw e;
    });
    try {
      const human = await k.attach();
      await human.request("exec", { src: "cd /usr" });
      const agent = await k.attach("default", (await createToken(box, "agent:s")).secret);
      const candidates = async (
        src: string,
      ) => ((await agent.request("complete", { src }) as Rec).candidates as string[]);
      // The host's: the kernel's own process and this test's sandbox directory.
      assert.ok(
        ((await human.request("complete", { src: "cat /proc/" }) as Rec).candidates as string[])
          .length > 0,
      );
      for (const dir of ["/tmp/", "/proc/", `/proc/${k.child.pid}/`, "/dev/", `${box.dir}/`]) {
        assert.deepEqual(await candidates(`cat ${dir}`), [], dir);
      }
      // What the sandbox shows of the host is offered.
      assert.ok((await candidates("cat /usr/b")).includes("/usr/bin/"));
      assert.ok((await candidates("cat b")).includes("bin/"));
    } finally {
      await k.cleanup();
    }
  },
);

hostTest(
  "K-COMP-1/P-SBX-3 a sandboxed agent that swaps a symlink in its project between a directory it may list and the kernel's state, while completing through it, never gets the state's entries: what is listed is the directory that was checked",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    const k = await startKernel(
      [
        "--policy",
        await writePolicy(box, {
          "agent:s": { fs: { read: [`${box.dir}/**`], write: [`${proj}/**`] }, ...AGENT_RIGHTS },
        }),
      ],
      box,
    ).catch(async (e) => {
      await box.cleanup();
      throw e;
    });
    try {
      const state = `${box.dir}/state/shoal`;
      await Deno.mkdir(`${proj}/sub`, { recursive: true });
      await Deno.writeTextFile(`${proj}/sub/notes.txt`, "");
      const human = await k.attach();
      await human.request("exec", { src: `cd ${proj}` });
      const agent = await k.attach("default", (await createToken(box, "agent:s")).secret);
      const flipper = await agent.request("exec", {
        src: `while :; do ln -sfn sub l; ln -sfn ${state} l; done`,
        async: true,
      }) as Rec;
      const seen = new Set<string>();
      for (let i = 0; i < 4000; i++) {
        const r = await agent.request("complete", { src: "cat l/" }) as Rec;
        for (const c of r.candidates as string[]) seen.add(c);
      }
      await agent.request("task.cancel", { task: flipper.task });
      assert.ok([...seen].every((c) => c === "l/notes.txt"), [...seen].join(" "));
    } finally {
      await k.cleanup();
    }
  },
);
