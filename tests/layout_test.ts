// The source layout's bounds (issue 9), read from the import graph `deno info --json` reports
// (type-only imports included): no import circle, kernel directories import only their own floor
// or lower ones (the floors listed in src/kernel/README.md), the facade and the kernel never import
// each other, at most 4 files at the top of src/kernel/, no source file over 600 lines.
import assert from "node:assert/strict";
import { REPO } from "./_support/sandbox.ts";

const ENTRIES = ["main.ts", "src/kernel/main.ts"];
const KERNEL = "src/kernel/";

/** Repository-relative paths of every .ts file below `dir`. */
function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of Deno.readDirSync(`${REPO}/${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) files.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts")) files.push(path);
  }
  return files;
}

/** The repository-local import edges of `root` and everything it imports: file → its imports. */
function importGraph(root: string): Map<string, Set<string>> {
  const out = new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", root],
    cwd: REPO,
    stderr: "inherit",
  }).outputSync();
  assert.ok(out.success, `deno info ${root} failed`);
  const prefix = `file://${REPO}/`;
  const local = (s: string | undefined) => s?.startsWith(prefix) ? s.slice(prefix.length) : null;
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
    }[];
  };
  const graph = new Map<string, Set<string>>();
  for (const module of info.modules) {
    const from = local(module.specifier);
    if (from === null) continue;
    const to = new Set<string>();
    for (const dep of module.dependencies ?? []) {
      for (const target of [local(dep.code?.specifier), local(dep.type?.specifier)]) {
        if (target !== null) to.add(target);
      }
    }
    graph.set(from, to);
  }
  return graph;
}

/**
 * The import graph of every source file: the two entry points, then any file they do not reach
 * (a worker module is loaded by URL, not imported) as a root of its own.
 */
function wholeGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const root of [...ENTRIES, ...sourceFiles("src")]) {
    if (graph.has(root)) continue;
    for (const [from, to] of importGraph(root)) graph.set(from, to);
  }
  return graph;
}

/** Every import circle: the strongly connected components of more than one file, or a self-import. */
function circles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/**
 * The kernel's floors from src/kernel/README.md, highest first: the numbered list under
 * "## Floors", each item naming its directories (and `main.ts`) in backticks.
 */
function floors(): string[][] {
  const readme = Deno.readTextFileSync(`${REPO}/${KERNEL}README.md`);
  const section = readme.split(/^## /m).find((s) => s.startsWith("Floors"));
  assert.ok(section, "src/kernel/README.md has no '## Floors' section");
  return section.split("\n").filter((line) => /^\d+\. /.test(line)).map((line) =>
    [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1].replace(/\/$/, ""))
  );
}

/** The floor unit of a kernel file: its directory below src/kernel/, or the top file's name. */
function unitOf(path: string): string {
  return path.slice(KERNEL.length).split("/")[0];
}

const graph = wholeGraph();

/** Every edge as `from → to`. */
function edges(): [string, string][] {
  return [...graph].flatMap(([from, to]) => [...to].map((t): [string, string] => [from, t]));
}

Deno.test("every source file is in the import graph", () => {
  const missing = [...ENTRIES, ...sourceFiles("src")].filter((f) => !graph.has(f));
  assert.deepEqual(missing, []);
});

Deno.test("no import circle", () => {
  assert.deepEqual(circles(graph), []);
});

Deno.test("every kernel directory sits on exactly one floor of src/kernel/README.md", () => {
  const listed = floors().flat();
  const units = [...Deno.readDirSync(`${REPO}/${KERNEL}`)]
    .filter((e) => e.isDirectory || e.name.endsWith(".ts")).map((e) => e.name).sort();
  assert.deepEqual([...listed].sort(), units);
});

Deno.test("no kernel import runs from a lower floor to a higher one", () => {
  const floorOf = new Map<string, number>();
  floors().forEach((units, n) => units.forEach((u) => floorOf.set(u, n)));
  const upward = edges().filter(([from, to]) =>
    from.startsWith(KERNEL) && to.startsWith(KERNEL) &&
    floorOf.get(unitOf(to))! < floorOf.get(unitOf(from))!
  ).map(([from, to]) => `${from} → ${to}`);
  assert.deepEqual(upward, []);
});

Deno.test("no two kernel directories import each other, directly or through others", () => {
  const dirGraph = new Map<string, Set<string>>();
  for (const [from, to] of edges()) {
    if (!from.startsWith(KERNEL) || !to.startsWith(KERNEL)) continue;
    const [a, b] = [unitOf(from), unitOf(to)];
    if (a === b) continue;
    if (!dirGraph.has(a)) dirGraph.set(a, new Set());
    dirGraph.get(a)!.add(b);
  }
  assert.deepEqual(circles(dirGraph), []);
});

Deno.test("rpc/methods/* never import each other", () => {
  const methods = `${KERNEL}rpc/methods/`;
  const crossing = edges().filter(([from, to]) =>
    from.startsWith(methods) && to.startsWith(methods)
  )
    .map(([from, to]) => `${from} → ${to}`);
  assert.deepEqual(crossing, []);
});

Deno.test("the facade and the kernel never import each other; protocol imports neither", () => {
  const side = (path: string) =>
    path.startsWith(KERNEL)
      ? "kernel"
      : path.startsWith("src/protocol/")
      ? "protocol"
      : path.startsWith("src/mcp/") || path === "main.ts"
      ? "facade"
      : "other";
  const crossing = edges().filter(([from, to]) => {
    const [a, b] = [side(from), side(to)];
    return a !== b && b !== "protocol" && b !== "other";
  }).map(([from, to]) => `${from} → ${to}`);
  assert.deepEqual(crossing, []);
});

Deno.test("at most 4 files at the top of src/kernel/", () => {
  const files = [...Deno.readDirSync(`${REPO}/${KERNEL}`)].filter((e) => e.isFile);
  assert.ok(files.length <= 4, `src/kernel/ holds ${files.map((f) => f.name)}`);
});

Deno.test("no source file over 600 lines", () => {
  const long = [...ENTRIES, ...sourceFiles("src")].map((f) => {
    const text = Deno.readTextFileSync(`${REPO}/${f}`);
    return { f, lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0) };
  }).filter(({ lines }) => lines > 600).map(({ f, lines }) => `${f}: ${lines}`);
  assert.deepEqual(long, []);
});
