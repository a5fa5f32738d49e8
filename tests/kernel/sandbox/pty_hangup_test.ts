/**
 * Closing a sandboxed agent's PTY hangs up its program as the human's close does (K-PTY-5, P-SBX-4)
 * when the program left the terminal's first process group: a shell with job control (`bash -i`,
 * the terminal an agent opens most) puts itself in a group of its own.
 */
import assert from "node:assert/strict";
import type { RpcConnection } from "../../../src/protocol/rpc_client.ts";
import { exec } from "../../_support/exec.ts";
import { startKernelWithAgent } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { PROJECT_AGENT } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { pollUntil } from "../../_support/wait.ts";

/** Runs `body` with the local human and a sandboxed project agent attached to session `work`. */
async function humanAndAgent(
  body: (proj: string, conns: [string, RpcConnection][]) => Promise<void>,
): Promise<void> {
  const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
  try {
    const proj = `${k.box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const human = await k.attach("work");
    await exec(human, `cd ${proj}`);
    await body(proj, [["human", human], ["agent", await k.attach("work", token)]]);
  } finally {
    await k.cleanup();
  }
}

/** Opens `cmd args` on `conn`, waits for `ready` on its screen, closes it: the close's exit. */
async function closeWhenReady(conn: RpcConnection, cmd: string, args: string[]): Promise<Rec> {
  const opened = await conn.request("pty.open", { cmd, args }) as Rec;
  await pollUntil(
    () => conn.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>,
    (r) => (r.screen as string[]).some((row) => row.startsWith("ready")),
  );
  return (await conn.request("pty.close", { pty_id: opened.pty_id }) as Rec).exit as Rec;
}

hostTest(
  "K-PTY-5/P-SBX-4 closing a sandboxed agent's PTY hangs up a program that made its own process group (job control) as the human's close does: its SIGHUP handler runs, the close reports the exit it chose, not SIGKILL",
  NEEDS_TIER_B,
  async () => {
    await humanAndAgent(async (proj, conns) => {
      for (const [who, conn] of conns) {
        const saved = `${proj}/saved-${who}`;
        // setpgrp: a session leader (the human's program) stays in its group; the agent's leaves.
        // It waits in sigsuspend with SIGHUP blocked elsewhere: perl runs a handler between ops,
        // so a hangup that came after its last check and before `sleep 1` began was handled a
        // second later, past the 500 ms grace (SIGKILL); sigsuspend takes it as it waits.
        const script = "use POSIX (); setpgrp; " +
          "POSIX::sigprocmask(POSIX::SIG_BLOCK(), POSIX::SigSet->new(POSIX::SIGHUP())); " +
          `$SIG{HUP} = sub { open(my $f, ">", "${saved}"); print $f "saved\\n"; close($f); ` +
          'exit 0 }; $| = 1; print "ready\\n"; POSIX::sigsuspend(POSIX::SigSet->new) while 1';
        const exit = await closeWhenReady(conn, "perl", ["-e", script]);
        assert.deepEqual(exit, { status: 0, signal: null }, `the ${who}'s close`);
        assert.equal(await Deno.readTextFile(saved), "saved\n", `the ${who}'s handler ran`);
      }
    });
  },
);

hostTest(
  "K-PTY-5/P-SBX-4 closing a sandboxed agent's interactive bash hangs it up as the human's close does (bash -i runs in a process group of its own): the same exit, not SIGKILL",
  NEEDS_TIER_B,
  async () => {
    await humanAndAgent(async (_proj, conns) => {
      const exits: Rec = {};
      for (const [who, conn] of conns) {
        exits[who] = await closeWhenReady(conn, "bash", [
          "--norc",
          "--noprofile",
          "-i",
          "-c",
          // read -t: a SIGHUP that came just before a plain read(2) began was acted on only
          // once input came, never, and the close killed it after the grace
          "echo ready; while :; do read -r -t 0.1 x; done",
        ]);
      }
      assert.notDeepEqual(exits.human, { status: null, signal: "SIGKILL" }, "the human's close");
      assert.deepEqual(exits.agent, exits.human, "the agent's close");
    });
  },
);

hostTest(
  "G-SOCK-8/P-SBX-4 kernel shutdown ends a sandboxed agent's PTY program as the human's: SIGTERM first, so a program that ignores the hangup runs its clean-up before SIGKILL",
  NEEDS_TIER_B,
  async () => {
    const { kernel: k, token } = await startKernelWithAgent("agent:c", PROJECT_AGENT);
    try {
      const proj = `${k.box.dir}/home/proj`;
      await Deno.mkdir(proj);
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const conns: [string, RpcConnection][] = [["human", human], [
        "agent",
        await k.attach("work", token),
      ]];
      for (const [who, conn] of conns) {
        const script = `trap '' HUP; trap 'echo term > ${proj}/saved-${who}; exit 0' TERM; ` +
          "echo ready; while :; do sleep 0.1; done";
        const opened = await conn.request("pty.open", { cmd: "sh", args: ["-c", script] }) as Rec;
        await pollUntil(
          () => conn.request("pty.read", { pty_id: opened.pty_id }) as Promise<Rec>,
          (r) => (r.screen as string[]).includes("ready"),
        );
      }
      assert.equal(await k.stop(), 0);
      for (const [who] of conns) {
        const saved = await Deno.readTextFile(`${proj}/saved-${who}`).catch(() => null);
        assert.equal(saved, "term\n", `the ${who}'s handler ran`);
      }
    } finally {
      await k.cleanup();
    }
  },
);
