/**
 * The protection scan of P-SBX-6 (`protection()` of `protected_paths.ts`) of one write root
 * holding 100,000 files in some 5,000 directories, a nested repository, and a directory of
 * FLOOD files (1,000,000, or the `FLOOD` environment variable) as an agent makes: in a fresh
 * process each round, the first scan (and the heap it leaves), scans of the tree unchanged (once
 * its directories have settled), and scans right after a file was added to the flood. With
 * `--base COMMIT`, the same run times that commit's scan too (its `src/` taken by `git archive`),
 * the two taking turns; compare only figures of one run. Says whether each found the nested
 * repository's config.
 */
import { parseArgs } from "node:util";

/** Rounds, each a fresh process per variant: 3, or the `ROUNDS` environment variable. */
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 3);
const FLOOD = Number(Deno.env.get("FLOOD") ?? 1_000_000);
/** Scans timed of the unchanged tree, and after a change of the flood, per round. */
const RESCANS = 10;

const args = parseArgs({
  args: Deno.args,
  options: { base: { type: "string" }, child: { type: "string" }, root: { type: "string" } },
}).values;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

if (args.child !== undefined) await child(args.child, args.root!);
else await main();

/** One variant's figures, as a child prints them. */
interface Figures {
  firstMs: number;
  heapMiB: number;
  unchangedMs: number;
  changedMs: number;
  nestedFound: boolean;
}

/** Times the scans of `root` with the `protection` of the sources in `src`; prints {@link Figures}. */
async function child(src: string, root: string): Promise<void> {
  const { protection } = await import(`${src}/kernel/sandbox/protected_paths.ts`);
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  gc();
  const heap0 = Deno.memoryUsage().heapUsed;
  let t0 = performance.now();
  const first = protection([root], []);
  const firstMs = performance.now() - t0;
  gc();
  const heapMiB = (Deno.memoryUsage().heapUsed - heap0) / 2 ** 20;
  // a listing read within 2 s of its directory's change is read again
  await new Promise((resolve) => setTimeout(resolve, 2100));
  protection([root], []);
  t0 = performance.now();
  for (let i = 0; i < RESCANS; i++) protection([root], []);
  const unchangedMs = (performance.now() - t0) / RESCANS;
  let changedMs = 0;
  for (let i = 0; i < RESCANS; i++) {
    Deno.writeTextFileSync(`${root}/flood/new-${crypto.randomUUID()}`, "");
    t0 = performance.now();
    protection([root], []);
    changedMs += (performance.now() - t0) / RESCANS;
  }
  const nestedFound = first.paths.some((p: { path: string }) =>
    p.path === `${root}/zz/lib/.git/config`
  );
  const figures: Figures = { firstMs, heapMiB, unchangedMs, changedMs, nestedFound };
  console.log(JSON.stringify(figures));
}

/** Runs `cmd` in a shell; throws when it fails. */
async function sh(cmd: string): Promise<void> {
  const out = await new Deno.Command("sh", { args: ["-c", cmd], stderr: "inherit" }).output();
  if (!out.success) throw new Error(`failed: ${cmd}`);
}

/** Lays out the tree, runs the rounds and prints the mean figures of each variant. */
async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "shoal-protection-scan-" });
  try {
    const root = await Deno.realPath(`${dir}/root`).catch(async () => {
      await Deno.mkdir(`${dir}/root`);
      return Deno.realPath(`${dir}/root`);
    });
    const here = new URL("../..", import.meta.url).pathname;
    const variants: [string, string][] = [["this tree", `${here}src`]];
    if (args.base !== undefined) {
      await Deno.mkdir(`${dir}/base`);
      await sh(`cd '${here}' && git archive '${args.base}' src | tar -x -C '${dir}/base'`);
      variants.unshift([`base ${args.base.slice(0, 8)}`, `${dir}/base/src`]);
    }
    // 50 × 100 directories of 20 files each: 100,000 files in 5,050 directories
    await sh(
      `cd '${root}' && for a in $(seq 0 49); do for b in $(seq 0 99); do echo a$a/b$b; done; done` +
        ` | xargs mkdir -p && for a in $(seq 0 49); do (cd a$a && for b in $(seq 0 99); do` +
        ` (cd b$b && seq 0 19 | xargs touch); done); done`,
    );
    await sh(`cd '${root}' && mkdir -p zz/lib && git init -q zz/lib && mkdir flood`);
    await sh(`cd '${root}/flood' && seq 0 ${FLOOD - 1} | xargs touch`);
    const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
    console.log(
      `root: 100,000 files in 5,050 directories, a nested repository, a flood of ${FLOOD}`,
    );
    console.log(`load average before: ${load}`);
    const sums = new Map<string, Figures[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, src] of variants) {
        const out = await new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "-A",
            "--v8-flags=--expose-gc",
            "--config",
            CONFIG,
            new URL(import.meta.url).pathname,
            "--child",
            src,
            "--root",
            root,
          ],
          stderr: "inherit",
        }).output();
        const figures = JSON.parse(new TextDecoder().decode(out.stdout).trim()) as Figures;
        sums.set(name, [...(sums.get(name) ?? []), figures]);
        await sh(`rm -f '${root}'/flood/new-*`);
      }
    }
    const mean = (list: Figures[], key: keyof Figures) =>
      list.reduce((s, f) => s + Number(f[key]), 0) / list.length;
    console.log(
      "variant           first ms  heap MiB  unchanged ms  flood changed ms  nested found",
    );
    for (const [name, list] of sums) {
      console.log(
        `${name.padEnd(17)} ${mean(list, "firstMs").toFixed(0).padStart(8)}  ` +
          `${mean(list, "heapMiB").toFixed(1).padStart(8)}  ` +
          `${mean(list, "unchangedMs").toFixed(1).padStart(12)}  ` +
          `${mean(list, "changedMs").toFixed(1).padStart(16)}  ${list.every((f) => f.nestedFound)}`,
      );
    }
    const after = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
    console.log(`load average after: ${after}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
