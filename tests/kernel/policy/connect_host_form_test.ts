/**
 * The one form a `net_connect` effect names its host in (K-EFF-1, P-EVAL-1, P-NET-1): the URL
 * parser's, whether the host comes from a URL or a bash `/dev/tcp` path, so a grant, the proxy
 * and an approved plan's run all see one spelling of each destination (an IPv6 literal
 * bracketed, `[::1]`, never bare, `::1`, which reads as a grant `::1:P` only by accident).
 */
import assert from "node:assert/strict";
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
  return effects.flatMap((e) => e.kind === "net_connect" ? [`${e.host} ${e.port}`] : []);
}

Deno.test("K-EFF-1 P-EVAL-1 an IPv6 literal is named bracketed from a /dev/tcp path as from a URL", () => {
  assert.deepEqual(connects("echo x > /dev/tcp/::1/80"), ["[::1] 80"]);
  assert.deepEqual(connects("curl -g 'http://[::1]:80/'"), ["[::1] 80"]);
  assert.deepEqual(connects("echo x > /dev/tcp/0:0:0::1/5432"), ["[::1] 5432"]);
  assert.deepEqual(connects("echo x > /dev/udp/FE80::A/53"), ["[fe80::a] 53"]);
  // one destination, one effect, however the command spells it
  assert.deepEqual(
    connects("echo x > /dev/tcp/::1/80; curl -g 'http://[0::1]/'"),
    ["[::1] 80"],
  );
});

Deno.test("K-EFF-1 P-EVAL-1 a /dev/tcp path's host is named as the URL parser names it: lower case, an IPv4 number dotted (bash's resolver reads 2130706433 and 0x7f.1 as 127.0.0.1 too)", () => {
  assert.deepEqual(connects("echo x > /dev/tcp/LocalHost/80"), ["localhost 80"]);
  assert.deepEqual(connects("echo x > /dev/tcp/2130706433/80"), ["127.0.0.1 80"]);
  assert.deepEqual(connects("echo x > /dev/tcp/0x7f.1/80"), ["127.0.0.1 80"]);
  assert.deepEqual(connects("echo x > /dev/tcp/example.com/443"), ["example.com 443"]);
  // bash's resolver maps no Unicode: the name it asks for is not example.com
  assert.deepEqual(connects("echo x > /dev/tcp/ｅｘａｍｐｌｅ.com/80"), ["ｅｘａｍｐｌｅ.com 80"]);
  assert.deepEqual(connects("curl http://ｅｘａｍｐｌｅ.com/"), ["example.com 80"]);
});
