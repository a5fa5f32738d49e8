// K-BLOB-3 lets any attached principal read any blob it can name, on the ground that hashes are
// disclosed only through scoped journal rows. A short output's hash needs no disclosure: it can
// be guessed, and blob.get answers whether the guess is stored.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { exec } from "../../_support/exec.ts";
import type { Rec } from "../../_support/rec.ts";

const hashOf = (text: string) => createHash("sha256").update(text).digest("hex");

Deno.test({
  name:
    "K-BLOB-3: an agent without journal_read cannot learn the human's 4-digit PIN by asking blob.get for the hash of each of the 10,000 candidates [ignored: needs a SPEC decision: K-BLOB-3 serves any blob to any principal that names it and -32004 only for unknown hashes, so after the human's `cat pin` (4821) the agent's blob.get of sha256(\"4821\\n\") answers the blob and the other 9,999 answer -32004: an existence oracle over every low-entropy output (PINs, yes/no, short tokens); scoping blob.get to blobs of the caller's own rows (or journal_read) closes it]",
  ignore: true,
  fn: async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:g", {
      proc_spawn: ["*"],
      sandbox: false,
    });
    try {
      const human = await k.attach("default");
      await Deno.writeTextFile(`${k.box.dir}/pin`, "4821\n");
      await exec(human, `cat ${k.box.dir}/pin`, { position: "value" });
      const agent = await k.attach("agent-own", token);
      const found: string[] = [];
      for (let base = 0; base < 10000; base += 500) {
        const tries = Array.from({ length: 500 }, (_, i) => String(base + i).padStart(4, "0"));
        const answers = await Promise.allSettled(
          tries.map((pin) => agent.request("blob.get", { hash: hashOf(`${pin}\n`), length: 16 })),
        );
        answers.forEach((a, i) => {
          if (a.status === "fulfilled" && ((a.value as Rec).value as Rec).v === `${tries[i]}\n`) {
            found.push(tries[i]);
          }
        });
      }
      assert.deepEqual(found, [], "the agent found the human's PIN");
    } finally {
      await k.cleanup();
    }
  },
});
