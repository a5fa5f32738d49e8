/**
 * A working directory whose name is not UTF-8 persists byte for byte (K-BASH-5, issue 13 defect
 * 2), and every path object naming it carries `raw` (V-TAG-3): `session.cwd`, attach `cwd`, the
 * journal `cwd`. Values that are not UTF-8 in exported and plain variables survive too.
 */
import assert from "node:assert/strict";
import { HEX } from "../../_support/bytes.ts";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent, withKernel } from "../../_support/kernel.ts";
import { dirAgent } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";

const encoder = new TextEncoder();

/** The stdout text of `src` run in value position. */
async function out(conn: Parameters<typeof exec>[0], src: string): Promise<string> {
  const r = await exec(conn, src, { position: "value" });
  const value = r.value as Rec;
  assert.equal(value.ok, true, JSON.stringify(value));
  return ((value.out as Rec).v as string) ?? "";
}

/** Bytes as `od -An -v -tx1` prints them, without its spacing and line breaks. */
function hex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

withKernel(
  "K-BASH-5/V-TAG-3 a non-UTF-8 cwd persists byte for byte and path objects carry raw",
  async (conn, k) => {
    const bytes = new Uint8Array([...encoder.encode(`${k.box.dir}/bad`), 0xff]);
    const real = new Uint8Array([...encoder.encode(`${Deno.realPathSync(k.box.dir)}/bad`), 0xff]);
    const word = `$'${k.box.dir}/bad\\xff'`;
    await exec(conn, `mkdir ${word} && cd ${word}`);

    const cwd = (await conn.request("session.cwd", {}) as Rec).cwd as Rec;
    assert.deepEqual(cwd, { display: `${k.box.dir}/bad\ufffd`, raw: base64(bytes) });
    // The next execs (cold: no warm shell can be checked for such a cwd) run there, logically
    // and physically, with OLDPWD as a fresh bash has it.
    for (let i = 0; i < 2; i++) {
      const [logical, physical] = (await out(
        conn,
        "printf %s \"$PWD\" | od -An -v -tx1 | tr -d ' \\n'; echo; pwd -P | od -An -v -tx1 | tr -d ' \\n'",
      )).split("\n");
      assert.equal(logical, hex(bytes));
      assert.equal(physical, hex(real) + "0a");
    }
    assert.equal(await out(conn, "declare -p OLDPWD"), "declare -x OLDPWD\n");

    const other = await k.connect();
    const attached = await other.request("session.attach", { session: "default" }) as Rec;
    assert.deepEqual(attached.cwd, cwd);
    const rows = await conn.request("journal.query", { head: "declare" }) as Rec[];
    assert.deepEqual(rows.at(-1)!.cwd, cwd);

    // A relative cd from there keeps the raw prefix; back on UTF-8 ground, raw is gone.
    await exec(conn, "mkdir sub && cd sub");
    const sub = (await conn.request("session.cwd", {}) as Rec).cwd as Rec;
    assert.deepEqual(sub.raw, base64(new Uint8Array([...bytes, ...encoder.encode("/sub")])));
    await exec(conn, `cd ${k.box.dir}`);
    assert.deepEqual((await conn.request("session.cwd", {}) as Rec).cwd, { display: k.box.dir });
    assert.equal(await out(conn, "pwd"), `${k.box.dir}\n`);
  },
);

withKernel(
  "K-BASH-5 exported and plain variables whose values are not UTF-8 persist byte for byte",
  async (conn) => {
    await exec(conn, "export XB=$'a\\xffb'; PB=$'\\xfe\\x80'");
    const od = await out(conn, `${HEX}; printf %s "$XB" | hex; printf %s "$PB" | hex`);
    assert.equal(od, "61ff62\nfe80\n");
    // Still exported: a child process sees it.
    assert.equal(await out(conn, `${HEX}; bash -c 'printf %s "$XB"' | hex`), "61ff62\n");
  },
);

Deno.test("P-SBX-4 a sandboxed run starts in a non-UTF-8 cwd too", async () => {
  const { kernel: k, token } = await startKernelWithAgent("agent:r", (box) => dirAgent(box.dir));
  try {
    // in the agent's write root (named physically: on macOS /tmp is a link to /private/tmp)
    const dir = await Deno.realPath(
      await Deno.makeTempDir({ dir: k.box.dir, prefix: "shoal-raw-cwd-" }),
    );
    const bytes = new Uint8Array([...encoder.encode(`${dir}/bad`), 0xff]);
    try {
      await exec(await k.attach("work"), `mkdir $'${dir}/bad\\xff' && cd $'${dir}/bad\\xff'`);
      const agent = await k.attach("work", token);
      const logical = await out(agent, "printf %s \"$PWD\" | od -An -v -tx1 | tr -d ' \\n'");
      assert.equal(logical, hex(bytes));
      await exec(agent, "mkdir in && cd in");
      const cwd = (await agent.request("session.cwd", {}) as Rec).cwd as Rec;
      assert.equal(cwd.raw, base64(new Uint8Array([...bytes, ...encoder.encode("/in")])));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  } finally {
    await k.cleanup();
  }
});
