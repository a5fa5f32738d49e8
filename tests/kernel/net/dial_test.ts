/**
 * How the proxy dials a destination's addresses (P-NET-1, `connectFirst`): the next address is
 * tried beside a slow one, but never more than two at once, so that a name an agent's DNS gives
 * many addresses that never answer costs the kernel no more than two half-open sockets.
 */
import assert from "node:assert/strict";
import { connectFirst } from "../../../src/kernel/net/dial.ts";
import { needsLinux } from "../../_support/host.ts";
import { delay } from "../../_support/wait.ts";
import { deafListeners } from "../../_support/deaf_listener.ts";

/** How many sockets of this host wait for a SYN's answer from `port` (/proc/net/tcp state 02). */
function synSentTo(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  return Deno.readTextFileSync("/proc/net/tcp").split("\n")
    .filter((line) => line.split(/\s+/)[3]?.endsWith(`:${hex}`) && line.split(/\s+/)[4] === "02")
    .length;
}

Deno.test({
  name:
    "P-NET-1 six addresses that never answer are tried two at a time: after a second, two connects wait, not one (the next is started beside a slow one) nor six",
  ignore: needsLinux("/proc/net/tcp") !== null,
  fn: async () => {
    const addresses = [
      "127.0.0.3",
      "127.0.0.4",
      "127.0.0.5",
      "127.0.0.6",
      "127.0.0.7",
      "127.0.0.8",
    ];
    const { port, stop } = await deafListeners(addresses);
    try {
      const before = synSentTo(port);
      const dialing = connectFirst(addresses, port, performance.now() + 2_500);
      await delay(1000);
      assert.equal(synSentTo(port) - before, 2);
      const result = await dialing;
      assert.ok("unreachable" in result);
      // each tried for what was left of the 2.5 s; past it, no other is started
      assert.match(result.unreachable, /^127\.0\.0\.3 did not answer within \d s; 127\.0\.0\.4 /);
      assert.match(result.unreachable, /more addresses not tried/);
    } finally {
      await stop();
    }
  },
});
