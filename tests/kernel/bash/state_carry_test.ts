/**
 * Session state carried from one exec to the next as successive lines of one bash would carry it
 * (K-BASH-4/5), through a real kernel: state a run sets beside things the driver has to live with.
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { withKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";

/** Runs `src` in value position: its stdout text and stderr text. */
async function run(conn: RpcConnection, src: string): Promise<{ out: string; err: string }> {
  const value = (await exec(conn, src, { position: "value" })).value as Rec;
  return { out: String((value.out as Rec).v), err: String((value.err as Rec).v) };
}

withKernel(
  "K-BASH-5 a function written with extglob patterns persists like any other, and later execs restore it without a syntax error",
  async (conn) => {
    await run(
      conn,
      "shopt -s extglob\n" +
        "pick() { case $1 in @(a|b)) echo ab;; !(c)) echo other;; *) echo c;; esac; }\n" +
        "later() { echo later; }; X=kept",
    );
    const next = await run(conn, "shopt -s extglob; pick a; pick z; pick c; later; echo $X");
    assert.equal(next.out, "ab\nother\nc\nlater\nkept\n");
    assert.equal(next.err, "");
    // the option itself never persists (K-BASH-5)
    assert.equal((await run(conn, "shopt -q extglob && echo on || echo off")).out, "off\n");
  },
);
