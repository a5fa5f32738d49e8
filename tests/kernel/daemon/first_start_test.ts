/**
 * The local kernel launcher on a fresh machine: a Deno cache holding only the npm packages of the
 * kernel's own module graph, and no network at all (a new network namespace). Deno used to fetch
 * every package of the lock file before the kernel started (the facade's MCP SDK and its server
 * stack too: 97 packages, 12-13 s here), far past the 5000 ms an autostarting facade waits
 * (M-START-1), so a fresh machine's first tool call failed.
 */
import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { dirname } from "node:path";
import { exec } from "../../_support/exec.ts";
import { hostTest, needsLinux } from "../../_support/host.ts";
import { launchKernel, type TestKernel } from "../../_support/kernel.ts";
import type { Rec } from "../../_support/rec.ts";
import { KERNEL_BIN, REPO, sandbox } from "../../_support/sandbox.ts";

/** The kernel's entry points: its main module and the analysis worker it starts by URL. */
const ENTRIES = ["src/kernel/main.ts", "src/kernel/policy/analysis_worker.ts"];

/** What `deno info --json` reports of an npm package. */
interface NpmPackage {
  dependencies: string[];
  localPath: string;
}

/**
 * The cache directories (`<DENO_DIR>/npm/<registry>/<name>`, each with its versions and registry
 * metadata) of the npm packages the kernel's modules import, with their dependencies.
 */
function kernelPackageDirs(): string[] {
  const dirs = new Set<string>();
  for (const entry of ENTRIES) {
    const out = new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", `--config=${REPO}/deno.json`, `${REPO}/${entry}`],
      stderr: "inherit",
    }).outputSync();
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: { kind: string; npmPackage?: string }[];
      npmPackages: Record<string, NpmPackage>;
    };
    const pending = info.modules.flatMap((m) => m.kind === "npm" ? [m.npmPackage!] : []);
    const seen = new Set<string>();
    while (pending.length > 0) {
      const id = pending.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      dirs.add(dirname(info.npmPackages[id].localPath));
      pending.push(...info.npmPackages[id].dependencies);
    }
  }
  return [...dirs];
}

/** Why this host cannot run a process without network (Linux's `unshare --net`), or null. */
function needsNetworkNamespace(): string | null {
  const linux = needsLinux("network namespaces");
  if (linux !== null) return linux;
  try {
    const probe = new Deno.Command("unshare", {
      args: ["--net", "--map-root-user", "true"],
      stdout: "null",
      stderr: "null",
    }).outputSync();
    return probe.success ? null : "needs `unshare --net --map-root-user`, which fails here";
  } catch {
    return "needs unshare(1) (util-linux)";
  }
}

hostTest(
  "bin/shoal-kernel starts offline on a Deno cache holding only the kernel's own npm packages",
  needsNetworkNamespace(),
  async () => {
    const box = await sandbox();
    let kernel: TestKernel | null = null;
    try {
      const denoDir = `${box.dir}/deno`;
      const dirs = kernelPackageDirs();
      assert.ok(dirs.length > 0, "the kernel imports npm packages");
      for (const dir of dirs) {
        cpSync(dir, `${denoDir}/${dir.slice(dir.lastIndexOf("/npm/") + 1)}`, { recursive: true });
      }
      const socket = box.socket();
      kernel = await launchKernel(box, ["--socket", socket], socket, { DENO_DIR: denoDir }, [
        "unshare",
        "--net",
        "--map-root-user",
        KERNEL_BIN,
      ]);
      const conn = await kernel.attach();
      const out = ((await exec(conn, "echo hi")).value as Rec).out as Rec;
      assert.equal(out.v, "hi\n");
    } finally {
      await (kernel ?? box).cleanup();
    }
  },
);
