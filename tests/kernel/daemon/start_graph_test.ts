/**
 * What a starting kernel compiles before it answers its first attach (issue 33): the entry, the
 * daemon's modules and the five serve_bound.ts imports, statically. Each module more costs every
 * cold first exec of an autostarted kernel its share of ~100 ms of main-thread CPU.
 */
import assert from "node:assert/strict";
import type { Rec } from "../../_support/rec.ts";
import { REPO } from "../../_support/sandbox.ts";

/** The modules a kernel loads before its first attach, as repository paths. */
async function startGraph(): Promise<string[]> {
  const entries = [
    "src/kernel/main.ts",
    "src/kernel/daemon/serve.ts",
    "src/kernel/daemon/serve_bound.ts",
    "src/kernel/policy/leash.ts",
    "src/kernel/policy/policy_watch.ts",
    "src/kernel/journal/journal.ts",
    "src/kernel/daemon/kernel.ts",
    "src/kernel/daemon/accept_loop.ts",
  ];
  const modules = new Map<string, { dependencies?: Rec[] }>();
  for (const entry of entries) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", `--config=${REPO}/deno.json`, `${REPO}/${entry}`],
      env: { NO_COLOR: "1" },
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const info = JSON.parse(new TextDecoder().decode(out.stdout));
    for (const m of info.modules) modules.set(m.specifier, m);
  }
  const seen = new Set<string>();
  const walk = (specifier: string) => {
    if (seen.has(specifier)) return;
    seen.add(specifier);
    for (const dep of modules.get(specifier)?.dependencies ?? []) {
      const code = (dep.code as { specifier?: string } | undefined)?.specifier;
      if (!dep.isDynamic && code !== undefined) walk(code);
    }
  };
  for (const entry of entries) walk(`file://${REPO}/${entry}`);
  return [...seen].map((s) => s.replace(`file://${REPO}/`, ""));
}

Deno.test("issue 33: a starting kernel loads no PTY module before its first attach: pty.ts and the 13 modules only it needs come with the first pty.open", async () => {
  const graph = await startGraph();
  assert.ok(graph.includes("src/kernel/pty/registry.ts"), graph.join(" "));
  const later = [
    "src/kernel/pty/pty.ts",
    "src/kernel/pty/feed.ts",
    "src/kernel/sandbox/start_gate.ts",
  ];
  assert.deepEqual(later.filter((path) => graph.includes(path)), []);
});
