/**
 * E-4: the analysis worker takes the jobs of different connections in turn, so one connection's
 * pipelined sources do not hold another connection's source behind all of them.
 */
import assert from "node:assert/strict";
import { INLINE_PARSE_LIMIT, LARGE_PARSE_SOURCE } from "../../../src/protocol/limits.ts";
import { kernelTest } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";

const PIPELINED = 10;

kernelTest(
  "E-4 another connection's explain of a 9 KB script is answered after at most a few of one connection's 10 pipelined 64 KB explains, not after all of them (it waited 9 of 10: ~6 s here, a minute behind 100)",
  async (k) => {
    const agent = await k.attach("a");
    const human = await k.attach("h");
    // 32,000 commands in 64 K code units: the ordinary worker's largest job, ~0.6 s of it here.
    const heavy = "a;".repeat(32_000);
    assert.ok(heavy.length + 3 <= LARGE_PARSE_SOURCE);
    let agentDone = 0;
    const explains: Promise<unknown>[] = [];
    for (let i = 0; i < PIPELINED; i++) {
      explains.push(agent.request("explain", { src: `${heavy}#${i}` }).finally(() => agentDone++));
    }
    // Its requests are all read, and their jobs queued, before the human's.
    await agent.request("session.cwd", {});
    const script = "echo ok # " + "x".repeat(INLINE_PARSE_LIMIT) + "\n";
    const explained = await human.request("explain", { src: script }) as Rec;
    const answeredAfter = agentDone;
    assert.equal(explained.verdict, "allow");
    await Promise.all(explains);
    assert.ok(
      answeredAfter <= PIPELINED / 2,
      `the human's explain was answered after ${answeredAfter} of the agent's ${PIPELINED}`,
    );
  },
);
