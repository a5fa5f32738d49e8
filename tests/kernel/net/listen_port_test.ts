/**
 * P-NET-1: "`net_listen` grants keep binding inside the namespace". The proxy's loopback listener
 * inside a sandbox took port 3128 whatever the principal's `net_listen` grants named, so an agent
 * granted `net_listen: ["3128"]` (and any `net_connect`) could not listen there: EADDRINUSE.
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { startKernel, type TestKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import { screenWhenDone } from "../../_support/pty_screen.ts";
import type { Rec } from "../../_support/rec.ts";
import { sandbox } from "../../_support/sandbox.ts";

hostTest(
  "P-NET-1 a principal granted net_listen 3128 and 3129 with a net_connect grant listens on " +
    "both inside its sandbox: the proxy's loopback listener takes another port, which its " +
    "proxy variables name",
  NEEDS_TIER_B,
  async () => {
    const grants = { net_connect: ["example.com:443"], net_listen: ["3128", "3129"] };
    const lines = await bindAs(grants, [3128, 3129], { after: 'echo "$HTTP_PROXY"' });
    assert.deepEqual(lines.slice(0, 2), ["3128 bound", "3129 bound"]);
    assert.match(lines[2], /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(!["3128", "3129"].includes(lines[2].split(":")[2]), lines[2]);
  },
);

/**
 * What `python3` prints binding each of `ports` on 127.0.0.1 in a fresh sandbox of an agent with
 * `grants`: in an exec (then what `after` prints, run in it), or in a PTY program.
 */
async function bindAs(
  grants: Rec,
  ports: number[],
  { pty = false, after = "" }: { pty?: boolean; after?: string } = {},
): Promise<string[]> {
  const box = await sandbox();
  const proj = `${box.dir}/home/proj`;
  await Deno.mkdir(proj);
  let k: TestKernel | undefined;
  try {
    const policy = { "agent:n": { ...PROJECT_AGENT, ...grants } };
    const token = (await createToken(box, "agent:n", "agent:n")).secret;
    k = await startKernel(["--policy", await writePolicy(box, policy)], box);
    await exec(await k.attach("work"), `cd ${proj}`);
    const py = `import socket
for port in (${ports.join(", ")},):
    s = socket.socket()
    try:
        s.bind(('127.0.0.1', port)); s.listen(1); print(port, 'bound')
    except OSError as e:
        print(port, e.strerror)`;
    const run = `python3 -c "$(echo ${btoa(py)} | base64 -d)"`;
    const agent = await k.attach("work", token);
    if (!pty) {
      const r = await exec(agent, after === "" ? run : `${run}; ${after}`, { position: "stmt" });
      return (((r.value as Rec).out as Rec).v as string).trimEnd().split("\n");
    }
    const args = ["-c", `${run}; echo done; sleep 30`];
    const opened = await agent.request("pty.open", { cmd: "bash", args }) as Rec;
    const screen = await screenWhenDone(agent, opened.pty_id);
    await agent.request("pty.close", { pty_id: opened.pty_id });
    return screen.filter((row) => /^\d+ /.test(row)).map((row) => row.trimEnd());
  } finally {
    if (k) await k.cleanup();
    else await box.cleanup();
  }
}

hostTest(
  "P-NET-1 a principal granted net_listen 80 binds port 80 inside its sandbox, in its first exec " +
    "and in a PTY program, with or without a net_connect grant (the namespace's floor lowered to " +
    "its lowest granted port: a lower one stays refused)",
  NEEDS_TIER_B,
  async () => {
    const both = ["80 bound", "8080 bound"];
    assert.deepEqual(await bindAs({ net_listen: ["80", "8080"] }, [80, 8080]), both);
    assert.deepEqual(await bindAs({ net_listen: ["80", "8080"] }, [80, 8080], { pty: true }), both);
    assert.deepEqual(
      await bindAs({ net_listen: ["443"], net_connect: ["example.com:443"] }, [443, 80]),
      ["443 bound", "80 Permission denied"],
    );
    assert.deepEqual(await bindAs({ net_listen: ["*"] }, [1]), ["1 bound"]);
  },
);
