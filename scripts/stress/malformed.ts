/**
 * Memory after malformed input (issue 13, defect 3): the same 2,000 random, truncated, junk,
 * invalid-UTF-8 and deeply nested frames, sent twice on one kernel connection and twice on one
 * facade's stdin. Every frame must get exactly one error response and the process must stay
 * alive; the RSS is printed before, after round 1 and after round 2, with the bounds (round 1
 * adds < 64 MiB, round 2 adds < 8 MiB). A large round-1 rise that round 2 does not repeat is
 * heap slack (V8 keeps what it grew); growth in every round is a leak.
 *
 * More rounds show whether the RSS levels off (slack) or keeps rising (a leak).
 *
 *   deno run -A scripts/stress/malformed.ts [FRAMES [ROUNDS]]   (default 2000 2)
 */
import { kernelPid, processLive, rssBytes } from "../../tests/_support/proc.ts";
import { startKernel } from "../../tests/_support/kernel.ts";
import { RawFacade } from "../../tests/_support/facade.ts";
import { sandbox } from "../../tests/_support/sandbox.ts";

const MiB = 1024 * 1024;
const ROUND1_BOUND = 64 * MiB;
const ROUND2_BOUND = 8 * MiB;
const ANSWER_TIMEOUT_MS = 120_000;

const count = Number(Deno.args[0] ?? 2000);
const rounds = Number(Deno.args[1] ?? 2);
if (![count, rounds].every((n) => Number.isInteger(n) && n > 0) || rounds < 2) {
  console.error("usage: malformed.ts [FRAMES [ROUNDS ≥ 2]]");
  Deno.exit(2);
}

const encoder = new TextEncoder();

/** A small deterministic generator (xorshift32): both rounds and both targets get the same frames. */
function random(seed: number): (n: number) => number {
  let x = seed;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

/** The frames, each ending in one newline, none holding another; each one gets one error answer. */
function frames(n: number, method: string): Uint8Array[] {
  const rnd = random(0x5eed);
  const out: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    let body: Uint8Array;
    switch (i % 6) {
      case 0: { // random bytes, never JSON (a leading control byte)
        body = new Uint8Array(1 + rnd(16384));
        for (let j = 0; j < body.length; j++) body[j] = rnd(256);
        body[0] = 1;
        for (let j = 0; j < body.length; j++) if (body[j] === 0x0a) body[j] = 0x20;
        break;
      }
      case 1: { // a request cut short: an unclosed object is never valid JSON
        const whole = JSON.stringify({
          jsonrpc: "2.0",
          id: i,
          method,
          params: { name: "x".repeat(rnd(8192)) },
        });
        body = encoder.encode(whole.slice(0, 1 + rnd(whole.length - 1)));
        break;
      }
      case 2: // valid JSON, not a valid request
        body = encoder.encode(
          JSON.stringify(
            [
              { jsonrpc: "1.0", id: i, method },
              { jsonrpc: "2.0", id: i, method: 42 },
              { jsonrpc: "2.0", id: { nested: i }, method },
              { jsonrpc: "2.0", id: i, method: `no.such.method.${"z".repeat(rnd(4096))}` },
            ][rnd(4)],
          ),
        );
        break;
      case 3: { // deeply nested params
        const depth = 1000 + rnd(50_000);
        body = encoder.encode(
          `{"jsonrpc":"2.0","id":${i},"method":"${method}","params":{"a":${"[".repeat(depth)}${
            "]".repeat(depth)
          }}}`,
        );
        break;
      }
      case 4: { // deeply nested id: invalid, answered with id null
        const depth = 1000 + rnd(50_000);
        body = encoder.encode(
          `{"jsonrpc":"2.0","id":${"[".repeat(depth)}${"]".repeat(depth)},"method":"${method}"}`,
        );
        break;
      }
      default: { // invalid UTF-8 inside an otherwise fine request
        const head = encoder.encode(
          `{"jsonrpc":"2.0","id":${i},"method":"${method}","params":{"s":"`,
        );
        const junk = Uint8Array.from({ length: 1 + rnd(2048) }, () => 0x80 + rnd(128));
        body = new Uint8Array([...head, ...junk, ...encoder.encode(`"}}`)]);
      }
    }
    const frame = new Uint8Array(body.length + 1);
    frame.set(body);
    frame[body.length] = 0x0a;
    out.push(frame);
  }
  return out;
}

/** One round's outcome: answers received (all errors?) and the error codes seen. */
interface Round {
  answered: number;
  nonErrors: number;
  codes: Map<number, number>;
}

function tally(answers: unknown[]): Round {
  const codes = new Map<number, number>();
  let nonErrors = 0;
  for (const msg of answers) {
    const code = (msg as { error?: { code?: unknown } }).error?.code;
    if (typeof code !== "number") nonErrors++;
    else codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  return { answered: answers.length, nonErrors, codes };
}

/** Reads newline-delimited frames from `stream` into `answers` (parsed) as they arrive. */
async function collect(stream: ReadableStream<Uint8Array>, answers: unknown[]): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  try {
    for await (const chunk of stream) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf("\n")) !== -1) {
        answers.push(JSON.parse(pending.slice(0, nl)));
        pending = pending.slice(nl + 1);
      }
    }
  } catch {
    // the connection ended: a round that misses answers shows it
  }
}

/**
 * Writes every frame, then waits (bounded) until `answers` holds one more answer per frame; the
 * round's answers are taken out of `answers`.
 */
async function round(
  write: (bytes: Uint8Array) => Promise<void>,
  all: Uint8Array[],
  answers: unknown[],
): Promise<Round> {
  const start = answers.length;
  for (const frame of all) await write(frame).catch(() => {});
  const deadline = Date.now() + ANSWER_TIMEOUT_MS;
  while (answers.length - start < all.length && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // A moment for anything beyond one answer per frame to show up as well.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return tally(answers.splice(start));
}

function mib(bytes: number): string {
  return `${(bytes / MiB).toFixed(1)} MiB`;
}

function report(name: string, rss: number[], done: Round[], alive: boolean): boolean {
  const ok1 = rss[1] - rss[0] < ROUND1_BOUND;
  const ok2 = rss[2] - rss[1] < ROUND2_BOUND;
  const answeredOk = done.every((r) => r.answered === count && r.nonErrors === 0);
  console.log(`\n${name}`);
  done.forEach((r, i) => {
    const codes = [...r.codes].sort(([a], [b]) => a - b).map(([c, n]) => `${c}×${n}`).join(" ");
    console.log(
      `  round ${i + 1}: ${r.answered}/${count} answered, ${r.nonErrors} non-error; codes ${codes}`,
    );
  });
  console.log(`  RSS before        ${mib(rss[0])}`);
  rss.slice(1).forEach((after, i) => {
    const bound = i === 0 ? [ok1, "< 64 MiB"] : i === 1 ? [ok2, "< 8 MiB"] : null;
    const verdict = bound ? `, bound ${bound[1]}: ${bound[0] ? "ok" : "EXCEEDED"}` : "";
    console.log(`  RSS after round ${i + 1} ${mib(after)}  (+${mib(after - rss[i])}${verdict})`);
  });
  console.log(`  alive after every round: ${alive ? "yes" : "NO"}`);
  return ok1 && ok2 && answeredOk && alive;
}

async function kernelRounds(): Promise<boolean> {
  const k = await startKernel();
  try {
    const pid = kernelPid(k.socket);
    const warm = await k.attach();
    for (let i = 0; i < 20; i++) await warm.request("parse", { src: "echo warm" });
    const conn = await Deno.connect({ transport: "unix", path: k.socket });
    const answers: unknown[] = [];
    const reading = collect(conn.readable, answers);
    const writer = conn.writable.getWriter();
    const all = frames(count, "parse");
    const rss = [rssBytes(pid)];
    const done: Round[] = [];
    for (let r = 0; r < rounds; r++) {
      done.push(await round((b) => writer.write(b), all, answers));
      rss.push(rssBytes(pid));
    }
    const alive = processLive(pid) &&
      (await warm.request("parse", { src: "echo still" }).then(() => true, () => false));
    await writer.close().catch(() => {});
    await reading.catch(() => {});
    return report(`kernel (one socket connection, pid ${pid})`, rss, done, alive);
  } finally {
    await k.cleanup();
  }
}

async function facadeRounds(): Promise<boolean> {
  const box = await sandbox();
  const facade = new RawFacade(box);
  try {
    await facade.request(0, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "malformed-stress", version: "0" },
    });
    await facade.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    for (let i = 0; i < 20; i++) await facade.request(`warm${i}`, "tools/list", {});
    const pid = facade.facadePid();
    const all = frames(count, "tools/call");
    const rss = [rssBytes(pid)];
    const done: Round[] = [];
    for (let r = 0; r < rounds; r++) {
      done.push(await round((b) => facade.write(b), all, facade.queued));
      rss.push(rssBytes(pid));
    }
    const alive = processLive(pid) &&
      (await facade.request("last", "tools/list", {}).then(() => true, () => false)) &&
      facade.junk.length === 0;
    return report(`facade (MCP frames on stdin, pid ${pid})`, rss, done, alive);
  } finally {
    await facade.closeStdin();
    await facade.exit();
    await box.cleanup();
  }
}

const load = Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
console.log(
  `${count} malformed frames per round, ${rounds} rounds per target; load average ${load}`,
);
const kernelOk = await kernelRounds();
const facadeOk = await facadeRounds();
Deno.exit(kernelOk && facadeOk ? 0 : 1);
