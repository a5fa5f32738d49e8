/**
 * A redirect the analysis cannot see (K-EFF-3a network rows name each URL operand): ignored until
 * the SPEC decides what `curl -L` / `wget` (which follows redirects by default) are judged to reach.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent, type TestKernel } from "../../_support/kernel.ts";
import { RUNNER } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { RpcError } from "../../../src/protocol/errors.ts";

Deno.test({
  name:
    "SPEC decision needed (K-EFF-3a / P-EVAL-1, unsandboxed principals): curl -L (and wget, which follows redirects unasked) to a granted server that redirects elsewhere reaches that elsewhere, judged a connection to the granted one only; in a sandbox the proxy refuses it, where the analysis is the only wall (sandbox: false, a host without bubblewrap) it is made. Making -L or wget opaque would ask about everyday downloads (github.com's releases redirect to objects.githubusercontent.com). This test expects the redirected connection not made unasked",
  ignore: true,
  fn: async () => {
    const other = Deno.serve(
      { hostname: "127.0.0.3", port: 0, onListen: () => {} },
      () => new Response("other\n"),
    );
    const granted = Deno.serve(
      { hostname: "127.0.0.2", port: 0, onListen: () => {} },
      () => Response.redirect(`http://127.0.0.3:${other.addr.port}/`, 302),
    );
    let k: TestKernel | undefined;
    try {
      const agent = await startKernelWithAgent("agent:u", {
        ...RUNNER,
        net_connect: [`127.0.0.2:${granted.addr.port}`],
      });
      k = agent.kernel;
      const conn = await k.attach("work", agent.token);
      const r = await exec(conn, `curl -sSL http://127.0.0.2:${granted.addr.port}/`, {
        position: "value",
      }).then(
        (r) => ((r.value as Rec).out as Rec).v as string,
        (e) => {
          if (!(e instanceof RpcError)) throw e;
          return `refused: ${e.message}`;
        },
      );
      assert.notEqual(r, "other\n", "the redirect's destination was reached unasked");
    } finally {
      await k?.cleanup();
      await granted.shutdown();
      await other.shutdown();
    }
  },
});
