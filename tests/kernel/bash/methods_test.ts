// `complete` and `explain` through the real kernel socket (K-COMP-1, K-EXPL-1): what the
// attachment changes, and that nothing runs or is stored.
import assert from "node:assert/strict";
import { kernelTest, sharedKernel, startKernelWithAgent } from "../../_support/kernel.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

/**
 * The cases that read only their own session share one kernel; explain's, which checks the whole
 * journal holds no row, starts its own.
 */
const sharedCase = sharedKernel();

sharedCase(
  "K-COMP-1 unattached: commands from the kernel's PATH and builtins, no path candidates; attached: entries of the session's cwd, directories with /",
  async (conn, k) => {
    await Deno.mkdir(`${k.box.dir}/proj/src`, { recursive: true });
    await Deno.writeTextFile(`${k.box.dir}/proj/readme.md`, "");
    await Deno.writeTextFile(`${k.box.dir}/proj/rules.txt`, "");
    const bare = await k.connect();
    assert.deepEqual(await bare.request("complete", { src: "cat r" }), {
      candidates: [],
      start: 4,
    });
    const commands = await bare.request("complete", { src: "ech" }) as Rec;
    assert.ok((commands.candidates as string[]).includes("echo"));
    assert.equal(commands.start, 0);

    await conn.request("exec", { src: "cd proj" });
    assert.deepEqual(await conn.request("complete", { src: "cat r" }), {
      candidates: ["readme.md", "rules.txt"],
      start: 4,
    });
    // The cursor is a UTF-8 byte offset: 4 is inside "é" (bytes 3..4) and moves back to 3.
    assert.deepEqual(await conn.request("complete", { src: "ls é", cursor: 4 }), {
      candidates: ["readme.md", "rules.txt", "src/"],
      start: 3,
    });
    assert.equal(
      (await rpcError(conn.request("complete", { src: "x", cursor: 1.5 }))).code,
      -32602,
    );
    assert.equal((await rpcError(conn.request("complete", {}))).code, -32602);
  },
);

Deno.test("K-COMP-1 a token principal's completions list only directories it may read: none of HOME, the kernel's state or another project", async () => {
  const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
  try {
    const home = `${k.box.dir}/home`;
    await Deno.mkdir(`${home}/proj/src`, { recursive: true });
    await Deno.writeTextFile(`${home}/proj/src/main.ts`, "");
    await Deno.mkdir(`${home}/other`);
    await Deno.writeTextFile(`${home}/other/plans.txt`, "");
    await Deno.symlink(`${home}/other`, `${home}/proj/other`);
    const human = await k.attach("work");
    await human.request("exec", { src: `cd ${home}/proj` });
    const agent = await k.attach("work", token);
    const candidates = async (
      src: string,
    ) => ((await agent.request("complete", { src }) as Rec).candidates as string[]);
    assert.deepEqual(await candidates("ls "), ["other/", "src/"]);
    assert.deepEqual(await candidates("ls src/"), ["src/main.ts"]);
    for (const dir of [`${home}/`, "../", "../other/", "other/", `${k.box.dir}/`, "/"]) {
      assert.deepEqual(await candidates(`cat ${dir}`), [], dir);
    }
    assert.deepEqual(
      (await human.request("complete", { src: "cat ../other/" }) as Rec).candidates,
      ["../other/plans.txt"],
    );
  } finally {
    await k.cleanup();
  }
});

kernelTest(
  "K-EXPL-1 explain returns ast, effects, reversibility and the caller's verdict with plan_ref null; it stores and runs nothing",
  async (k) => {
    const bare = await k.connect();
    assert.equal((await rpcError(bare.request("explain", { src: "ls" }))).code, -32000);
    const conn = await k.attach();
    await Deno.writeTextFile(`${k.box.dir}/scratch.txt`, "keep");
    const r = await conn.request("explain", { src: "rm scratch.txt" }) as Rec;
    assert.deepEqual(Object.keys(r).sort(), [
      "ast",
      "ast_lang",
      "ast_version",
      "effects",
      "plan_ref",
      "reversibility",
      "verdict",
    ]);
    assert.equal(r.ast_version, 1);
    assert.equal((r.ast as Rec).type, "File");
    assert.deepEqual(r.effects, [
      { kind: "fs_delete", paths: [`${k.box.dir}/scratch.txt`] },
      { kind: "proc_spawn", argv0: "rm", bin_hash: null },
    ]);
    assert.equal(r.reversibility, "irreversible");
    assert.equal(r.verdict, "allow");
    assert.equal(r.plan_ref, null);
    assert.equal(await Deno.readTextFile(`${k.box.dir}/scratch.txt`), "keep");
    assert.deepEqual(await conn.request("plan.list", {}), []);
    assert.deepEqual(await conn.request("journal.query", {}), []);
    assert.equal((await rpcError(conn.request("explain", { src: "if true; then" }))).code, -32001);
    assert.equal((await rpcError(conn.request("explain", { ast: {} }))).code, -32602);
  },
);

sharedCase(
  "K-EFF-1 a word that starts with U+FEFF is analysed as bash runs it: `rm \\uFEFF/etc/x` deletes that relative name in the cwd, not /etc/x, and `\\uFEFFgit` spawns \\uFEFFgit, not git",
  async (conn) => {
    const cwd = ((await conn.request("session.cwd", {}) as Rec).cwd as Rec).display;
    const rm = await conn.request("explain", { src: "rm \ufeff/etc/x" }) as Rec;
    assert.deepEqual(rm.effects, [
      { kind: "fs_delete", paths: [`${cwd}/\ufeff/etc/x`] },
      { kind: "proc_spawn", argv0: "rm", bin_hash: null },
    ]);
    const git = await conn.request("explain", { src: "\ufeffgit status" }) as Rec;
    const spawned = (git.effects as Rec[]).find((e) => e.kind === "proc_spawn");
    assert.equal(spawned?.argv0, "\ufeffgit");
    const parsed = await conn.request("parse", { src: "echo \ufeffx" }) as Rec;
    assert.ok(JSON.stringify(parsed.ast).includes('"lit":"\ufeffx"'));
  },
);
