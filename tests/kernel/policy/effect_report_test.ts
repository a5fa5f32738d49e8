/**
 * K-EFF-7 (issue 34 item 1) through the real kernel: wherever effects leave it (explain, plans,
 * -32010/-32011 data, journal.query, plan.list/plan.get, approval.list), each effect string is cut
 * to 1024 bytes ending in `…`, a paths list to 100 entries plus `paths_more`, and an effect list
 * to 100 effects plus `effects_more`.
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { kernelTest, startKernel } from "../../_support/kernel.ts";
import { createToken, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { reportEffects } from "../../../src/kernel/policy/effect_report.ts";

const NINE_MIB = 9 * 1024 * 1024;
/** A source whose first (and only) word is 9 MiB long. */
const HUGE_WORD = "echo" + "x".repeat(NINE_MIB);

const bytes = (s: string) => new TextEncoder().encode(s).length;

/** Asserts every string of every effect is at most 1024 bytes, and cut ones end in `…`. */
function assertBounded(effects: Rec[], what: string): void {
  assert.ok(effects.length > 0 && effects.length <= 100, what);
  for (const effect of effects) {
    for (const value of Object.values(effect)) {
      for (const s of Array.isArray(value) ? value : [value]) {
        if (typeof s !== "string") continue;
        assert.ok(bytes(s) <= 1024, `${what}: a ${bytes(s)}-byte string`);
      }
    }
  }
}

/** The proc_spawn effect of the huge word, as reported. */
function assertHugeWordCut(effects: Rec[], what: string): void {
  assertBounded(effects, what);
  const spawn = effects.find((e) => e.kind === "proc_spawn")!;
  const argv0 = spawn.argv0 as string;
  assert.ok(argv0.startsWith("echoxxx") && argv0.endsWith("…"), what);
  assert.ok(bytes(argv0) > 1000, `${what}: cut near 1024 bytes, not shorter`);
}

function policy() {
  const base = { fs: { read: ["/**"] }, proc_spawn: ["*"], auto_apply: "in-grant" };
  return {
    "agent:deny": { ...base, opaque: "deny" },
    "agent:ask": { ...base, opaque: "ask" },
  };
}

kernelTest(
  "K-EFF-7: a 9 MiB command word leaves journal.query, explain, plans and error data a few KiB",
  async (k) => {
    const human = await k.attach("human");
    const ran = await rpcError(human.request("exec", { src: HUGE_WORD }));
    assert.match(ran.message, /status 127/, "no such command, but it ran and was journaled");

    const rows = await human.request("journal.query", { limit: 1 }) as Rec[];
    assert.equal(rows.length, 1);
    assertHugeWordCut(rows[0].effects as Rec[], "journal.query");
    assert.ok(JSON.stringify(rows).length < 24 * 1024, "the row: its 16 KiB src and a few KiB");

    const plan = await human.request("exec", { src: HUGE_WORD, mode: "plan" }) as Rec;
    assertHugeWordCut(plan.effects as Rec[], "exec mode plan");
    assert.ok(JSON.stringify(plan).length < 8 * 1024);
    const list = await human.request("plan.list", {}) as Rec;
    const listed = (list.plans ?? list) as Rec[];
    assertHugeWordCut(listed[0].effects as Rec[], "plan.list");
    assert.ok(JSON.stringify(list).length < 8 * 1024);
    // plan.get and explain also carry the source and its AST, 2 × 9 MiB past the 16 MiB frame
    // (W-RPC-5): a 200 KB word shows their effects are cut all the same.
    const word = HUGE_WORD.slice(0, 200_000);
    const small = await human.request("exec", { src: word, mode: "plan" }) as Rec;
    const got = await human.request("plan.get", { plan_ref: small.plan_ref }) as Rec;
    assertHugeWordCut(got.effects as Rec[], "plan.get");
    const explain = await human.request("explain", { src: word }) as Rec;
    assertHugeWordCut(explain.effects as Rec[], "explain");

    for (const [principal, code] of [["agent:deny", -32010], ["agent:ask", -32011]] as const) {
      const { secret } = await createToken(k.box, principal);
      const conn = await k.attach(principal.replace(":", "-"), secret);
      const err = await rpcError(conn.request("exec", { src: HUGE_WORD }));
      assert.equal(err.code, code, err.message);
      const data = err.data as Rec;
      assertHugeWordCut(data.effects as Rec[], `${code} data`);
      assert.ok(JSON.stringify(data).length < 8 * 1024, `${code} data is a few KiB`);
      if (principal === "agent:ask") {
        const pending = await conn.request("approval.list", {}) as Rec;
        const request = (pending.requests as Rec[])[0];
        assertHugeWordCut(request.effects as Rec[], "approval.list");
      }
      conn.close();
    }
    human.close();
  },
  async () => {
    const box = await sandbox();
    return await startKernel(["--policy", await writePolicy(box, policy())], box);
  },
);

/** explain's effects of `src` in `conn`. */
async function explained(conn: RpcConnection, src: string): Promise<Rec> {
  return await conn.request("explain", { src }) as Rec;
}

kernelTest("K-EFF-7: more than 100 paths or effects are cut to 100 and counted", async (k) => {
  const conn = await k.attach();
  const files = Array.from({ length: 150 }, (_, i) => `/p/f${i}`);
  const read = await explained(conn, `cat ${files.join(" ")}`);
  const fsRead = (read.effects as Rec[]).find((e) => e.kind === "fs_read")!;
  assert.equal((fsRead.paths as string[]).length, 100);
  assert.equal(fsRead.paths_more, 50);
  assert.equal(read.effects_more, undefined);

  const commands = Array.from({ length: 130 }, (_, i) => `false && cmd${i}`).join("\n");
  const many = await explained(conn, commands);
  assert.equal((many.effects as Rec[]).length, 100);
  assert.equal(many.effects_more, 31, "130 proc_spawn + one opaque");

  await conn.request("exec", { src: `true || cat ${files.join(" ")}` });
  const [row] = await conn.request("journal.query", { limit: 1 }) as Rec[];
  const rowRead = (row.effects as Rec[]).find((e) => e.kind === "fs_read")!;
  assert.equal(rowRead.paths_more, 50);

  const plan = await conn.request("exec", { src: commands, mode: "plan" }) as Rec;
  assert.equal(plan.effects_more, 31);
  conn.close();
});

kernelTest(
  "K-EFF-7, M-ONB-3: a denial's missing grants are bounded like effects, and its message names three",
  async (k) => {
    const { secret } = await createToken(k.box, "agent:deny");
    const conn = await k.attach("deny", secret);
    const long = "x".repeat(2000);
    const files = Array.from({ length: 300 }, (_, i) => `/denied/${long}/f${i}`);
    const err = await rpcError(conn.request("exec", { src: `touch ${files.join(" ")}` }));
    assert.equal(err.code, -32010);
    const data = err.data as Rec;
    const missing = data.missing as string[];
    assert.equal(missing.length, 100);
    assert.equal(data.missing_more, 200);
    assert.ok(missing.every((m) => bytes(m) <= 1024), "each missing grant is cut");
    assert.ok(JSON.stringify(data).length < 256 * 1024, "the data stays small");
    assert.match(err.message, / and 297 more \(the grants to add/);
    assert.ok(err.message.length < 8 * 1024, "the message names three grants");
    conn.close();
  },
  async () => {
    const box = await sandbox();
    return await startKernel(["--policy", await writePolicy(box, policy())], box);
  },
);

Deno.test("K-EFF-7: strings are cut at a scalar boundary to at most 1024 bytes, lists counted", () => {
  for (const unit of ["x", "é", "€", "😀"]) {
    const long = unit.repeat(2000);
    const opaque = { kind: "opaque", reason: long };
    const { effects } = reportEffects([opaque]);
    const reason = effects[0].reason as string;
    assert.ok(bytes(reason) <= 1024 && bytes(reason) > 1024 - 4 - 3, `${unit}: ${bytes(reason)}`);
    assert.ok(reason.endsWith("…"));
    assert.ok(long.startsWith(reason.slice(0, -1)), `${unit}: a prefix, no split scalar`);
  }
  const exact = "y".repeat(1024);
  const whole = { kind: "opaque", reason: exact };
  assert.equal(reportEffects([whole]).effects[0].reason, exact);
  const names = Array.from({ length: 101 }, (_, i) => `N${i}`);
  const envRead = { kind: "env_read", names };
  const report = reportEffects([envRead]);
  assert.deepEqual(report.effects[0], {
    kind: "env_read",
    names: names.slice(0, 100),
    names_more: 1,
  });
  assert.equal(report.effects_more, undefined);
  const spawn = { kind: "proc_spawn", argv0: "ls", bin_hash: null };
  assert.deepEqual(reportEffects([spawn]), { effects: [spawn] }, "small effects pass unchanged");
});
