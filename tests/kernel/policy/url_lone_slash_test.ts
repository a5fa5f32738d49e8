/**
 * URLs as curl and wget read them where the URL parser reads them otherwise (K-EFF-3a network
 * rows, P-EVAL-1): curl reads one slash (or three) after the scheme as two and connects to `host`
 * of `http:/host/`, where the analysis, finding no `://`, took the operand for a scheme-less `http:`
 * host (the effect named `http:80`, which a `*:80` grant lets through and which an approver reads
 * instead of the destination); curl guesses a scheme-less URL's scheme from its host's first label
 * and wget reads `host:path` as ftp's, where the analysis assumed http's port 80.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent, type TestKernel } from "../../_support/kernel.ts";
import { RUNNER } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { RpcError } from "../../../src/protocol/errors.ts";
import { deriveEffects, type Effect } from "../../../src/kernel/policy/effects.ts";
import { parseBash } from "../../../src/kernel/bash/ast.ts";

/** The `host:port`s `src`'s net_connect effects name. */
function connects(src: string): string[] {
  const effects: Effect[] = deriveEffects(parseBash(src), src, {
    cwd: "/w",
    env: {},
    changedEnv: new Set(),
    home: "/home/me",
    sessionCommands: new Set(),
  }).effects;
  return effects.flatMap((e) => e.kind === "net_connect" ? [`${e.host}:${e.port}`] : []);
}

Deno.test("K-EFF-3a P-EVAL-1 curl's http:/host/ and HTTPS:/host:8443/ name the host curl connects to, not a host 'http'", () => {
  assert.deepEqual(connects("curl -s http:/evil.example:8080/"), ["evil.example:8080"]);
  assert.deepEqual(connects("curl -s HTTPS:/evil.example/"), ["evil.example:443"]);
  assert.deepEqual(connects("curl -s --url https:/evil.example/"), ["evil.example:443"]);
  assert.deepEqual(connects("curl -s https:///evil.example/"), ["evil.example:443"]);
  // a proxy too (curl's default proxy port 1080 when it names none)
  assert.deepEqual(connects("curl -x http:/evil.example:3128 http://a.example/"), [
    "a.example:80",
    "evil.example:3128",
  ]);
  assert.deepEqual(connects("curl -x http:/evil.example http://a.example/"), [
    "a.example:80",
    "evil.example:1080",
  ]);
  // a scheme-less host:port is still one
  assert.deepEqual(connects("curl -s localhost:8080/x"), ["localhost:8080"]);
});

Deno.test("K-EFF-3a P-EVAL-1 an unsandboxed agent granted *:80 is refused, naming it, curl http:/127.0.0.3:Q/ (it reached 127.0.0.3:Q unasked, judged a connection to 'http:80')", async () => {
  const other = Deno.serve(
    { hostname: "127.0.0.3", port: 0, onListen: () => {} },
    () => new Response("other\n"),
  );
  let k: TestKernel | undefined;
  try {
    const agent = await startKernelWithAgent("agent:u", { ...RUNNER, net_connect: ["*:80"] });
    k = agent.kernel;
    const conn = await k.attach("work", agent.token);
    const src = `curl -sS http:/127.0.0.3:${other.addr.port}/`;
    const r = await exec(conn, src, { position: "value" }).then(
      (r) => ({ ran: JSON.stringify((r.value as Rec).out) }),
      (e) => {
        if (!(e instanceof RpcError)) throw e;
        return { refused: e.message };
      },
    );
    assert.ok("refused" in r, `it ran: ${"ran" in r ? r.ran : ""}`);
    assert.match(r.refused, new RegExp(`net_connect "127\\.0\\.0\\.3:${other.addr.port}"`));
  } finally {
    await k?.cleanup();
    await other.shutdown();
  }
});

Deno.test("K-EFF-3a P-EVAL-1 a scheme-less curl URL whose host starts ftp., dict., ldap., imap., smtp. or pop3. is curl's guess of that protocol (curl ftp.localhost connects to port 21), not http's port 80", () => {
  assert.deepEqual(connects("curl -s ftp.evil.example/"), ["ftp.evil.example:21"]);
  assert.deepEqual(connects("curl -s u@FTP.evil.example/f"), ["ftp.evil.example:21"]);
  assert.deepEqual(connects("curl -s ftp.evil.example:8021/"), ["ftp.evil.example:8021"]);
  for (const host of ["smtp.evil.example", "IMAP.evil.example", "pop3.x", "ldap.x", "dict.x"]) {
    assert.deepEqual(connects(`curl -s ${host}`), [], `${host}: opaque, no port 80`);
  }
  // only curl guesses so; a name merely holding such a label is http's
  assert.deepEqual(connects("curl -s www.ftp.example/"), ["www.ftp.example:80"]);
  assert.deepEqual(connects("wget -q --no-netrc ftp.example/"), ["ftp.example:80"]);
});

Deno.test("K-EFF-3a P-EVAL-1 wget's host:path is ftp's (wget evil.example:/x connects to port 21), unless digits alone follow the colon (a port)", () => {
  const wget = (url: string) => connects(`wget -q --no-netrc ${url}`);
  assert.deepEqual(wget("evil.example:/x"), ["evil.example:21"]);
  assert.deepEqual(wget("evil.example:dir/x"), ["evil.example:21"]);
  assert.deepEqual(wget("https:/evil.example/"), ["https:21"]);
  assert.deepEqual(wget("evil.example:8080/x"), ["evil.example:8080"]);
  assert.deepEqual(wget("evil.example:8080"), ["evil.example:8080"]);
  assert.deepEqual(wget("evil.example/x:y"), ["evil.example:80"]);
});

Deno.test("K-EFF-3a P-EVAL-1 curl --proto-default names the scheme of a URL without one (curl --proto-default ftp localhost connects to port 21), instead of http's port 80 or a guess", () => {
  assert.deepEqual(connects("curl --proto-default ftp evil.example/"), ["evil.example:21"]);
  assert.deepEqual(connects("curl --proto-default https ftp.evil.example"), [
    "ftp.evil.example:443",
  ]);
  assert.deepEqual(connects("curl --proto-default HTTPS http://a.example/"), ["a.example:80"]);
  assert.deepEqual(connects("curl --proto-default smtp evil.example"), []);
  assert.deepEqual(connects('curl --proto-default "$P" evil.example'), []);
});
