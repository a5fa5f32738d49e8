/**
 * What the network proxy of sandboxed runs costs (P-NET-3): an HTTPS download of 200 MB from a
 * local server by curl, sandboxed through the kernel's proxy vs unsandboxed on the host, rounds
 * alternating in one run; and the latency one small HTTPS request gains (curl's own time_total,
 * sandboxed minus unsandboxed, p50/p95), from a server that sends with TCP_NODELAY: Deno.serve's
 * TLS connections do not, and its two writes of a small response wait for a delayed ACK (about
 * 40 ms) often enough to hide what the proxy adds. Prints figures, asserts nothing.
 *
 *   scripts/deno.sh run -A scripts/bench/net_proxy.ts [--rounds 3] [--requests 40]
 */
import https from "node:https";
import { parseArgs } from "node:util";
import type { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { exec } from "../../tests/_support/exec.ts";
import { startKernel } from "../../tests/_support/kernel.ts";
import { createToken, writePolicy } from "../../tests/_support/principals.ts";
import type { Rec } from "../../tests/_support/rec.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";
import { percentile } from "./percentile.ts";
import { selfSignedCert } from "../../tests/_support/tls.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "3" },
    requests: { type: "string", default: "40" },
  },
});
const ROUNDS = Number(values.rounds);
const REQUESTS = Number(values.requests);
const SIZE = 200 * 1024 * 1024;
const CHUNK = new Uint8Array(1024 * 1024).fill(120);

const box = await sandbox();
const proj = `${box.dir}/home/proj`;
await Deno.mkdir(proj);
const tls = await selfSignedCert(proj, "127.0.0.2");
const server = Deno.serve({
  hostname: "127.0.0.2",
  port: 0,
  cert: await Deno.readTextFile(tls.cert),
  key: await Deno.readTextFile(tls.key),
  onListen: () => {},
}, () => {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= SIZE) return controller.close();
      controller.enqueue(CHUNK);
      sent += CHUNK.length;
    },
  });
  return new Response(body, { headers: { "content-length": String(SIZE) } });
});
const port = server.addr.port;
const small = https.createServer({
  cert: await Deno.readTextFile(tls.cert),
  key: await Deno.readTextFile(tls.key),
  noDelay: true,
}, (_req, res) => {
  res.writeHead(200, { "content-length": "3" });
  res.end("ok\n");
});
const smallPort = await new Promise<number>((resolve) =>
  small.listen(0, "127.0.0.2", () => resolve((small.address() as { port: number }).port))
);
const agentPolicy = {
  fs: { read: ["~/proj/**"], write: ["~/proj/**"] },
  net_connect: [`127.0.0.2:${port}`, `127.0.0.2:${smallPort}`],
  proc_spawn: ["*"],
  opaque: "allow",
  auto_apply: "in-grant",
  session_write: true,
  sandbox: true,
};
const token = (await createToken(box, "agent:bench", "bench")).secret;
const k = await startKernel(
  ["--policy", await writePolicy(box, { "agent:bench": agentPolicy })],
  box,
);

/** curl's `-w` figures for `path`, on the host (no proxy) or through the agent's sandbox. */
async function curl(where: "host" | RpcConnection, path: string, format: string): Promise<number> {
  const args = ["-sS", "--cacert", tls.cert, "-o", "/dev/null", "-w", format];
  const url = `https://127.0.0.2:${path === "/small" ? smallPort : port}${path}`;
  if (where === "host") {
    const out = await new Deno.Command("curl", {
      args: [...args, url],
      cwd: proj,
      stderr: "inherit",
    })
      .output();
    return Number(new TextDecoder().decode(out.stdout));
  }
  // opaque to the static check (its `-o /dev/null` is no grant of this agent): the sandbox decides
  const src = `eval "$(echo ${
    btoa(`curl ${args.map((a) => `'${a}'`).join(" ")} ${url}`)
  } | base64 -d)"`;
  const r = (await exec(where, src, { position: "value" })).value as Rec;
  if (r.ok !== true) throw new Error(`sandboxed curl failed: ${JSON.stringify(r.err)}`);
  return Number((r.out as Rec).v ?? r.out);
}

try {
  const human = await k.attach("work");
  await exec(human, `cd ${proj}`);
  const agent = await k.attach("work", token);
  await curl(agent, "/small", "%{time_total}"); // starts the resident and the proxy
  const speeds = { host: [] as number[], sandbox: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    speeds.host.push(await curl("host", "/big", "%{speed_download}"));
    speeds.sandbox.push(await curl(agent, "/big", "%{speed_download}"));
  }
  const mb = (bytesPerS: number) => (bytesPerS / 1024 / 1024).toFixed(0);
  const best = (xs: number[]) => Math.max(...xs);
  console.log(`load: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`);
  console.log(`200 MB HTTPS download, ${ROUNDS} rounds each, alternating (MiB/s):`);
  console.log(`  unsandboxed curl        ${speeds.host.map(mb).join(" ")}`);
  console.log(`  sandboxed, via proxy    ${speeds.sandbox.map(mb).join(" ")}`);
  console.log(
    `  ratio of medians        ${
      (percentile([...speeds.sandbox].sort((a, b) => a - b), 0.5) /
        percentile([...speeds.host].sort((a, b) => a - b), 0.5)).toFixed(2)
    }  (best ${(best(speeds.sandbox) / best(speeds.host)).toFixed(2)})`,
  );
  const host: number[] = [];
  const boxed: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    host.push(await curl("host", "/small", "%{time_total}") * 1000);
    boxed.push(await curl(agent, "/small", "%{time_total}") * 1000);
  }
  host.sort((a, b) => a - b);
  boxed.sort((a, b) => a - b);
  const row = (name: string, xs: number[]) =>
    console.log(
      `  ${name.padEnd(22)} ${percentile(xs, 0.5).toFixed(2).padStart(7)}  ${
        percentile(xs, 0.95).toFixed(2).padStart(7)
      }`,
    );
  console.log(`one small HTTPS request, curl time_total, ${REQUESTS} each (ms):  p50      p95`);
  row("unsandboxed", host);
  row("sandboxed, via proxy", boxed);
  console.log(
    `  added: p50 ${(percentile(boxed, 0.5) - percentile(host, 0.5)).toFixed(2)} ms, p95 ${
      (percentile(boxed, 0.95) - percentile(host, 0.95)).toFixed(2)
    } ms`,
  );
} finally {
  await k.cleanup();
  await server.shutdown();
  small.close();
}
