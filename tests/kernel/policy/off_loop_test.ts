// E-4: sources past the inline limit are parsed and analysed in a worker, with the same results.
import assert from "node:assert/strict";
import { parseBash } from "../../../src/kernel/bash/ast.ts";
import { WORKER_IDLE_MS } from "../../../src/kernel/policy/off_loop.ts";
import {
  INLINE_LOOKUPS,
  INLINE_PARSE_LIMIT,
  MAX_PARSE_UNITS,
} from "../../../src/protocol/limits.ts";
import { compactJson, JsonText } from "../../../src/protocol/rpc.ts";
import { hostTest, needsLinux } from "../../_support/host.ts";
import { kernelTest, startKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { rpcError } from "../../_support/rejection.ts";
import { waitUntil } from "../../_support/wait.ts";

Deno.test("JsonText is written verbatim where it stands, next to exact bigints", () => {
  const text = compactJson({ a: new JsonText('{"x":[1,"\\"@jsontext-"]}'), b: 2n ** 64n, c: "s" });
  assert.equal(text, '{"a":{"x":[1,"\\"@jsontext-"]},"b":18446744073709551616,"c":"s"}');
});

kernelTest(
  "E-4 a source past the inline limit parses, explains and runs with the same results as inline",
  async (k) => {
    const conn = await k.attach();
    const big = "echo a > out.txt; cat out.txt # " + "é".repeat(INLINE_PARSE_LIMIT) + "\n";
    assert.ok(big.length > INLINE_PARSE_LIMIT);
    const parsed = await conn.request("parse", { src: big }) as Rec;
    assert.deepEqual(parsed.ast, JSON.parse(JSON.stringify(parseBash(big))));
    const explained = await conn.request("explain", { src: big }) as Rec;
    const small = await conn.request("explain", { src: "echo a > out.txt; cat out.txt" }) as Rec;
    assert.deepEqual(explained.effects, small.effects);
    assert.equal(explained.verdict, small.verdict);
    assert.deepEqual(explained.ast, parsed.ast);
    const ran = await conn.request("exec", { src: big }) as Rec;
    assert.deepEqual((ran.value as Rec).out, { $: "str", v: "a\n" });
    const bad = big + "if then (";
    const e = await rpcError(conn.request("parse", { src: bad }));
    assert.equal(e.code, -32001);
    let inline: unknown;
    try {
      parseBash(bad);
    } catch (err) {
      inline = err;
    }
    assert.deepEqual(e.data, (inline as { data: unknown }).data);
    assert.equal(e.message, (inline as Error).message);
  },
);

// 60,000 `:` lines are 120 kB of source and about 18 MB of AST JSON: no frame can carry their AST.
const UNSENDABLE = ":\n".repeat(60_000);

kernelTest(
  "E-4 a source whose AST no frame can carry: parse, explain and plan.get answer -32603 response too large; run and plan mode work",
  async (k) => {
    const conn = await k.attach();
    for (const method of ["parse", "explain"]) {
      const e = await rpcError(conn.request(method, { src: UNSENDABLE }));
      assert.equal(e.code, -32603, method);
      assert.equal(e.message, "response too large", method);
    }
    const ran = await conn.request("exec", { src: UNSENDABLE + "echo done" }) as Rec;
    assert.deepEqual((ran.value as Rec).out, { $: "str", v: "done\n" });
    const planned = await conn.request("exec", { src: UNSENDABLE, mode: "plan" }) as Rec;
    assert.equal(planned.verdict, "allow");
    const e = await rpcError(conn.request("plan.get", { plan_ref: planned.plan_ref }));
    assert.equal(e.code, -32603);
    assert.equal(e.message, "response too large");
    const small = await conn.request("exec", { src: ":", mode: "plan" }) as Rec;
    const got = await conn.request("plan.get", { plan_ref: small.plan_ref }) as Rec;
    assert.deepEqual(got.ast, JSON.parse(JSON.stringify(parseBash(":"))));
    assert.equal((await conn.request("parse", { src: ":" }) as Rec).ast_lang, "bash");
  },
);

kernelTest(
  "E-4 a source past the parse budget is a -32001 pointing at where it passes it, and the kernel lives on",
  async (k) => {
    const conn = await k.attach();
    const lines = MAX_PARSE_UNITS / 2;
    const src = ":\n".repeat(lines) + ": x"; // the budget is passed by the last `:`
    for (
      const [method, params] of [
        ["parse", { src }],
        ["explain", { src }],
        ["exec", { src }],
        ["exec", { src, mode: "plan" }],
      ] as const
    ) {
      const e = await rpcError(conn.request(method, params));
      assert.equal(e.code, -32001, method);
      const data = e.data as Rec;
      assert.deepEqual(data.span, { start: 2 * lines, end: 2 * lines + 1 }, method);
      assert.equal(data.line, lines + 1);
      assert.equal(data.col, 1);
      assert.match(String(data.hint), /not supported/);
    }
    assert.equal(
      ((await conn.request("exec", { src: "echo alive" }) as Rec).value as Rec).ok,
      true,
    );
  },
);

/** How many Deno worker threads (named `worker-N` by Deno) process `pid` has now (Linux). */
function workerThreads(pid: number): number {
  let count = 0;
  for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
    try {
      if (Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/comm`).startsWith("worker-")) {
        count++;
      }
    } catch {
      // the thread ended meanwhile
    }
  }
  return count;
}

hostTest(
  "E-4 the analysis worker ends once idle, giving its heap back, and a later large source starts a new one with the same results",
  needsLinux("thread names in /proc/PID/task"),
  async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const pid = k.child.pid;
      const big = "echo a | cat # " + "x".repeat(INLINE_PARSE_LIMIT) + "\n";
      assert.equal(workerThreads(pid), 0, "no worker before the first large source");
      const first = await conn.request("parse", { src: big }) as Rec;
      assert.equal(workerThreads(pid), 1, "the large source ran in the worker");
      assert.ok(
        await waitUntil(() => workerThreads(pid) === 0, WORKER_IDLE_MS + 15_000),
        "the idle worker did not end",
      );
      const again = await conn.request("parse", { src: big }) as Rec;
      assert.deepEqual(again.ast, first.ast);
      assert.deepEqual(again.ast, JSON.parse(JSON.stringify(parseBash(big))));
      assert.equal(workerThreads(pid), 1, "a new worker took the later source");
      const ran = await conn.request("exec", { src: big }) as Rec;
      assert.deepEqual((ran.value as Rec).out, { $: "str", v: "a\n" });
    } finally {
      await k.cleanup();
    }
  },
);

hostTest(
  "E-4 a short source naming thousands of commands is analysed off the event loop: explain of `a;a;…` (8 KB, 4,096 PATH lookups) kept the kernel from answering any other connection for 2-3 s",
  needsLinux("thread names in /proc/PID/task"),
  async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const pid = k.child.pid;
      const few = await conn.request("explain", { src: "a; a" }) as Rec;
      assert.equal(workerThreads(pid), 0, "a source of a few commands is analysed inline");
      const src = "a;".repeat(INLINE_PARSE_LIMIT / 2);
      assert.ok(src.length <= INLINE_PARSE_LIMIT);
      const many = await conn.request("explain", { src }) as Rec;
      assert.equal(workerThreads(pid), 1, "the source of 4,096 commands ran in the worker");
      assert.deepEqual(many.effects, few.effects);
      assert.equal(many.verdict, few.verdict);
    } finally {
      await k.cleanup();
    }
  },
);

hostTest(
  "E-4 a short source naming more programs than INLINE_LOOKUPS is analysed off the event loop (512 names in 2.4 KB held it 190 ms), while a 40-line script of a few programs repeated stays on it (a worker costs its start and the parser's load again)",
  needsLinux("thread names in /proc/PID/task"),
  async () => {
    const k = await startKernel();
    try {
      const conn = await k.attach();
      const pid = k.child.pid;
      const script = Array.from(
        { length: 40 },
        (_, i) => `if [ -f x${i} ]; then sed -i s/a/b/ x${i} && grep -q b x${i}; fi`,
      ).join("\n");
      const judged = await conn.request("explain", { src: script }) as Rec;
      assert.equal(judged.verdict, "allow", JSON.stringify(judged.effects));
      assert.equal(workerThreads(pid), 0, "the script was analysed on the event loop");
      const names = Array.from({ length: INLINE_LOOKUPS + 1 }, (_, i) => `prog${i}`);
      const many = await conn.request("explain", { src: names.join(";") }) as Rec;
      assert.equal(workerThreads(pid), 1, "the source of many names ran in the worker");
      const few = await conn.request("explain", { src: names.slice(0, 2).join(";") }) as Rec;
      assert.equal(many.verdict, few.verdict);
      const kinds = (r: Rec) => [...new Set((r.effects as Rec[]).map((e) => e.kind))];
      assert.deepEqual(kinds(many), kinds(few));
    } finally {
      await k.cleanup();
    }
  },
);
