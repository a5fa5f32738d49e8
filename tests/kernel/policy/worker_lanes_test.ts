/**
 * E-4: parsing and analysing one request never keeps the kernel from answering other connections.
 * A source past the inline limit is analysed by a worker; one connection's huge source (hundreds of
 * thousands of words: seconds of parsing) must not hold another connection's ordinary one behind it.
 */
import assert from "node:assert/strict";
import { INLINE_PARSE_LIMIT } from "../../../src/protocol/limits.ts";
import { kernelTest } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";

kernelTest(
  "E-4 another connection's exec of a 9 KB script is answered while one connection's 800 KB parse still runs (it waited the whole parse in the one worker's queue: 15 s for a 2 MB source)",
  async (k) => {
    const agent = await k.attach("a");
    const human = await k.attach("h");
    // 400,000 words in one array assignment: seconds of the bash parser's work.
    const huge = "a=(" + "x ".repeat(400_000) + ")";
    let hugeDone = false;
    const parsing = agent.request("parse", { src: huge }).then(
      () => hugeDone = true,
      () => hugeDone = true,
    );
    // Its job reaches the worker first.
    await agent.request("session.cwd", {});
    const script = "echo ok # " + "x".repeat(INLINE_PARSE_LIMIT) + "\n";
    const ran = await human.request("exec", { src: script, position: "value" }) as Rec;
    assert.deepEqual((ran.value as Rec).out, { $: "str", v: "ok\n" });
    assert.equal(
      hugeDone,
      false,
      "the ordinary script was answered only once the huge parse ended",
    );
    await parsing;
  },
);
