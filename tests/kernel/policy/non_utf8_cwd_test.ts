/**
 * K-EFF-3, P-EVAL-1, K-COMP-1: a session cwd whose name is not UTF-8. Its text is lossy (every bad
 * sequence reads U+FFFD), so a directory really named U+FFFD (bytes ef bf bd) has the same text:
 * the kernel must neither judge an agent's relative paths there as paths of that other directory
 * nor list that other directory for `complete`.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, RUNNER, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";

/** The directory named by the bytes ef bf bd (U+FFFD) and the one named by the byte ff. */
const REPLACEMENT = "\ufffd";
const BAD = "$'\\xff'";

interface Setup {
  k: TestKernel;
  proj: string;
  human: Awaited<ReturnType<TestKernel["attach"]>>;
  agent: Awaited<ReturnType<TestKernel["attach"]>>;
}

/**
 * A kernel whose agent:a (unsandboxed, opaque work denied) may read all of `proj` and write only
 * the directory `proj/<U+FFFD>`; the human made `proj/<ff>` (with `file1`, `fi<fe>` and `sub/`) and
 * `proj/<U+FFFD>` (with `decoy`), and moved the session into `proj/<ff>`.
 */
async function setUp(fs: (proj: string) => Rec): Promise<Setup> {
  const box = await sandbox();
  const proj = `${box.dir}/proj`;
  await Deno.mkdir(`${proj}/${REPLACEMENT}`, { recursive: true });
  await Deno.writeTextFile(`${proj}/${REPLACEMENT}/decoy`, "");
  const entry = { ...RUNNER, opaque: "deny", sandbox: false, fs: fs(proj) };
  const file = await writePolicy(box, { "agent:a": entry });
  const k = await startKernel(["--policy", file], box);
  const human = await k.attach();
  await exec(
    human,
    `mkdir -p ${proj}/${BAD}/sub && touch ${proj}/${BAD}/file1 ${proj}/${BAD}/$'fi\\xfe' && cd ${proj}/${BAD}`,
  );
  const agent = await k.attach("default", (await createToken(box, "agent:a")).secret);
  return { k, proj, human, agent };
}

/** Whether `proj/<ff>/name` exists (a Deno path cannot name it). */
function existsBad(proj: string, name: string): boolean {
  const r = new Deno.Command("sh", {
    args: ["-c", `test -e "$(printf '%s\\377' "$1")/$2"`, "sh", `${proj}/`, name],
  }).outputSync();
  return r.code === 0;
}

Deno.test("K-EFF-3, P-EVAL-1: an agent whose fs.write names only the directory U+FFFD cannot write into a cwd named by the byte ff (its path read as the granted one: the write ran)", async () => {
  const { k, proj, agent } = await setUp((p) => ({
    read: [`${p}/**`],
    write: [`${p}/${REPLACEMENT}/**`],
  }));
  try {
    const e = await rpcError(agent.request("exec", { src: "echo x > out" }));
    assert.equal(e.code, -32010, e.message);
    const effects = (e.data as { effects: Rec[] }).effects;
    assert.ok(effects.some((f) => /name is not UTF-8/.test(String(f.reason))), e.message);
    assert.equal(existsBad(proj, "out"), false, "the agent wrote outside its grants");
    assert.equal(existsBad(proj, "file1"), true);
  } finally {
    await k.cleanup();
  }
});

Deno.test("K-COMP-1: complete in a cwd named by the byte ff lists that directory, without the names that are not UTF-8 (it listed the directory named U+FFFD, or nothing; a name fi<fe> as fi<U+FFFD>, a file that does not exist)", async () => {
  const { k, human } = await setUp((p) => ({ read: [`${p}/**`] }));
  try {
    const r = await human.request("complete", { src: "ls " }) as Rec;
    assert.deepEqual(r.candidates, ["file1", "sub/"]);
    const f = await human.request("complete", { src: "cat fi" }) as Rec;
    assert.deepEqual(f.candidates, ["file1"]);
  } finally {
    await k.cleanup();
  }
});

Deno.test("K-COMP-1, P-EVAL-1: an agent may list a cwd named by the byte ff when its fs.read covers it by a wildcard, not when it names only the directory U+FFFD", async () => {
  const { k, agent } = await setUp((p) => ({ read: [`${p}/**`] }));
  try {
    const r = await agent.request("complete", { src: "ls " }) as Rec;
    assert.deepEqual(r.candidates, ["file1", "sub/"]);
  } finally {
    await k.cleanup();
  }
  const narrow = await setUp((p) => ({
    read: [`${p}/${REPLACEMENT}`, `${p}/${REPLACEMENT}/**`],
  }));
  try {
    const r = await narrow.agent.request("complete", { src: "ls " }) as Rec;
    assert.deepEqual(r.candidates, []);
  } finally {
    await narrow.k.cleanup();
  }
});

Deno.test({
  name:
    "K-EFF-1/K-EFF-3 (SPEC must decide how effect paths write bytes that are not UTF-8): an agent granted fs.write on proj/** writing a relative path in proj/<ff> is refused as opaque (the working directory's name is not UTF-8) though the write is inside its grants",
  ignore: true,
  fn: async () => {
    const { k, proj, agent } = await setUp((p) => ({
      read: [`${p}/**`],
      write: [`${p}/**`],
    }));
    try {
      await agent.request("exec", { src: "echo x > out" });
      assert.equal(existsBad(proj, "out"), true);
    } finally {
      await k.cleanup();
    }
  },
});

Deno.test("K-EFF-3, P-EVAL-1: `ls` in a cwd reached through a link to a directory outside the agent's grants whose name is not UTF-8 is refused (the link could not be followed, so the read was judged as the link's own path in the grants and listed that directory)", async () => {
  const { k, proj, human, agent } = await setUp((p) => ({ read: [`${p}/**`] }));
  try {
    const outside = `${k.box.dir}/outside/${BAD}`;
    await exec(
      human,
      `mkdir -p ${outside} && touch ${outside}/secret && ln -s ${outside} ${proj}/link && cd ${proj}/link`,
    );
    const e = await rpcError(agent.request("exec", { src: "ls" }));
    assert.equal(e.code, -32010, e.message);
  } finally {
    await k.cleanup();
  }
});

Deno.test("K-EFF-3, P-EVAL-1: a program run by a relative path in a cwd named by the byte ff is not hashed as the one in the directory named U+FFFD (its bin_hash matched the granted sha256 of that other file, and the program in the cwd ran)", async () => {
  const box = await sandbox();
  const proj = `${box.dir}/proj`;
  const allowed = "#!/bin/sh\necho allowed\n";
  await Deno.mkdir(`${proj}/${REPLACEMENT}`, { recursive: true });
  await Deno.writeTextFile(`${proj}/${REPLACEMENT}/tool`, allowed, { mode: 0o755 });
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(allowed));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const entry = {
    proc_spawn: [`sha256:${hex}`],
    opaque: "allow",
    auto_apply: "in-grant",
    sandbox: false,
    fs: { read: [`${proj}/**`] },
  };
  const k = await startKernel(["--policy", await writePolicy(box, { "agent:a": entry })], box);
  try {
    const human = await k.attach();
    await exec(
      human,
      `mkdir ${proj}/${BAD} && printf '#!/bin/sh\\necho other\\n' > ${proj}/${BAD}/tool && ` +
        `chmod +x ${proj}/${BAD}/tool && cd ${proj}/${BAD}`,
    );
    const agent = await k.attach("default", (await createToken(box, "agent:a")).secret);
    const e = await rpcError(agent.request("exec", { src: "./tool" }));
    assert.equal(e.code, -32010, e.message);
  } finally {
    await k.cleanup();
  }
});

Deno.test("K-EFF-3 (issue 14): with `.` on the session PATH, a command name in a cwd named by the byte ff is not looked up in the directory named U+FFFD (found in neither, it was judged the system's uname, and the uname of the cwd ran)", async () => {
  const { k, proj, human, agent } = await setUp((p) => ({ read: [`${p}/**`] }));
  try {
    await exec(
      human,
      `printf '#!/bin/sh\\ntouch ${proj}/ran\\n' > uname && chmod +x uname && export PATH=".:$PATH"`,
    );
    const e = await rpcError(agent.request("exec", { src: "uname" }));
    assert.equal(e.code, -32010, e.message);
    assert.equal(await Deno.stat(`${proj}/ran`).then(() => true, () => false), false);
  } finally {
    await k.cleanup();
  }
});
