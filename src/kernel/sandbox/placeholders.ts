/**
 * Placeholders for absent protected names at a write root (P-SBX-6): a bind mount needs a host
 * entry to land on, so the kernel makes an empty directory there while some sandbox
 * binds it, and removes it when the last one has exited (a placeholder removed under a live
 * sandbox would detach its mount there). Nothing it made is left in the project: each one is
 * recorded in the state directory while it exists (`placeholder_records.ts`).
 */
import {
  forgetPlaceholder,
  identityOf,
  lstat,
  recordPlaceholder,
  removeEmpty,
} from "./placeholder_records.ts";

interface Held {
  count: number;
  /** The {@link identityOf} what the kernel made, so only that entry is ever removed. */
  identity: string;
  /** Its record in the state directory, or null when none is kept. */
  record: string | null;
}

const held = new Map<string, Held>();

/** The mode of every placeholder: nothing inside may add to it. */
const PLACEHOLDER_MODE = 0o555;

/** Paths an approved plan's run writes, by how many such runs: no placeholder is made there. */
const blocked = new Map<string, number>();

/**
 * Keeps placeholders from being made at `paths` until the returned release is called: a run of
 * an approved plan writes there, and a sandbox that would bind one fails to start meanwhile.
 */
export function blockPlaceholders(paths: readonly string[]): () => void {
  for (const path of paths) blocked.set(path, (blocked.get(path) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const path of paths) {
      const left = blocked.get(path)! - 1;
      if (left === 0) blocked.delete(path);
      else blocked.set(path, left);
    }
  };
}

/** Whether `path` is a placeholder the kernel made and still holds. */
export function isPlaceholder(path: string): boolean {
  const entry = held.get(path);
  return entry !== undefined && entry.identity === identityOf(path);
}

/** The absent paths of `protection` that {@link holdPlaceholders} would make now: nothing is there. */
export function placeholdersToMake(
  protection: { paths: readonly { path: string; absent: boolean }[] },
): string[] {
  return protection.paths.filter((p) => p.absent && lstat(p.path) === null).map((p) => p.path);
}

/**
 * Makes the absent paths of `protection` as empty directories and holds
 * every one this kernel made until the returned release is called. One that something else made
 * meanwhile is left to the caller's bind as it is; one that cannot be made (a root the kernel
 * cannot write) cannot be made by a sandboxed run either. Throws, holding nothing, when one is
 * {@link blockPlaceholders blocked}.
 */
export function holdPlaceholders(
  protection: { paths: readonly { path: string; absent: boolean }[] },
): () => void {
  const mine: string[] = [];
  const release = () => {
    for (const path of mine.splice(0)) drop(path);
  };
  for (const { path } of protection.paths.filter((p) => p.absent)) {
    if (blocked.has(path)) {
      release();
      throw new Error(`a run of an approved plan is writing ${path}`);
    }
    const known = held.get(path);
    if (known !== undefined && known.identity === identityOf(path)) {
      known.count++;
      mine.push(path);
      continue;
    }
    try {
      Deno.mkdirSync(path, { mode: PLACEHOLDER_MODE });
    } catch {
      continue; // there already, or not makable
    }
    // recorded at once, no await between: one a killed kernel left, the next kernel removes
    let file: string | null;
    try {
      file = recordPlaceholder(path);
    } catch (e) {
      removeEmpty(path);
      release();
      throw new Error(`cannot record the placeholder ${path}: ${e}`);
    }
    held.set(path, { count: 1, identity: identityOf(path)!, record: file });
    mine.push(path);
  }
  return release;
}

/** Drops one hold of `path`; the last removes the placeholder when it is still what was made. */
function drop(path: string): void {
  const entry = held.get(path)!;
  if (--entry.count > 0) return;
  held.delete(path);
  // filled, replaced or gone meanwhile: not ours to remove any more
  if (entry.identity === identityOf(path)) removeEmpty(path);
  if (entry.record !== null) forgetPlaceholder(entry.record);
}
