/**
 * A URL's `\` (K-EFF-3a network rows, P-EVAL-1): the URL parser reads it as `/` in an http(s)
 * URL, ending the authority, while curl and wget read it as a character of the userinfo, so in
 * `https://granted.example\@other.example/` the analysis named granted.example and the tools
 * connected to other.example. Where the analysis is the only wall (`"sandbox": false`, a host
 * without bubblewrap) that connection was made unasked.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent, type TestKernel } from "../../_support/kernel.ts";
import { RUNNER } from "../../_support/principals.ts";
import { RpcError } from "../../../src/protocol/errors.ts";
import type { Rec } from "../../_support/rec.ts";
import { deriveEffects, type Effect } from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";

/** The `host:port`s `src`'s net_connect effects name, and whether it is opaque. */
function connects(src: string): string[] {
  const derived = deriveEffects(parseBash(src), src, {
    cwd: "/w",
    env: {},
    changedEnv: new Set(),
    home: "/home/me",
    sessionCommands: new Set(),
  });
  const effects: Effect[] = derived.effects;
  return effects.flatMap((e) =>
    e.kind === "net_connect" ? [`${e.host}:${e.port}`] : e.kind === "opaque" ? ["opaque"] : []
  );
}

Deno.test("K-EFF-3a P-EVAL-1 a backslash in a URL's authority names the host curl and wget connect to (the one after the userinfo), not the one before it", () => {
  const url = "'https://registry.npmjs.org\\@evil.example/'";
  assert.deepEqual(connects(`curl -s ${url}`), ["evil.example:443"]);
  assert.deepEqual(connects(`wget --no-netrc ${url}`), ["evil.example:443"]);
  assert.deepEqual(connects("curl 'http://a.example:8080\\@b.example:81/x'"), ["b.example:81"]);
  // a backslash in the host itself names no host: what the tools do with it is not followed
  assert.deepEqual(connects("curl 'https://evil.example\\.registry.npmjs.org/'"), ["opaque"]);
  // after the authority it is the path's: the host is as before
  assert.deepEqual(connects("curl 'https://registry.npmjs.org/a\\b'"), ["registry.npmjs.org:443"]);
});

Deno.test("K-EFF-3a P-EVAL-1 an unsandboxed agent granted one destination is asked about, not let through to, another named after a backslash: curl 'http://127.0.0.2:P\\@127.0.0.3:Q/' reached 127.0.0.3:Q unasked", async () => {
  const granted = Deno.serve(
    { hostname: "127.0.0.2", port: 0, onListen: () => {} },
    () => new Response("granted\n"),
  );
  const other = Deno.serve(
    { hostname: "127.0.0.3", port: 0, onListen: () => {} },
    () => new Response("other\n"),
  );
  let k: TestKernel | undefined;
  try {
    const agent = await startKernelWithAgent("agent:u", {
      ...RUNNER,
      net_connect: [`127.0.0.2:${granted.addr.port}`],
    });
    k = agent.kernel;
    const conn = await k.attach("work", agent.token);
    const direct = await exec(conn, `curl -sS http://127.0.0.2:${granted.addr.port}/`, {
      position: "value",
    });
    assert.equal(((direct.value as Rec).out as Rec).v, "granted\n", JSON.stringify(direct));
    const src = `curl -sS 'http://127.0.0.2:${granted.addr.port}\\@127.0.0.3:${other.addr.port}/'`;
    const r = await exec(conn, src, { position: "value" }).then(
      (r) => ({ ran: JSON.stringify(r) }),
      (e) => {
        if (!(e instanceof RpcError)) throw e;
        return { refused: { message: e.message, data: e.data } };
      },
    );
    assert.ok("refused" in r, `it ran: ${"ran" in r ? r.ran : ""}`);
    assert.match(JSON.stringify(r.refused), new RegExp(`127\\.0\\.0\\.3:${other.addr.port}`));
  } finally {
    await k?.cleanup();
    await granted.shutdown();
    await other.shutdown();
  }
});

Deno.test("K-EFF-3a P-EVAL-1 curl's --alt-svc and --hsts caches, which it reads before connecting, are not followed: an alt-svc entry took curl --alt-svc f https://registry.npmjs.org/ to localhost:18799 (seen), an HSTS one takes http://h/ to h:443, where the analysis named registry.npmjs.org:443 and h:80", () => {
  assert.deepEqual(connects("curl --alt-svc alt.txt https://registry.npmjs.org/"), ["opaque"]);
  assert.deepEqual(connects("curl --hsts hsts.txt http://h.example/"), ["opaque"]);
});
