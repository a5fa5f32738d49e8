/**
 * The proxy's name lookups (P-NET-1) run on the kernel's small pool of blocking threads (Deno's:
 * 32, shared with its file operations): one agent's lookups of a granted name whose DNS does not
 * answer must not hold every thread, so that another session's granted connection (its own
 * lookup) and the kernel's file work go on. The kernel runs in a mount namespace of its own whose
 * /etc/resolv.conf names a DNS server that never answers (root only: it binds UDP port 53).
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { kernelWithEtc, NEEDS_ROOT } from "../../_support/etc_namespace.ts";
import type { TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";
import { waitUntil } from "../../_support/wait.ts";

/** A DNS server that reads every query and answers none (python3, as root: port 53). */
const SILENT_DNS = String.raw`
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 53))
print("ready", flush=True)
while True:
    s.recvfrom(2048)
`;

/**
 * Opens N CONNECTs to N names below LABEL.slow.test through the proxy at PORT and waits for their
 * answers (`slow.py N PORT LABEL`).
 */
const SLOW_CONNECTS = String.raw`
import socket, sys, threading
def one(i):
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
        s.sendall(b"CONNECT n%d.%s.slow.test:80 HTTP/1.1\r\nHost: x\r\n\r\n" % (i, sys.argv[3].encode()))
        s.settimeout(120)
        s.recv(100)
    except Exception:
        pass
threads = [threading.Thread(target=one, args=(i,)) for i in range(int(sys.argv[1]))]
for t in threads: t.start()
print("opened", flush=True)
for t in threads: t.join()
`;

const MISSING = NEEDS_TIER_B ?? NEEDS_ROOT;

/**
 * Whether another session's agent still reaches its granted localhost server through the proxy
 * while `slow` agents (each in a session of its own) hold `each` connections to granted names
 * whose DNS never answers.
 */
async function otherServedBeside(slow: number, each: number): Promise<void> {
  const box = await sandbox();
  const dnsAddress = "127.0.0.77";
  const dns = new Deno.Command("python3", {
    args: ["-c", SILENT_DNS, dnsAddress],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("hello\n"),
  );
  let k: TestKernel | undefined;
  try {
    const line = await dns.stdout.pipeThrough(new TextDecoderStream()).getReader().read();
    assert.equal(line.value?.trim(), "ready");
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const policy: Rec = {
      // a port wildcard: no raw forward, the proxy (and its lookup of localhost) is the way
      "agent:other": { ...PROJECT_AGENT, net_connect: ["localhost:*"] },
    };
    for (let i = 0; i < slow; i++) {
      policy[`agent:slow${i}`] = { ...PROJECT_AGENT, net_connect: ["*.slow.test:80"] };
    }
    const other = (await createToken(box, "agent:other", "agent:other")).secret;
    // the kernel's own view of /etc/resolv.conf: the silent server
    k = await kernelWithEtc(box, {
      "resolv.conf": `nameserver ${dnsAddress}\noptions timeout:30 attempts:1\n`,
    }, ["--policy", await writePolicy(box, policy)]);
    await Deno.writeTextFile(`${proj}/slow.py`, SLOW_CONNECTS);
    for (let i = 0; i < slow; i++) {
      await exec(await k.attach(`slow${i}`), `cd ${proj}`);
      const token = (await createToken(box, `agent:slow${i}`, `agent:slow${i}`)).secret;
      const slowAgent = await k.attach(`slow${i}`, token);
      const started = await exec(slowAgent, `python3 slow.py ${each} "\${HTTP_PROXY##*:}" a${i}`, {
        background: true,
      });
      const task = started.task as string;
      // its connections are in: each waits on its lookup
      await waitUntil(async () => {
        const r = await slowAgent.request("task.output", { task }) as Rec;
        return String(r.data).includes("opened");
      }, 30000);
    }
    await exec(await k.attach("two"), `cd ${proj}`);
    const otherAgent = await k.attach("two", other);
    const r = await exec(
      otherAgent,
      `curl -sS --max-time 20 http://localhost:${server.addr.port}/ 2>&1`,
      { position: "value", timeout_ms: 60000 },
    );
    assert.equal(((r.value as Rec).out as Rec).v, "hello\n", JSON.stringify(r.value));
  } finally {
    if (k) await k.cleanup();
    else await box.cleanup();
    try {
      dns.kill("SIGKILL");
    } catch {
      // gone
    }
    await dns.status;
    await dns.stdout.cancel().catch(() => {});
    await server.shutdown();
  }
}

hostTest(
  "P-NET-1 an agent's 40 connections to 40 granted names whose DNS never answers leave the proxy's lookups to others: another session's agent still reaches its granted localhost server through the proxy",
  MISSING,
  () => otherServedBeside(1, 40),
);

Deno.test({
  name:
    "P-NET-1 four agents holding two lookups each of granted names whose DNS never answers leave another agent's lookups a place [ignored: needs a SPEC decision: P-NET-1 says nothing of how the proxy shares its lookups; they hold the runtime's blocking threads until the resolver gives up, so the proxy runs 8 at once and 2 per principal, and four principals whose names DNS never answers (resolv.conf timeout 30 s) leave a fifth principal's lookup of localhost (a name /etc/hosts answers) waiting past the proxy's 15 s: run un-ignored, curl got \"shoal: cannot connect to localhost:PORT: found no address for localhost (its lookup failed or took over 15 s)\"; with three such principals it got hello. The same question as proxy_share_test's four principals holding their connections]",
  ignore: true,
  fn: () => otherServedBeside(4, 2),
});
