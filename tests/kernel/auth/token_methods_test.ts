import assert from "node:assert/strict";
import { collectEvents, waitForEvent } from "../../_support/events.ts";
import { kernelTest, startKernelWithPolicy, type TestKernel } from "../../_support/kernel.ts";
import { createToken, kernelCli, LOCAL_HUMAN } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { delay, waitUntil } from "../../_support/wait.ts";

const AGENT = { proc_spawn: ["*"], auto_apply: "in-grant" };

/** A kernel whose policy knows `agent:a` and `agent:b`; tokens are made after it started. */
function withAgentPolicy(name: string, body: (k: TestKernel) => Promise<void>) {
  kernelTest(name, body, () => startKernelWithPolicy({ "agent:a": AGENT, "agent:b": AGENT }));
}

withAgentPolicy(
  "tokens created after kernel start attach as their principal; unknown and expired tokens are -32030 (T-TOK-2/4, K-ATTACH-2)",
  async (k) => {
    const { secret } = await createToken(k.box, "agent:a");
    const conn = await k.connect();
    const attached = await conn.request("session.attach", { token: secret }) as Rec;
    assert.equal(attached.principal, "agent:a");
    assert.equal((attached.caps as Rec).profile, "test");
    const run = await conn.request("exec", { src: "echo hi" }) as Rec;
    assert.deepEqual((run.value as Rec).out, { $: "str", v: "hi\n" });

    // A failed attach leaves the previous attachment as it was.
    const unknown = await rpcError(conn.request("session.attach", { token: "x".repeat(43) }));
    assert.equal(unknown.code, -32030);
    assert.equal((await conn.request("journal.query", {}) as Rec[])[0].principal, "agent:a");

    const expiring = await createToken(k.box, "agent:b", "test", 1);
    const early = await k.connect();
    const withTtl = await early.request("session.attach", { token: expiring.secret }) as Rec;
    assert.equal(withTtl.principal, "agent:b");
    // Wait (bounded) until `token list` reports the token expired, then it is refused everywhere.
    for (let i = 0; i < 50; i++) {
      const listed = await kernelCli(k.box, ["token", "list"]);
      if (listed.stdout.includes(`${expiring.id}\tagent:b\ttest\texpired`)) break;
      await delay(100);
    }
    const late = await k.connect();
    const expired = await rpcError(late.request("session.attach", { token: expiring.secret }));
    assert.equal(expired.code, -32030);
    assert.equal((await rpcError(early.request("session.cwd", {}))).code, -32030);
  },
);

withAgentPolicy(
  "token revoke while the kernel runs: the next attach is -32030, the attached connection's requests fail -32030 and its pushes stop (T-TOK-4, D-FIX-8)",
  async (k) => {
    const a = await createToken(k.box, "agent:a");
    const b = await createToken(k.box, "agent:b");
    const human = await k.attach();
    const agent = await k.attach("default", a.secret);
    const other = await k.attach("default", b.secret);
    const agentEvents = collectEvents(agent);
    const otherEvents = collectEvents(other);
    for (const conn of [agent, other]) {
      await conn.request("events.subscribe", { channel: "user.news" });
    }
    await human.request("events.publish", { channel: "user.news", payload: { n: 1 } });
    await waitForEvent(agentEvents, (e) => (e.payload as Rec).n === 1);

    const revoked = await kernelCli(k.box, ["token", "revoke", a.id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    await human.request("events.publish", { channel: "user.news", payload: { n: 2 } });
    await waitForEvent(otherEvents, (e) => (e.payload as Rec).n === 2);
    // Pushes are written before the reply to any later request on the same connection, so
    // event 2 would precede this error had the revoked connection still been subscribed.
    const e = await rpcError(agent.request("events.read", { channel: "user.news" }));
    assert.equal(e.code, -32030);
    assert.deepEqual(agentEvents.map((ev) => (ev.payload as Rec).n), [1]);
    for (const method of ["exec", "journal.query", "session.cwd", "events.subscribe"]) {
      const again = await rpcError(agent.request(method, { src: "true", channel: "user.news" }));
      assert.equal(again.code, -32030, method);
    }
    await human.request("events.publish", { channel: "user.news", payload: { n: 3 } });
    await waitForEvent(otherEvents, (ev) => (ev.payload as Rec).n === 3);
    assert.equal((await rpcError(agent.request("session.cwd", {}))).code, -32030);
    assert.deepEqual(agentEvents.map((ev) => (ev.payload as Rec).n), [1]);
    // parse stays available; a new attach with the revoked token is refused.
    assert.equal((await agent.request("parse", { src: "ls" }) as Rec).ast_lang, "bash");
    const fresh = await k.connect();
    const refused = await rpcError(fresh.request("session.attach", { token: a.secret }));
    assert.equal(refused.code, -32030);
    assert.equal((await rpcError(fresh.request("session.cwd", {}))).code, -32000);

    // The other token is untouched, and the revoked connection may attach as the local human.
    assert.equal((await other.request("session.cwd", {}) as Rec).cwd !== undefined, true);
    const relinked = await agent.request("session.attach", {}) as Rec;
    assert.equal(relinked.principal, LOCAL_HUMAN);
  },
);

kernelTest(
  "complete on a connection whose token was revoked lists no directory entries, as unattached (T-TOK-4, K-COMP-1)",
  async (k) => {
    const proj = `${k.box.dir}/home/proj`;
    await Deno.mkdir(`${proj}/inner`, { recursive: true });
    await Deno.writeTextFile(`${proj}/notes.txt`, "x");
    const a = await createToken(k.box, "agent:a");
    const agent = await k.attach("default", a.secret);
    const src = `cat ${proj}/`;
    const before = await agent.request("complete", { src }) as Rec;
    assert.deepEqual(before.candidates, [`${proj}/inner/`, `${proj}/notes.txt`]);

    assert.equal((await kernelCli(k.box, ["token", "revoke", a.id])).code, 0);
    const after = await agent.request("complete", { src }) as Rec;
    assert.deepEqual(after.candidates, []);
    // What needs no attachment still answers: command names.
    const command = await agent.request("complete", { src: "ech" }) as Rec;
    assert.ok((command.candidates as string[]).includes("echo"));
  },
  () => startKernelWithPolicy({ "agent:a": { ...AGENT, fs: { read: ["~/proj/**"] } } }),
);

kernelTest(
  "an exec read before token revoke but not yet started (its analysis still going) does not start after the revoke exits: -32030 (T-TOK-4)",
  async (k) => {
    const proj = `${k.box.dir}/home/proj`;
    await Deno.mkdir(proj, { recursive: true });
    const a = await createToken(k.box, "agent:a");
    const agent = await k.connect();
    await agent.request("session.attach", { token: a.secret, cwd: proj });
    // A long source takes its analysis a while before bash starts; the run prints when it began.
    let refused = false;
    for (let lines = 100_000; lines <= 400_000 && !refused; lines *= 2) {
      const src = "true\n".repeat(lines) + `echo "began $(date +%s%N)"; touch ${proj}/after`;
      const running = agent.request("exec", { src }).then(
        (r) => ({
          began: BigInt(((((r as Rec).value as Rec).out as Rec).v as string).slice(6, -1)),
        }),
        (e) => ({ code: (e as { code?: number }).code }),
      );
      assert.equal((await kernelCli(k.box, ["token", "revoke", a.id])).code, 0);
      const revokedNs = BigInt(Date.now()) * 1_000_000n;
      const outcome = await running;
      if ("code" in outcome) {
        assert.equal(outcome.code, -32030);
        refused = true;
        break;
      }
      // It ran: only allowed when it began before the revoke exited (the attempt proves nothing).
      const began = (outcome as { began: bigint }).began;
      assert.ok(began < revokedNs, "the revoked agent's exec started after the revoke exited");
      await Deno.remove(`${proj}/after`);
      const b = await createToken(k.box, "agent:a");
      await agent.request("session.attach", { token: b.secret });
      a.id = b.id;
    }
    assert.ok(refused, "no attempt's analysis outlasted the revoke");
    assert.equal(await Deno.stat(`${proj}/after`).then(() => true, () => false), false);
  },
  () =>
    startKernelWithPolicy({
      "agent:a": {
        ...AGENT,
        fs: { read: ["~/proj/**"], write: ["~/proj/**"] },
        session_write: true,
        time: true,
        opaque: "allow",
      },
    }),
);

kernelTest(
  "a pty.open read before token revoke but not yet spawned (its program line's analysis still going) does not start its program after the revoke exits: -32030 (T-TOK-4)",
  async (k) => {
    const a = await createToken(k.box, "agent:a");
    const agent = await k.attach("default", a.secret);
    let refused = false;
    const pids: number[] = [];
    try {
      for (let words = 50_000; words <= 200_000 && !refused; words *= 2) {
        const args = [
          "-c",
          'echo "began $(date +%s%N)"; sleep 60',
          "sh",
          ...Array(words).fill("a"),
        ];
        const opening = agent.request("pty.open", { cmd: "sh", args }).then(
          (r) => ({ pty: r as Rec }),
          (e) => ({ code: (e as { code?: number }).code }),
        );
        assert.equal((await kernelCli(k.box, ["token", "revoke", a.id])).code, 0);
        const revokedNs = BigInt(Date.now()) * 1_000_000n;
        const outcome = await opening;
        if ("code" in outcome) {
          assert.equal(outcome.code, -32030);
          refused = true;
          break;
        }
        // It ran: only allowed when its program began before the revoke exited.
        pids.push(outcome.pty.pid as number);
        const b = await createToken(k.box, "agent:a");
        await agent.request("session.attach", { token: b.secret });
        a.id = b.id;
        const seen = { began: -1n };
        await waitUntil(async () => {
          const read = await agent.request("pty.read", { pty_id: outcome.pty.pty_id }) as Rec;
          const line = (read.screen as string[]).find((l) => l.startsWith("began "));
          if (line !== undefined) seen.began = BigInt(line.slice(6));
          return seen.began >= 0n;
        }, 10000);
        assert.ok(seen.began >= 0n, "the PTY program printed no start time");
        assert.ok(seen.began < revokedNs, "the PTY program began after the revoke exited");
      }
      assert.ok(refused, "no attempt's analysis outlasted the revoke");
    } finally {
      for (const pid of pids) {
        try {
          Deno.kill(-pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
  },
  () => startKernelWithPolicy({ "agent:a": { ...AGENT, opaque: "allow" } }),
);
