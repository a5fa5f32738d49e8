/**
 * The scratch directories runs take turns on keep their input files (`src`, `restore`) and fill
 * them anew each run (issue 33): a run must never execute what a longer source left there, nor
 * restore what another session's larger state left (K-BASH-1/4).
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { withKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";

/** Runs `src` in value position: its stdout text. */
async function out(conn: RpcConnection, src: string): Promise<string> {
  const value = (await exec(conn, src, { position: "value" })).value as Rec;
  return String((value.out as Rec).v);
}

withKernel(
  "K-BASH-1/4 a run reads only its own source and its own session's state from a reused scratch directory",
  async (conn, k) => {
    // a session whose restore script is long: many variables and functions
    const big = Array.from(
      { length: 40 },
      (_, i) => `BIG_${i}=${"x".repeat(50)}; big_${i}() { :; }`,
    )
      .join("\n");
    await out(conn, big);
    const other = await k.attach("other");
    for (let i = 0; i < 12; i++) {
      // a long source, then a short one, on both sessions, so each directory serves both
      const long = `echo long${i}; # ${"#".repeat(300)}\necho LEFTOVER`;
      assert.equal(await out(conn, long), `long${i}\nLEFTOVER\n`);
      assert.equal(await out(conn, `echo n${i}`), `n${i}\n`);
      assert.equal(await out(other, long), `long${i}\nLEFTOVER\n`);
      assert.equal(
        await out(other, "compgen -v BIG_ | wc -l; declare -F | grep -c big_; echo end"),
        "0\n0\nend\n",
      );
      assert.equal(await out(other, `echo n${i}`), `n${i}\n`);
    }
    assert.equal(await out(conn, "echo $BIG_39; declare -F big_0"), `${"x".repeat(50)}\nbig_0\n`);
  },
);
