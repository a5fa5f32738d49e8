/**
 * Big stdout through the whole stack: a real kernel and a real facade in a temp XDG sandbox, the
 * MCP SDK client calling `shoal_exec` with `head -c N /dev/zero | tr '\0' a`. For each size it
 * prints the wall time of the call, the throughput, the bytes the client received, the peak RSS
 * (VmHWM, reset before each run) of the kernel and of the facade, and `sha256sum` of the same
 * bytes as the floor, plus whether the kernel's stdout hash matches it.
 *
 *   deno run -A scripts/bench/big_output.ts [BYTES...]   (default: 200000000 1073741824)
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { memoryKiB, processLive } from "../../tests/_support/proc.ts";
import { spawnKernel } from "../../tests/_support/kernel.ts";
import { REPO, sandbox } from "../../tests/_support/sandbox.ts";
import { CountingStdio } from "../../tests/_support/stdio_client.ts";
import { delay } from "../../tests/_support/wait.ts";

const MB = 1e6;
const MiB = 1024 * 1024;
const STARTUP_MS = 30000;
const CALL_TIMEOUT_MS = 3600_000;

const sizes = Deno.args.length > 0 ? Deno.args.map(Number) : [200_000_000, 1024 * MiB];
if (sizes.some((n) => !Number.isInteger(n) || n <= 0)) {
  console.error("usage: big_output.ts [BYTES...]");
  Deno.exit(2);
}

/** Resets VmHWM of `pid` to its current RSS (Linux clear_refs 5); false when not permitted. */
function resetPeak(pid: number): boolean {
  try {
    Deno.writeTextFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Pids of deno processes whose command line contains every one of `parts`. */
function denoPids(...parts: string[]): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
      const exe = Deno.readLinkSync(`/proc/${entry.name}/exe`);
      if (/\/deno$/.test(exe) && parts.every((p) => cmdline.includes(p))) {
        pids.push(Number(entry.name));
      }
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** Polls `check` every 20 ms for at most `ms`. */
async function waitFor<T>(check: () => T | null, ms: number, what: string): Promise<T> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await delay(20)) {
    const found = check();
    if (found !== null) return found;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** `sha256sum` of the same bytes, from the same pipeline: [seconds, hex]. */
async function floor(bytes: number): Promise<[number, string]> {
  const start = performance.now();
  const out = await new Deno.Command("sh", {
    args: ["-c", `head -c ${bytes} /dev/zero | tr '\\0' a | sha256sum`],
    stdout: "piped",
  }).output();
  return [(performance.now() - start) / 1000, new TextDecoder().decode(out.stdout).split(" ")[0]];
}

/** SIGTERM, then SIGKILL after 3 s, of a pid we started; waits for it to go. */
async function stop(pid: number): Promise<void> {
  if (!processLive(pid)) return;
  try {
    Deno.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  for (let i = 0; i < 150 && processLive(pid); i++) await delay(20);
  if (processLive(pid)) Deno.kill(pid, "SIGKILL");
}

/** VmRSS or VmHWM of `pid` in bytes (this bench reads /proc: Linux only). */
function memory(pid: number, field: "rss" | "hwm"): number {
  return memoryKiB(pid)[field]! * 1024;
}

// The test sandbox: temp XDG dirs and HOME, keeping the caller's Deno cache.
const box = await sandbox();
const socket = box.socket();
const env = box.env({ SHOAL_SOCKET: socket });

const kernel = spawnKernel(box, ["--socket", socket], { SHOAL_SOCKET: socket });
let kernelLog = "";
const kernelReading = (async () => {
  for await (const t of kernel.stderr.pipeThrough(new TextDecoderStream())) kernelLog += t;
})();
const transport = new CountingStdio(env);
const client = new Client({ name: "shoal-bench-big-output", version: "0" });
try {
  await waitFor(() => kernelLog.includes("ready") || null, STARTUP_MS, "the kernel");
  const kernelPid = await waitFor(() => denoPids(socket, "main.ts")[0] ?? null, 5000, "pid");
  await client.connect(transport);
  const facadePid = await waitFor(
    () => denoPids(`${REPO}/main.ts`, socket).find((p) => p !== kernelPid) ?? null,
    5000,
    "the facade pid",
  );
  const resettable = resetPeak(kernelPid) && resetPeak(facadePid);
  console.log(
    `kernel pid ${kernelPid}, facade pid ${facadePid}`,
  );
  console.log(`peak RSS ${resettable ? "reset before each run" : "since process start"}`);
  for (const bytes of sizes) {
    await delay(500);
    if (resettable) {
      resetPeak(kernelPid);
      resetPeak(facadePid);
    }
    const kernelBefore = memory(kernelPid, "rss");
    const facadeBefore = memory(facadePid, "rss");
    const before = transport.received;
    const start = performance.now();
    const reply = await client.callTool(
      { name: "shoal_exec", arguments: { src: `head -c ${bytes} /dev/zero | tr '\\0' a` } },
      undefined,
      { timeout: CALL_TIMEOUT_MS, maxTotalTimeout: CALL_TIMEOUT_MS },
    ) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    const seconds = (performance.now() - start) / 1000;
    const received = transport.received - before;
    const kernelPeak = memory(kernelPid, "hwm");
    const facadePeak = memory(facadePid, "hwm");
    const sc = reply.structuredContent ?? {};
    const out = ((sc.value as Record<string, unknown> | undefined)?.out ?? {}) as Record<
      string,
      unknown
    >;
    const journal = await client.callTool({
      name: "shoal_journal",
      arguments: { head: "head", limit: 1 },
    }) as { structuredContent?: { items?: { outputs: { kind: string; hash: string }[] }[] } };
    const stdoutHash = journal.structuredContent?.items?.[0]?.outputs
      .find((o) => o.kind === "stdout")?.hash;
    const [floorSeconds, floorHex] = await floor(bytes);
    const rate = (s: number) => `${(bytes / MB / s).toFixed(0)} MB/s`;
    console.log("");
    console.log(`stdout bytes      ${bytes} (${(bytes / MiB).toFixed(0)} MiB)`);
    console.log(
      `shoal_exec        ${seconds.toFixed(2)} s  ${rate(seconds)}  isError ${reply.isError}, ` +
        `out ${out.$}/${out.of} n ${out.n}`,
    );
    console.log(`client received   ${received} bytes`);
    const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
    console.log(`kernel peak RSS   ${mib(kernelPeak)}  (RSS before the call ${mib(kernelBefore)})`);
    console.log(`facade peak RSS   ${mib(facadePeak)}  (RSS before the call ${mib(facadeBefore)})`);
    console.log(
      `sha256sum floor   ${floorSeconds.toFixed(2)} s  ${rate(floorSeconds)}  ` +
        `(same pipeline into sha256sum)`,
    );
    console.log(`hash match        ${stdoutHash === `sha256:${floorHex}`}`);
  }
} catch (e) {
  console.error(`bench failed: ${e}\n--- kernel stderr\n${kernelLog}\n--- facade stderr`);
  console.error(transport.stderr);
  Deno.exitCode = 1;
} finally {
  await client.close().catch(() => {});
  if (transport.child) await stop(transport.child.pid);
  for (const pid of denoPids(socket)) await stop(pid);
  await stop(kernel.pid);
  await kernel.status;
  await kernelReading;
  await box.cleanup();
}
