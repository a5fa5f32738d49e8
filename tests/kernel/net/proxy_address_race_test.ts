/**
 * A granted name with an address that never answers before one that does (P-NET-1: tools work
 * through the proxy unchanged): a host whose IPv6 route drops packets gives every dual-stack name
 * such an address first. curl unsandboxed tries the next address after 200 ms (RFC 8305); the
 * proxy must not make the agent wait out the first address's 15 s. The kernel sees its own
 * /etc/hosts (a mount namespace, root only) naming `dual.test` as ::1 (a listener whose backlog
 * is full: connects to it hang) and 127.0.0.2 (an HTTP server on the same port).
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { kernelWithEtc, NEEDS_ROOT } from "../../_support/etc_namespace.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import type { TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

/**
 * Listens on [::1] with a backlog it fills itself (every further connect hangs) and serves HTTP
 * on 127.0.0.2 at the same port; prints the port.
 */
const DEAF_AND_LIVE = String.raw`
import http.server, socket
s = socket.socket(socket.AF_INET6)
s.bind(("::1", 0))
s.listen(0)
port = s.getsockname()[1]
held = [s]
while True:
    c = socket.socket(socket.AF_INET6)
    c.settimeout(0.5)
    try:
        c.connect(("::1", port))
        held.append(c)
    except socket.timeout:
        break
class Live(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"live\n")
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.2", port), Live)
print(port, flush=True)
server.serve_forever()
`;

hostTest(
  "P-NET-1 curl --max-time 10 to a granted name whose first address never answers and whose second does gets the second's answer: the proxy tries the next address 250 ms after the first, beside it (it tried the first for its full 15 s, and curl timed out)",
  NEEDS_TIER_B ?? NEEDS_ROOT,
  async () => {
    const servers = new Deno.Command("python3", {
      args: ["-c", DEAF_AND_LIVE],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const box = await sandbox();
    let k: TestKernel | undefined;
    try {
      const line = await servers.stdout.pipeThrough(new TextDecoderStream()).getReader().read();
      const port = Number(line.value?.trim());
      assert.ok(port > 0, line.value);
      const proj = `${box.dir}/home/proj`;
      await Deno.mkdir(proj);
      // the name, and each of its loopback addresses (a name may lead to one only when granted)
      const grants = ["dual.test", "[::1]", "127.0.0.2"].map((host) => `${host}:${port}`);
      const policy = { "agent:d": { ...PROJECT_AGENT, net_connect: grants } };
      const token = (await createToken(box, "agent:d", "agent:d")).secret;
      const hosts = "127.0.0.1 localhost\n::1 dual.test\n127.0.0.2 dual.test\n";
      k = await kernelWithEtc(box, { hosts }, ["--policy", await writePolicy(box, policy)]);
      await exec(await k.attach("work"), `cd ${proj}`);
      const r = await exec(
        await k.attach("work", token),
        `curl -sS --max-time 10 http://dual.test:${port}/ 2>&1`,
        { position: "value", timeout_ms: 60_000 },
      );
      assert.equal(((r.value as Rec).out as Rec).v, "live\n");
    } finally {
      if (k) await k.cleanup();
      else await box.cleanup();
      servers.kill("SIGKILL");
      await servers.status;
      await servers.stdout.cancel().catch(() => {});
    }
  },
);
