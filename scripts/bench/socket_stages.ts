/**
 * Where one `exec` over the real Unix socket spends its time outside bash (issue 10): a kernel
 * started in this process (the real `Kernel`, accept loop and modules, as `serve` starts them) and
 * a client on a real socket connection time `echo hi` execs. Stage boundaries are taken from the
 * kernel's own service objects, wrapped in place (`warm.take` follows the frame read, dispatch,
 * params and the policy analysis; `tasks.spawned` follows the hand-over to bash; `journal.finish`
 * follows capture, outcome, state merge and render; `tasks.finish` follows the events), so the
 * code timed is the code the daemon runs. Bash's own share is the outcome's `dur_ns`. Prints
 * p50/p95 of each stage; `exec_stages.ts` splits the kernel's stages around bash further, in
 * process without the socket.
 */
import { bashCandidates, resolveBash } from "../../src/kernel/bash/discover.ts";
import { bashOwnVariables } from "../../src/kernel/bash/shell_state.ts";
import { acceptLoop } from "../../src/kernel/daemon/accept_loop.ts";
import { Kernel } from "../../src/kernel/daemon/kernel.ts";
import { defaultPolicy } from "../../src/kernel/policy/leash.ts";
import { NO_SANDBOX } from "../../src/kernel/sandbox/probe.ts";
import { RpcConnection } from "../../src/protocol/rpc_client.ts";
import { printStages } from "./percentile.ts";

const N = Number(Deno.env.get("STAGES_N") ?? 400);
const dir = await Deno.makeTempDir({ prefix: "shoal-socket-stages-" });
const socketPath = `${dir}/k.sock`;
const bash = await resolveBash(undefined, bashCandidates(Deno.build.os, Deno.env.get("PATH")));
await Deno.mkdir(`${dir}/tmp`, { mode: 0o700 });
const kernel = await Kernel.start({
  stateDir: dir,
  socketPath,
  bash,
  bashVariables: await bashOwnVariables(bash),
  localHuman: `uid:${Deno.uid() ?? 0}`,
  home: Deno.env.get("HOME"),
  policy: defaultPolicy(),
  sandbox: {
    host: NO_SANDBOX,
    home: Deno.env.get("HOME"),
    masked: [dir],
    gitIdentity: () => null,
    gitExcludes: () => null,
  },
  initialState: () => ({
    cwd: dir,
    env: new Map(Object.entries(Deno.env.toObject())),
    vars: new Map(),
    funcs: new Map(),
    aliases: new Map(),
  }),
});

/** performance.now() at each boundary of the exec in flight. */
const marks = new Map<string, number>();
const mark = (name: string) => marks.set(name, performance.now());

/** Replaces `obj[key]` by a wrapper that marks `name` before and `name` + " end" after it. */
function wrap<T extends object>(obj: T, key: keyof T & string, name: string): void {
  const original = (obj[key] as (...args: unknown[]) => unknown).bind(obj);
  Object.assign(obj, {
    [key]: (...args: unknown[]) => {
      mark(name);
      const result = original(...args);
      mark(`${name} end`);
      return result;
    },
  });
}
wrap(kernel.warm, "take", "take");
wrap(kernel.journal, "start", "journal start");
wrap(kernel.tasks, "spawned", "spawned");
wrap(kernel.journal, "finish", "journal finish");
wrap(kernel.tasks, "finish", "task finish");

const stop = new AbortController();
const listener = Deno.listen({ transport: "unix", path: socketPath });
const serving = acceptLoop(kernel, listener, stop.signal);
/** The params of each kind of request timed, in turns: a plain call, and the facade's. */
const KINDS: [string, Record<string, unknown>][] = [
  ["direct", { src: "echo hi" }],
  // What shoal-mcp sends for a `shoal_exec` call: a task-backed exec in a budget slice (M-PROG-1).
  [
    "as the facade sends it",
    { src: "echo hi", mode: "run", position: "value", background: false, timeout_ms: 30000 },
  ],
];
const stages = KINDS.map(() => new Map<string, number[]>());
const conn = await RpcConnection.connect(socketPath);
try {
  await conn.request("session.attach", { session: "bench" });
  for (let i = 0; i < 2 * (N + 20); i++) {
    const kind = i % 2;
    marks.clear();
    const t0 = performance.now();
    const result = await conn.request("exec", KINDS[kind][1]) as { value: { dur_ns: number } };
    const t1 = performance.now();
    if (i < 40) continue;
    const sample = (name: string, ms: number) => {
      const list = stages[kind].get(name) ?? [];
      list.push(ms);
      stages[kind].set(name, list);
    };
    const at = (name: string) => marks.get(name)!;
    const bashMs = result.value.dur_ns / 1e6;
    sample("request → warm.take", at("take") - t0);
    sample("take → journal.start", at("journal start") - at("take"));
    sample("journal.start", at("journal start end") - at("journal start"));
    sample("journal.start → spawned", at("spawned") - at("journal start end"));
    sample("bash (dur_ns)", bashMs);
    sample("spawned → journal.finish - bash", at("journal finish") - at("spawned") - bashMs);
    sample("journal.finish", at("journal finish end") - at("journal finish"));
    sample("journal.finish → task.finish", at("task finish") - at("journal finish end"));
    sample("task.finish → reply read", t1 - at("task finish"));
    sample("TOTAL", t1 - t0);
    sample("TOTAL - bash", t1 - t0 - bashMs);
  }
  KINDS.forEach(([label], kind) =>
    printStages(
      `exec over the socket, ${label}, kernel in process, ${N} runs of \`echo hi\` (ms)`,
      stages[kind],
    )
  );
} finally {
  conn.close();
  stop.abort();
  listener.close();
  await serving;
  await kernel.shutdown();
  await Deno.remove(dir, { recursive: true });
}
