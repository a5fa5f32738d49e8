/** Destination matching of the proxy (P-NET-1): P-EVAL-1's matcher, IP literals, loopback ports. */
import assert from "node:assert/strict";
import {
  canonicalHost,
  destinationGranted,
  netGrantMatches,
  refusedHost,
  resolvedAddressDenied,
  sandboxNet,
} from "../../../src/kernel/net/destinations.ts";

Deno.test("names match grants as P-EVAL-1 matches them: host globs and ports, case-insensitive", () => {
  const grants = ["github.com:443", "*.githubusercontent.com:443", "registry.npmjs.org:*"];
  assert.equal(destinationGranted(grants, "GitHub.com", 443), true);
  assert.equal(destinationGranted(grants, "github.com", 80), false);
  assert.equal(destinationGranted(grants, "raw.githubusercontent.com", 443), true);
  assert.equal(destinationGranted(grants, "evil.com", 443), false);
  assert.equal(destinationGranted(grants, "registry.npmjs.org", 8443), true);
  assert.equal(destinationGranted(grants, "github.com.evil.com", 443), false);
});

Deno.test("a grant naming an internationalized host matches that host, which clients and the URL parser send as punycode (P-EVAL-1's hostglob, written as the human reads it)", () => {
  assert.equal(destinationGranted(["bücher.example:443"], "bücher.example", 443), true);
  assert.equal(destinationGranted(["bücher.example:443"], "xn--bcher-kva.example", 443), true);
  assert.equal(destinationGranted(["*.bücher.example:*"], "www.xn--bcher-kva.example", 80), true);
  assert.equal(destinationGranted(["BÜCHER.example:443"], "xn--bcher-kva.example", 443), true);
  assert.equal(destinationGranted(["bücher.example:443"], "buecher.example", 443), false);
  assert.equal(
    destinationGranted(["bücher.example:443"], "xn--bcher-kva.example.evil", 443),
    false,
  );
});

Deno.test("an IP literal matches only a grant naming that IP, however it is spelled", () => {
  assert.equal(destinationGranted(["*:443"], "10.0.0.1", 443), false);
  assert.equal(destinationGranted(["*:*"], "169.254.169.254", 80), false);
  assert.equal(destinationGranted(["*:*"], "[::1]", 80), false);
  assert.equal(destinationGranted(["127.0.0.2:80"], "127.0.0.2", 80), true);
  assert.equal(destinationGranted(["127.0.0.2:80"], "2130706434", 80), true);
  assert.equal(destinationGranted(["127.0.0.2:80"], "0x7f.0.0.2", 80), true);
  assert.equal(destinationGranted(["[::1]:5432"], "0:0::1", 5432), true);
  assert.equal(destinationGranted(["*.0.0.1:80"], "127.0.0.1", 80), false);
  assert.equal(canonicalHost("a b"), null);
  assert.equal(destinationGranted(["*:*"], "user@host", 80), false);
});

Deno.test("a host is at most a DNS name's 253 characters (a trailing dot aside); a refusal names a non-host in at most 253", () => {
  const name = `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`;
  assert.equal(name.length, 253);
  assert.equal(canonicalHost(name), name);
  assert.equal(canonicalHost(`${name}.`), `${name}.`);
  assert.equal(canonicalHost(`x${name}`), null);
  assert.equal(refusedHost(`x${name}`).length <= 253, true);
  assert.equal(refusedHost(`x${name}`).startsWith("xaaa"), true);
  assert.equal(refusedHost(`x${name}`).endsWith("ddd"), true);
  assert.equal(refusedHost("\x1b]0;x\x07"), "%1B%5D0%3Bx%07");
});

Deno.test("a granted name may not lead to the host's own or link-local addresses unless granted so", () => {
  assert.equal(
    resolvedAddressDenied(["*.example.com:443"], "a.example.com", "127.0.0.1", 443),
    true,
  );
  assert.equal(resolvedAddressDenied(["*:80"], "meta.example", "169.254.169.254", 80), true);
  assert.equal(resolvedAddressDenied(["*:80"], "x.example", "::ffff:127.0.0.1", 80), true);
  assert.equal(resolvedAddressDenied(["*:443"], "github.com", "140.82.121.4", 443), false);
  assert.equal(resolvedAddressDenied(["localhost:8080"], "localhost", "127.0.0.1", 8080), false);
  assert.equal(resolvedAddressDenied(["*:8080"], "localhost", "127.0.0.1", 8080), true);
  assert.equal(
    resolvedAddressDenied(["db.local:5432", "127.0.0.1:5432"], "db.local", "127.0.0.1", 5432),
    false,
  );
});

Deno.test("loopback grants with an explicit port are forwarded, localhost on both addresses; the proxy's port avoids them", () => {
  // no grant: the proxy still, refusing all (M-ONB-3), and nothing forwarded
  assert.deepEqual(sandboxNet("agent:a", []), {
    principal: "agent:a",
    grants: [],
    port: 3128,
    forwards: [],
  });
  const net = sandboxNet("agent:a", [
    "127.0.0.1:3128",
    "localhost:8080",
    "[::1]:5432",
    "127.0.0.1:*",
    "127.0.0.2:80",
    "github.com:443",
  ])!;
  assert.deepEqual(net.forwards, [
    { listen: "127.0.0.1", port: 3128, host: "127.0.0.1" },
    { listen: "127.0.0.1", port: 8080, host: "localhost" },
    { listen: "::1", port: 8080, host: "localhost" },
    { listen: "::1", port: 5432, host: "::1" },
  ]);
  assert.equal(net.port, 3129);
});

Deno.test({
  name:
    "a grant written as an IPv4 range (10.0.*.*:443, 192.168.1.*:80) reaches the addresses of that range and no name [ignored: defect found by the probe round; needs a SPEC decision: P-EVAL-1's `*` matches any characters and P-NET-1 matches an IP literal only against a grant naming that IP, so such a grant reaches no address of its range and every name that starts alike: an agent granted 10.0.*.*:443 reaches 10.0.x.attacker.example, wherever its owner's DNS points it]",
  ignore: true,
  fn: () => {
    assert.equal(destinationGranted(["10.0.*.*:443"], "10.0.3.4", 443), true);
    assert.equal(destinationGranted(["192.168.1.*:80"], "192.168.1.20", 80), true);
    assert.equal(destinationGranted(["10.0.*.*:443"], "10.0.x.attacker.example", 443), false);
    assert.equal(destinationGranted(["192.168.1.*:80"], "192.168.1.evil.example", 80), false);
  },
});

Deno.test("P-NET-1 a granted name may not lead to the host's own addresses (unless granted), while localhost granted as a name still leads to loopback, one of them", () => {
  const own = new Set(["127.0.0.1", "[::1]", "192.0.2.2", "[fd00::2]"]);
  assert.equal(resolvedAddressDenied(["*:80"], "own.test", "192.0.2.2", 80, own), true);
  assert.equal(resolvedAddressDenied(["*:80"], "own.test", "fd00::2", 80, own), true);
  assert.equal(resolvedAddressDenied(["*:80"], "other.test", "192.0.2.9", 80, own), false);
  const granted = ["own.test:80", "192.0.2.2:80"];
  assert.equal(resolvedAddressDenied(granted, "own.test", "192.0.2.2", 80, own), false);
  assert.equal(resolvedAddressDenied(["localhost:*"], "localhost", "127.0.0.1", 80, own), false);
  assert.equal(resolvedAddressDenied(["localhost:*"], "localhost", "::1", 80, own), false);
});

Deno.test("P-NET-1 an IPv6 form carrying an IPv4 address (NAT64, 6to4, IPv4-compatible, -mapped, -translated) is judged by that address: loopback and metadata forms are refused, public ones pass, and a localhost grant does not lead to a NAT64 form of loopback", () => {
  const denied = (address: string) => resolvedAddressDenied(["*:80"], "x.test", address, 80);
  for (
    const address of [
      "64:ff9b::7f00:1",
      "64:ff9b::a9fe:a9fe",
      "::127.0.0.1",
      "::ffff:0:127.0.0.1",
      "2002:a9fe:a9fe::1",
      "64:ff9b::6464:64c8",
      "fd00:a9fe:a9fe::1",
      // and as before: unspecified, multicast, broadcast, link-local
      "0.0.0.0",
      "::",
      "224.0.0.251",
      "255.255.255.255",
      "ff02::1",
      "fe80::1",
    ]
  ) assert.equal(denied(address), true, address);
  for (const address of ["64:ff9b::5db8:d822", "2002:5db8:d822::1", "::ffff:93.184.216.34"]) {
    assert.equal(denied(address), false, address);
  }
  assert.equal(
    resolvedAddressDenied(["localhost:80"], "localhost", "64:ff9b::7f00:1", 80),
    true,
  );
});

Deno.test({
  name:
    "a granted name leads to private addresses (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) only when a grant names them [ignored: needs a SPEC decision: P-NET-1 says a grant reaches the destinations whose host:port matches it and is silent on where a granted name may resolve; the proxy refuses loopback, link-local, metadata and the host's own addresses and lets private ones through, as sandbox-runtime does by default (its deniedResolvedAddresses opts in), so an intranet name can be granted; but whoever controls a wildcard grant's DNS (*.nip.io, a registrable domain's sub-names) then reaches any host of the human's LAN: 10-0-0-5.nip.io, granted by *.nip.io:*, reaches 10.0.0.5]",
  ignore: true,
  fn: () => {
    for (const address of ["10.0.0.5", "172.16.1.1", "192.168.1.1", "100.64.0.1", "fd12::1"]) {
      assert.equal(resolvedAddressDenied(["*.nip.io:*"], "a.nip.io", address, 80), true, address);
    }
  },
});

Deno.test("P-EVAL-1 P-NET-1 a name written fully qualified (its root's dot: granted.example.) is the name a grant names, in the analysis and in the proxy alike; two dots are no name of it", () => {
  assert.equal(destinationGranted(["granted.example:80"], "granted.example.", 80), true);
  assert.equal(destinationGranted(["*.example.com:443"], "a.example.com.", 443), true);
  assert.equal(destinationGranted(["granted.example.:80"], "granted.example", 80), true);
  assert.equal(destinationGranted(["granted.example:80"], "granted.example..", 80), false);
  assert.equal(destinationGranted(["granted.example:80"], "granted.example.evil.", 80), false);
  assert.equal(netGrantMatches("granted.example:80", "granted.example.", 80), true);
});

Deno.test("P-NET-1 a loopback grant written fully qualified (localhost.:5432) is localhost's: its port is forwarded and the proxy lets localhost lead to loopback, as the analysis already judged localhost:5432 in grant", () => {
  assert.equal(netGrantMatches("localhost.:5432", "localhost", 5432), true, "the analysis");
  assert.deepEqual(sandboxNet("agent:a", ["localhost.:5432"])!.forwards, [
    { listen: "127.0.0.1", port: 5432, host: "localhost" },
    { listen: "::1", port: 5432, host: "localhost" },
  ]);
  for (const address of ["127.0.0.1", "::1"]) {
    assert.equal(resolvedAddressDenied(["localhost.:5432"], "localhost", address, 5432), false);
    assert.equal(resolvedAddressDenied(["localhost.:*"], "localhost", address, 80), false);
  }
  // still only loopback, and only the granted port
  assert.equal(
    resolvedAddressDenied(["localhost.:5432"], "localhost", "169.254.169.254", 5432),
    true,
  );
  assert.equal(resolvedAddressDenied(["localhost.:5432"], "localhost", "127.0.0.1", 5433), true);
});

Deno.test("P-EVAL-1 P-NET-1 a grant's port written with leading zeros (localhost:05432, registry.npmjs.org:0443), which the policy accepts and which made a forward of 5432, is that port to the analysis and the proxy too", () => {
  assert.equal(netGrantMatches("registry.npmjs.org:0443", "registry.npmjs.org", 443), true);
  assert.equal(destinationGranted(["registry.npmjs.org:0443"], "registry.npmjs.org", 443), true);
  assert.equal(destinationGranted(["localhost:05432"], "localhost", 5432), true);
  assert.equal(resolvedAddressDenied(["localhost:05432"], "localhost", "127.0.0.1", 5432), false);
  assert.deepEqual(sandboxNet("agent:a", ["localhost:05432"])!.forwards.map((f) => f.port), [
    5432,
    5432,
  ]);
  assert.equal(destinationGranted(["localhost:05432"], "localhost", 543), false);
  assert.equal(destinationGranted(["registry.npmjs.org:0"], "registry.npmjs.org", 443), false);
});
