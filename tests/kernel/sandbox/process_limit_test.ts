/**
 * The bound on an agent's processes (`sandbox/process_limit.ts`): a fork loop in a sandboxed run
 * of a kernel run by a user who is not root stops at the sandbox's limit, and the sandbox works on.
 * Linux exempts real root from RLIMIT_NPROC, so the kernel runs here as another uid (this test
 * needs root to start it so, and unprivileged user namespaces for that uid's bwrap).
 */
import assert from "node:assert/strict";
import { processLimit } from "../../../src/kernel/sandbox/process_limit.ts";
import { exec } from "../../_support/exec.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { launchKernel, startKernel } from "../../_support/kernel.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { KERNEL_BIN, sandbox } from "../../_support/sandbox.ts";
import {
  AS_OTHER_USER,
  giveToOtherUser,
  OTHER_UID,
  otherUserMissing,
} from "../../_support/other_user.ts";

/**
 * Forks up to `n` children that sleep, prints how many it forked and the error that stopped it,
 * then kills and reaps them: a bounded loop, never a bomb.
 */
const FORK_LOOP = String.raw`
my ($n, @kids, $err) = (shift);
for (1 .. $n) {
  my $pid = fork;
  if (!defined $pid) { $err = "$!"; last }
  if ($pid == 0) { sleep 120; exit 0 }
  push @kids, $pid;
}
print scalar(@kids), " ", $err // "none", "\n";
kill 'KILL', @kids;
waitpid($_, 0) for @kids;
`;

hostTest(
  "a fork loop in a sandboxed run of a kernel run by a user (not root) stops at the sandbox's process limit, and the sandbox works on",
  await otherUserMissing(NEEDS_TIER_B),
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    await Deno.writeTextFile(`${proj}/fork.pl`, FORK_LOOP);
    const { secret } = await createToken(box, "agent:forks", "forks");
    const policy = await writePolicy(box, { "agent:forks": PROJECT_AGENT });
    const denoDir = await giveToOtherUser(box);
    const socket = box.socket();
    const k = await launchKernel(
      box,
      ["--socket", socket, "--policy", policy],
      socket,
      { DENO_DIR: denoDir },
      [...AS_OTHER_USER, KERNEL_BIN],
    ).catch(async (e) => {
      await box.cleanup();
      throw e;
    });
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.connect();
      const attached = await agent.request("session.attach", { session: "work", token: secret });
      assert.equal(((attached as Rec).caps as Rec).tier, "B", "the agent is sandboxed");
      const limit = processLimit();
      const run = async (src: string) => {
        const r = await exec(agent, src, { position: "value" });
        return (((r.value as Rec).out as Rec).v as string) ?? JSON.stringify(r);
      };
      assert.equal(await run("id -u; ulimit -u"), `${OTHER_UID}\n${limit}\n`);
      const [, forked, err] = /^(\d+) (.*)\n$/.exec(await run(`perl fork.pl ${limit + 100}`)) ?? [];
      // the sandbox's init, the launcher, its spare, bash and perl count too
      assert.ok(Number(forked) < limit && Number(forked) > limit - 20, `forked ${forked}`);
      assert.equal(err, "Resource temporarily unavailable");
      assert.equal(await run("echo still here"), "still here\n");
    } finally {
      await k.cleanup();
    }
  },
);

hostTest(
  "every process of a sandbox with a proxy carries the process limit and the socket filter, set by its forwarder (no prlimit or filter program of its own), and none but its relay opens a Unix socket",
  NEEDS_TIER_B,
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const policy = { "agent:p": { ...PROJECT_AGENT, net_connect: ["registry.npmjs.org:443"] } };
    const { secret } = await createToken(box, "agent:p", "agent:p");
    const k = await startKernel(["--policy", await writePolicy(box, policy)], box);
    try {
      await exec(await k.attach("work"), `cd ${proj}`);
      const agent = await k.attach("work", secret);
      const r = await exec(
        agent,
        "ulimit -u; python3 -c 'print(open(\"/proc/self/status\").read())' | " +
          "grep -c '^Seccomp:.*2'; " +
          "python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>&1 | tail -1; " +
          'printf "%s\\n" "$HTTPS_PROXY"',
        { position: "value" },
      );
      const out = (((r.value as Rec).out as Rec).v as string) ?? JSON.stringify(r);
      const [limit, filtered, unix, proxy] = out.split("\n");
      assert.equal(limit, String(processLimit()));
      assert.equal(filtered, "1");
      assert.match(unix, /Operation not permitted/);
      assert.match(proxy, /^http:\/\/127\.0\.0\.1:\d+$/, "the run is proxied");
    } finally {
      await k.cleanup();
    }
  },
);
