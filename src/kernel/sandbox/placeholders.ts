/**
 * Placeholders for absent protected names at a write root (P-SBX-6): a bind mount needs a host
 * entry to land on, so the kernel makes an empty directory there while some sandbox
 * binds it, and removes it when the last one has exited (a placeholder removed under a live
 * sandbox would detach its mount there). Nothing it made is left in the project.
 */
interface Held {
  count: number;
  /** The (device, inode) the kernel made, so only that entry is ever removed. */
  identity: string;
}

const held = new Map<string, Held>();

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

/** The (device, inode) of a path without following a final symlink, or null. */
function identityOf(path: string): string | null {
  try {
    const info = Deno.lstatSync(path);
    return `${info.dev}:${info.ino}`;
  } catch {
    return null;
  }
}

/** Whether `path` is a placeholder the kernel made and still holds. */
export function isPlaceholder(path: string): boolean {
  const entry = held.get(path);
  return entry !== undefined && entry.identity === identityOf(path);
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
      Deno.mkdirSync(path, { mode: 0o555 });
    } catch {
      continue; // there already, or not makable
    }
    held.set(path, { count: 1, identity: identityOf(path)! });
    mine.push(path);
  }
  return release;
}

/** Drops one hold of `path`; the last removes the placeholder when it is still what was made. */
function drop(path: string): void {
  const entry = held.get(path)!;
  if (--entry.count > 0) return;
  held.delete(path);
  if (entry.identity !== identityOf(path)) return;
  try {
    Deno.removeSync(path); // an empty directory only: never recursive
  } catch {
    // filled or gone meanwhile: not ours to remove any more
  }
}
