/** `bin_hash` of spawned programs: the sha256 of the executable each argv0 resolves to (K-EFF-3). */
import { createHash } from "node:crypto";
import type { Effect } from "./effect_types.ts";

/**
 * Copies `effects` with `bin_hash` of each `proc_spawn` set to the sha256 of the executable it
 * resolves to (`PATH` search for bare names, `cwd` for relative paths); unresolvable → null.
 * A null `cwd` (one whose name is not UTF-8: its text names another directory) resolves no
 * relative path. The caller decides when to ask (K-EFF-3, last bullet).
 */
export async function fillBinHashes(
  effects: readonly Effect[],
  path: string,
  cwd: string | null,
): Promise<Effect[]> {
  const out: Effect[] = [];
  for (const effect of effects) {
    if (effect.kind !== "proc_spawn") {
      out.push(effect);
      continue;
    }
    const file = await resolveExecutable(effect.argv0, path, cwd);
    out.push({ ...effect, bin_hash: file === null ? null : await sha256File(file) });
  }
  return out;
}

async function resolveExecutable(
  argv0: string,
  path: string,
  cwd: string | null,
): Promise<string | null> {
  const candidates = argv0.includes("/")
    ? [argv0]
    : path.split(":").map((dir) => `${dir === "" ? "." : dir}/${argv0}`);
  for (const candidate of candidates) {
    // bash may find it there first: with no cwd to resolve it, the program is unknown
    if (!candidate.startsWith("/") && cwd === null) return null;
    const file = candidate.startsWith("/") ? candidate : `${cwd}/${candidate}`;
    try {
      const info = await Deno.stat(file);
      if (info.isFile && ((info.mode ?? 0) & 0o111) !== 0) return file;
    } catch {
      // not there: try the next PATH entry
    }
  }
  return null;
}

async function sha256File(file: string): Promise<string | null> {
  try {
    using handle = await Deno.open(file, { read: true });
    const hash = createHash("sha256");
    for await (const chunk of handle.readable) hash.update(chunk);
    return `sha256:${hash.digest("hex")}`;
  } catch {
    return null;
  }
}
