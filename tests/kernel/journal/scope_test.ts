import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { collectEvents, payloads, waitForEvent } from "../../_support/events.ts";
import {
  kernelTest,
  startKernel,
  startKernelWithPolicy,
  type TestKernel,
} from "../../_support/kernel.ts";
import { createToken, LOCAL_HUMAN } from "../../_support/principals.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";

/** Grants that let an agent run ordinary commands without approval. */
const AGENT = {
  fs: { read: ["/**"], write: ["/**"], delete: ["/**"] },
  proc_spawn: ["*"],
  auto_apply: "in-grant",
};

interface Principals {
  k: TestKernel;
  a: RpcConnection;
  b: RpcConnection;
  reader: RpcConnection;
}

/** A kernel with agents A and B (own rows only) and a reader with `journal_read`, each attached. */
function withPrincipals(name: string, body: (p: Principals) => Promise<void>) {
  kernelTest(
    name,
    async (k) => {
      const [a, b, reader] = await Promise.all(
        ["agent:a", "agent:b", "agent:reader"].map(async (p) =>
          k.attach("default", (await createToken(k.box, p)).secret)
        ),
      );
      await body({ k, a, b, reader });
    },
    () =>
      startKernelWithPolicy({
        "agent:a": AGENT,
        "agent:b": AGENT,
        "agent:reader": { ...AGENT, journal_read: true },
      }),
  );
}

function query(conn: RpcConnection, params: Rec = {}): Promise<Rec[]> {
  return conn.request("journal.query", params) as Promise<Rec[]>;
}

Deno.test("a fresh connection without attach gets -32000 for journal.query, cap.request and the plan/approval methods (G-TRUST-5)", async () => {
  const k = await startKernel();
  try {
    const human = await k.attach();
    const plan = await human.request("exec", { src: "true", mode: "plan" }) as Rec;
    const conn = await k.connect();
    for (
      const [method, params] of [
        ["journal.query", {}],
        ["cap.request", { plan_ref: plan.plan_ref }],
        ["plan.get", { plan_ref: plan.plan_ref }],
        ["plan.apply", { plan_ref: plan.plan_ref }],
        ["approval.grant", { plan_ref: plan.plan_ref }],
        ["approval.deny", { plan_ref: plan.plan_ref }],
        ["approval.list", {}],
        ["plan.list", {}],
        ["explain", { src: "ls" }],
      ] as const
    ) {
      const e = await rpcError(conn.request(method, params));
      assert.equal(e.code, -32000, method);
    }
  } finally {
    await k.cleanup();
  }
});

withPrincipals(
  "journal.query: a principal sees only its own rows, naming another is -32010, journal_read sees all (K-JQ-3)",
  async ({ a, b, reader }) => {
    await exec(a, "echo from-a");
    await exec(b, "echo from-b");
    await exec(b, "echo from-b-again");

    const mine = await query(a);
    assert.deepEqual(mine.map((r) => r.src), ["echo from-a"]);
    assert.equal(mine[0].principal, "agent:a");
    assert.deepEqual((await query(a, { principal: "agent:a" })).map((r) => r.src), [
      "echo from-a",
    ]);
    const e = await rpcError(query(a, { principal: "agent:b" }));
    assert.equal(e.code, -32010);

    const bRows = await query(b);
    assert.deepEqual(bRows.map((r) => r.src), ["echo from-b-again", "echo from-b"]);

    const all = await query(reader);
    assert.deepEqual(all.map((r) => r.principal), ["agent:b", "agent:b", "agent:a"]);
    const onlyB = await query(reader, { principal: "agent:b" });
    assert.deepEqual(onlyB.map((r) => r.src), ["echo from-b-again", "echo from-b"]);
  },
);

withPrincipals(
  "journal.query applies scope, filters and limit in SQL: older matches under 120 newer non-matching rows are found (K-JQ-2)",
  async ({ a, b, reader }) => {
    await exec(b, "touch b-file");
    await exec(b, "echo b-done");
    // 120 newer rows of another principal and head: a post-filtered limit would hide B's rows.
    const conns = [a, a, a, a];
    for (let i = 0; i < 120; i += conns.length) {
      await Promise.all(conns.map((c, j) => exec(c, `echo noise-${i + j}`)));
    }
    const bRows = await query(b);
    assert.deepEqual(bRows.map((r) => r.src), ["echo b-done", "touch b-file"]);
    assert.deepEqual((await query(b, { limit: 1 })).map((r) => r.src), ["echo b-done"]);

    const touched = await query(reader, { head: "touch", limit: 1 });
    assert.deepEqual(touched.map((r) => r.src), ["touch b-file"]);
    const writes = await query(reader, { effects: ["fs.write", "proc_spawn"], limit: 5 });
    assert.deepEqual(writes.map((r) => r.src), ["touch b-file"]);
    const defaultLimit = await query(reader);
    assert.equal(defaultLimit.length, 100);
    assert.equal((await query(reader, { limit: 1000 })).length, 122);
    const aOk = await query(a, { ok: true, limit: 1000 });
    assert.equal(aOk.length, 120);
    assert.ok(aOk.every((r) => r.principal === "agent:a"));
  },
);

withPrincipals(
  "the journal channel is scoped like rows: reads and pushes hide other principals' events unless journal_read (K-EVT-8)",
  async ({ a, b, reader }) => {
    const aEvents = collectEvents(a);
    const readerEvents = collectEvents(reader);
    await a.request("events.subscribe", { channel: "journal" });
    await reader.request("events.subscribe", { channel: "journal" });
    await exec(b, "echo b-1");
    await exec(a, "echo a-1");
    // Pushes of one subscription arrive in seq order, so once A has its own later event, B's
    // earlier one would already be there had it been delivered.
    await waitForEvent(aEvents, (e) => (e.payload as Rec).principal === "agent:a");
    assert.deepEqual(payloads(aEvents, "journal").map((p) => p.principal), ["agent:a"]);
    await waitForEvent(readerEvents, (e) => (e.payload as Rec).principal === "agent:a");
    assert.deepEqual(payloads(readerEvents, "journal").map((p) => p.principal), [
      "agent:b",
      "agent:a",
    ]);

    const aRead = await a.request("events.read", { channel: "journal", since: -1 }) as Rec;
    assert.deepEqual((aRead.events as Rec[]).map((e) => (e.payload as Rec).principal), [
      "agent:a",
    ]);
    const all = await reader.request("events.read", { channel: "journal", since: -1 }) as Rec;
    const seqs = (all.events as Rec[]).map((e) => e.seq);
    assert.deepEqual(seqs, [0, 1]);
    assert.equal((aRead.events as Rec[])[0].seq, 1);
    // Subscribing with a cursor replays only visible history.
    const late = collectEvents(b);
    await b.request("events.subscribe", { channel: "journal", since: -1 });
    await exec(b, "echo b-2");
    await waitForEvent(late, (e) => e.seq === 2);
    assert.deepEqual(payloads(late, "journal").map((p) => p.principal), ["agent:b", "agent:b"]);
  },
);

kernelTest(
  "render and session.transcript reads and pushes show only the caller's session unless journal_read (K-EVT-8)",
  async (k) => {
    const [a, b, reader] = await Promise.all(
      [["agent:a", "sess-a"], ["agent:b", "sess-b"], ["agent:reader", "sess-r"]].map(
        async ([p, session]) => k.attach(session, (await createToken(k.box, p)).secret),
      ),
    );
    const channels = ["render", "session.transcript"];
    const aEvents = collectEvents(a);
    const readerEvents = collectEvents(reader);
    for (const channel of channels) {
      await a.request("events.subscribe", { channel });
      await reader.request("events.subscribe", { channel });
    }
    await exec(b, "echo secret-of-b");
    await exec(a, "echo mine");
    for (const channel of channels) {
      // Pushes of one channel arrive in seq order: B's earlier event would be here by now.
      await waitForEvent(aEvents, (e) => e.channel === channel);
      assert.deepEqual(payloads(aEvents, channel).map((p) => p.session), ["sess-a"], channel);
      await waitForEvent(
        readerEvents,
        (e) => e.channel === channel && (e.payload as Rec).session === "sess-a",
      );
      assert.deepEqual(
        payloads(readerEvents, channel).map((p) => p.session),
        ["sess-b", "sess-a"],
        channel,
      );
      const read = await a.request("events.read", { channel, since: -1 }) as Rec;
      assert.deepEqual((read.events as Rec[]).map((e) => (e.payload as Rec).session), ["sess-a"]);
    }
    assert.ok(!JSON.stringify(aEvents).includes("secret-of-b"));
  },
  () =>
    startKernelWithPolicy({
      "agent:a": AGENT,
      "agent:b": AGENT,
      "agent:reader": { ...AGENT, journal_read: true },
    }),
);

Deno.test("without a policy file the local human reads every row and a token principal is unknown and denied (P-EVAL-3, P-PRIN-1)", async () => {
  const k = await startKernel();
  try {
    const human = await k.attach();
    await exec(human, "echo human");
    const { secret } = await createToken(k.box, "agent:ghost");
    const ghost = await k.attach("default", secret);
    const e = await rpcError(exec(ghost, "echo hi"));
    assert.equal(e.code, -32010);
    assert.equal((e.data as Rec).verdict, "deny");
    assert.deepEqual(await query(ghost), []);
    const rows = await query(human, { principal: LOCAL_HUMAN });
    assert.deepEqual(rows.map((r) => r.src), ["echo human"]);
  } finally {
    await k.cleanup();
  }
});

/** The bytes of a CAS blob, read in full with `blob.get`. */
async function blobText(conn: RpcConnection, hash: string): Promise<string> {
  const got = await conn.request("blob.get", { hash }) as Rec;
  assert.equal(got.next, null);
  return (got.value as Rec).v as string;
}

Deno.test("journal rows record stdout always, stderr only when non-empty, and the render, each a CAS blob of that length (J-3)", async () => {
  const k = await startKernel();
  try {
    const human = await k.attach();
    const quiet = await exec(human, "printf ''");
    const noisy = await exec(human, "echo out; echo err >&2");
    const [noisyRow, quietRow] = await query(human);
    const kinds = (row: Rec) => (row.outputs as Rec[]).map((o) => o.kind);
    assert.deepEqual(kinds(quietRow), ["stdout", "render"]);
    assert.deepEqual(kinds(noisyRow), ["stdout", "stderr", "render"]);
    const expected: [Rec, Rec, string[]][] = [
      [quietRow, quiet, ["", quiet.render as string]],
      [noisyRow, noisy, ["out\n", "err\n", noisy.render as string]],
    ];
    for (const [row, result, texts] of expected) {
      const outputs = row.outputs as Rec[];
      for (const [i, output] of outputs.entries()) {
        assert.match(output.hash as string, /^sha256:[0-9a-f]{64}$/);
        assert.equal(await blobText(human, output.hash as string), texts[i]);
        assert.equal(output.len, new TextEncoder().encode(texts[i]).length);
      }
      assert.equal(row.ok, true);
      assert.equal((result.value as Rec).ok, true);
    }
  } finally {
    await k.cleanup();
  }
});

Deno.test("plan-mode calls, parse errors and bad params leave no journal row; a failing run does (J-1, K-JQ-1)", async () => {
  const k = await startKernel();
  try {
    const human = await k.attach();
    const plan = await human.request("exec", { src: "echo planned", mode: "plan" }) as Rec;
    assert.equal(plan.approval, "not_required");
    assert.equal((await rpcError(exec(human, "if true; then"))).code, -32001);
    assert.deepEqual(await query(human), []);
    assert.equal((await rpcError(exec(human, "false"))).code, -32002);
    const rows = await query(human);
    assert.deepEqual(rows.map((r) => [r.src, r.ok, r.status]), [["false", false, 1]]);
    for (
      const params of [
        { effects: ["fs.nope"] },
        { effects: ["fs"] },
        { limit: 1001 },
        { limit: -1 },
        { since: "0" },
      ]
    ) {
      const e = await rpcError(query(human, params));
      assert.equal(e.code, -32602, JSON.stringify(params));
    }
    assert.equal((await query(human, { limit: 1000 })).length, 1);
    // `false` is a builtin: no proc_spawn.
    assert.deepEqual(await query(human, { effects: ["proc.spawn"] }), []);
  } finally {
    await k.cleanup();
  }
});

Deno.test({
  name:
    "J-2 a row's head is the first word bash reads: `git\\u00a0status`, `\\ufeffgit status` and `git\\u2028status`, each a command bash does not find (status 127), do not match head git [ignored: defect found by the probe round; needs a SPEC decision: J-2 says 'first whitespace-separated word' without saying which whitespace, and the kernel splits on JavaScript's (trim and \\s take U+00A0, U+FEFF, U+2028 and others), so the head, its filter and the journal event name git for sources whose proc_spawn argv0 is another word; splitting on the blanks bash splits words on (space, tab, newline) is the SPEC's choice]",
  ignore: true,
  fn: async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      for (const src of ["git\u00a0status", "\ufeffgit status", "git\u2028status"]) {
        await exec(conn, src, { position: "value" });
      }
      assert.deepEqual(await conn.request("journal.query", { head: "git" }), []);
    } finally {
      await k.cleanup();
    }
  },
});
