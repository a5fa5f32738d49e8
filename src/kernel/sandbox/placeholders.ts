/**
 * Placeholders for absent protected names at a write root (P-SBX-6): a bind mount needs a host
 * entry to land on, so the kernel makes an empty directory there while some sandbox
 * binds it, and removes it when the last one has exited (a placeholder removed under a live
 * sandbox would detach its mount there). Nothing it made is left in the project: each one is
 * recorded in the state directory while it exists, and the next kernel on that directory removes
 * those of a kernel killed before it could ({@link keepPlaceholderRecords}).
 */
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

/** The directory recording each placeholder this kernel holds, or null when none is kept. */
let records: string | null = null;

/** A placeholder's record: where it is, which directory it is, and its mode as made. */
interface PlaceholderRecord {
  path: string;
  identity: string;
  mode: number;
}

/** What {@link keepPlaceholderRecords} found of a previous kernel's placeholders. */
export interface Leftovers {
  /** Removed: still the empty directories that kernel made. */
  removed: string[];
  /** Left alone: filled, replaced or changed since (they are the user's now). */
  kept: string[];
}

/**
 * Records every placeholder made from now on in `stateDir/placeholders` while it exists, after
 * removing those a kernel killed before it ended (SIGKILL, a crash) recorded there: only an empty
 * directory of the recorded identity ({@link identityOf}) and mode goes, never one the user since
 * filled, replaced or changed.
 */
export function keepPlaceholderRecords(stateDir: string): Leftovers {
  const dir = `${stateDir}/placeholders`;
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const found: Leftovers = { removed: [], kept: [] };
  for (const entry of Deno.readDirSync(dir)) {
    const file = `${dir}/${entry.name}`;
    const record = readRecord(file);
    if (record !== null) {
      const info = lstat(record.path);
      const made = info !== null && info.isDirectory && modeOf(info) === record.mode &&
        identityOf(record.path) === record.identity;
      if (made && removeEmpty(record.path)) found.removed.push(record.path);
      else if (info !== null) found.kept.push(record.path);
    }
    Deno.removeSync(file);
  }
  records = dir;
  return found;
}

/** The record in `file`, or null when it holds none (torn by a kill while it was written). */
function readRecord(file: string): PlaceholderRecord | null {
  try {
    const record = JSON.parse(Deno.readTextFileSync(file));
    const valid = typeof record?.path === "string" && typeof record?.identity === "string" &&
      typeof record?.mode === "number";
    return valid ? record : null;
  } catch {
    return null;
  }
}

/**
 * Records the placeholder just made at `path` (its identity and mode); returns the record's file,
 * or null when none is kept. Throws when the record cannot be written.
 */
function record(path: string): string | null {
  if (records === null) return null;
  const info = lstat(path)!;
  const entry: PlaceholderRecord = { path, identity: identityOf(path)!, mode: modeOf(info) };
  const file = `${records}/${entry.identity.replaceAll(":", "-")}.json`;
  Deno.writeTextFileSync(file, JSON.stringify(entry), { mode: 0o600 });
  return file;
}

/** The permission bits of `info`. */
function modeOf(info: Deno.FileInfo): number {
  return (info.mode ?? 0) & 0o7777;
}

/** Removes `path` when it is an empty directory (never recursively); whether it did. */
function removeEmpty(path: string): boolean {
  try {
    Deno.removeSync(path);
    return true;
  } catch {
    return false; // filled or gone meanwhile
  }
}

/** The entry at `path` without following a final symlink, or null. */
function lstat(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

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

/**
 * Which entry `path` names (no final symlink followed), or null: its device, inode and birth time
 * (the change time where the file system keeps none), since a file system such as ext4 gives a
 * directory made right after one was removed the same inode.
 */
function identityOf(path: string): string | null {
  const info = lstat(path);
  if (info === null) return null;
  return `${info.dev}:${info.ino}:${(info.birthtime ?? info.ctime)?.getTime() ?? ""}`;
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
      file = record(path);
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
  if (entry.record === null) return;
  try {
    Deno.removeSync(entry.record);
  } catch {
    // the state directory went first (a test's): nothing is left to remove then
  }
}
