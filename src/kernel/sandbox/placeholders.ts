/**
 * Placeholders for absent protected names at a write root (P-SBX-6): a bind mount needs a host
 * entry to land on, so the kernel makes an empty directory there (or, for a `.git` part git dies
 * on a directory at, a read-only file of the text that means what its absence means) while some
 * sandbox binds it, and removes it when the last one has exited (a placeholder removed under a live
 * sandbox would detach its mount there). Nothing it made is left in the project: each one is
 * recorded in the state directory while it exists (`placeholder_records.ts`).
 */
import {
  forgetPlaceholders,
  identityOf,
  identityOfInfo,
  type Intended,
  intendPlaceholders,
  type Intent,
  leftoversBound,
  lstat,
  recordPlaceholders,
  removeLeftovers,
  removeMade,
} from "./placeholder_records.ts";
import { mountedElsewhere } from "./foreign_mounts.ts";
import { renameNoReplace } from "./rename_no_replace.ts";
import { mkdirWithMode } from "./sticky_dir.ts";
import { anchorDir } from "./anchored_dir.ts";

interface Held {
  count: number;
  /** The {@link identityOf} what the kernel made, so only that entry is ever removed. */
  identity: string;
  /** The records in the state directory it is one of, or null when none are kept. */
  record: Intent | null;
  /** The text of a file placeholder; undefined for a directory. */
  text?: string;
}

const held = new Map<string, Held>();

/** Placeholders no longer held that a sandbox of another kernel still binds, left for now. */
const lingering = new Map<string, Held>();

/**
 * How often placeholders left because a sandbox of another kernel bound them are looked at again
 * while there are any ({@link retryLeftovers}): that sandbox's end tells this kernel nothing, and
 * one waiting for this kernel's next drop or start stayed in the project (`.vscode/`,
 * `.gitmodules/`, …) for as long as it ran no sandbox.
 */
const LEFTOVER_RETRY_MS = 2000;

/** Whether a look at the placeholders left is due ({@link retryLeftovers}). */
let retrying = false;

/**
 * Looks again in {@link LEFTOVER_RETRY_MS}, and so on while any is left, at the placeholders left
 * because a sandbox of another kernel bound them: this kernel's {@link lingering} ones, and those
 * ended kernels recorded (`placeholder_records.ts`); a timer that keeps no kernel from exiting
 * (the next kernel removes what is left).
 */
export function retryLeftovers(): void {
  if (retrying || (lingering.size === 0 && !leftoversBound())) return;
  retrying = true;
  const timer = setTimeout(() => {
    retrying = false;
    const gone = new Forgotten();
    removeUnbound([...lingering.keys()], gone);
    gone.forget();
    if (leftoversBound()) removeLeftovers();
    retryLeftovers();
  }, LEFTOVER_RETRY_MS);
  Deno.unrefTimer(timer);
}

/**
 * The bit set on every directory placeholder (sticky), made with the mode of any new directory
 * (the umask's): the user's own tools may fill it (an editor writing `.vscode/settings.json`, a client
 * `.claude/settings.local.json`: a read-only one failed them with EACCES while a sandbox was up,
 * for any user but root); inside a sandbox it is bound read-only. The bit tells a killed kernel's
 * leftover from a directory of the user's (`placeholder_records.ts`).
 */
const PLACEHOLDER_BIT = 0o1000;

/** The mode of every file placeholder: read-only. */
const FILE_PLACEHOLDER_MODE = 0o444;

/** A path of a protection, as placeholders need it (`protected_paths.ts` `ProtectedPath`). */
interface Placed {
  path: string;
  absent: boolean;
  /** The text of the file to make when absent; a directory is made when it is not set. */
  text?: string;
}

/** Names the files {@link make} writes aside. */
let staging = 0;

/** A free name beside `path` for its file placeholder to be written at before it is put in place. */
function stagedName(path: string): string {
  return `${path}.shoal-${Deno.pid}-${staging++}`;
}

/**
 * Makes the placeholder `p`, a new file of its text or an empty directory; throws if it cannot.
 * A file is written at `staged` and renamed into place whole, never over anything: the human's
 * git reading `commondir` while a sandbox starts died on the empty file the placeholder was
 * before its text was written ("failed to read .git/commondir"). Both are made in the directory
 * the path names now with no symlink on the way ({@link anchorDir}), so an agent's program that
 * swaps it (or one above it) for a link after the scan makes the kernel make nothing elsewhere.
 */
function make(p: Placed, staged: string | undefined): void {
  const cut = p.path.lastIndexOf("/");
  const dir = anchorDir(p.path.slice(0, cut) || "/");
  try {
    const name = dir.at(p.path.slice(cut + 1));
    if (p.text === undefined) {
      // made with its bit at once: a chmod by name after the mkdir followed a link an agent's
      // program (in another sandbox, writing there) had swapped in for the fresh directory
      mkdirWithMode(name, 0o777 | PLACEHOLDER_BIT);
      return;
    }
    const aside = dir.at((staged ?? stagedName(p.path)).slice(cut + 1));
    const file = Deno.openSync(aside, {
      createNew: true,
      write: true,
      mode: FILE_PLACEHOLDER_MODE,
    });
    try {
      const bytes = new TextEncoder().encode(p.text);
      for (let done = 0; done < bytes.length;) done += file.writeSync(bytes.subarray(done));
      file.close();
      renameNoReplace(aside, name);
    } catch (e) {
      try {
        file.close();
      } catch {
        // closed before the rename
      }
      Deno.removeSync(aside);
      throw e;
    }
  } finally {
    dir.close();
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
 * Whether `path` is a placeholder the kernel made and still holds, or left {@link lingering};
 * `info` is its lstat when the caller has just taken it (a scan of a write root asks for every held
 * one at each exec).
 */
export function isPlaceholder(path: string, info?: Deno.FileInfo): boolean {
  const entry = held.get(path) ?? lingering.get(path);
  if (entry === undefined) return false;
  return entry.identity === (info === undefined ? identityOf(path) : identityOfInfo(info));
}

/**
 * The directories {@link holdPlaceholders} would make now for the absent paths of `protection`
 * (nothing is there yet), where a run writing would meet them (`git init` finding a directory at
 * `.git/config`). Not its files: each holds what its absence means to git, which writes neither
 * in a repository it makes or clones.
 */
export function directoryPlaceholdersToMake(protection: { paths: readonly Placed[] }): string[] {
  return protection.paths.filter((p) => p.absent && p.text === undefined && lstat(p.path) === null)
    .map((p) => p.path);
}

/**
 * Makes the absent paths of `protection` (empty directories, or files of their text) and holds
 * every one this kernel made until the returned release is called. One that something else made
 * meanwhile is left to the caller's bind as it is; one that cannot be made (a root the kernel
 * cannot write) cannot be made by a sandboxed run either. Throws, holding nothing, when one is
 * {@link blockPlaceholders blocked}.
 */
export function holdPlaceholders(protection: { paths: readonly Placed[] }): () => void {
  const mine: [string, Held][] = [];
  const release = () => drop(mine.splice(0));
  const fresh: (Intended & { placed: Placed })[] = [];
  for (const placed of protection.paths.filter((p) => p.absent)) {
    const { path, text } = placed;
    if (blocked.has(path)) {
      release();
      throw new Error(`a run of an approved plan is writing ${path}`);
    }
    const known = held.get(path) ?? lingering.get(path);
    if (known !== undefined && known.identity === identityOf(path)) {
      // one lingering is held again: taken for the project's own, no drop looked at it again
      lingering.delete(path);
      held.set(path, known);
      known.count++;
      mine.push([path, known]);
      continue;
    }
    fresh.push({ path, text, staged: text === undefined ? undefined : stagedName(path), placed });
  }
  if (fresh.length === 0) return release;
  // recorded before they are made: what a killed kernel left, the next kernel removes
  let intent: Intent | null;
  try {
    intent = intendPlaceholders(fresh);
  } catch (e) {
    release();
    throw new Error(`cannot record the placeholders ${fresh.map((f) => f.path)}: ${e}`);
  }
  const made = new Set<string>();
  for (const { path, staged, placed } of fresh) {
    try {
      make(placed, staged);
      made.add(path);
    } catch {
      // there already, or not makable
    }
  }
  try {
    if (intent !== null) recordPlaceholders(intent, made);
  } catch (e) {
    for (const { path, text } of fresh) if (made.has(path)) removeMade(path, text);
    forgetPlaceholders(intent!, fresh.map(({ path }) => path));
    release();
    throw new Error(`cannot record the placeholders ${[...made]}: ${e}`);
  }
  for (const { path, text } of fresh) {
    if (!made.has(path)) continue;
    const entry: Held = { count: 1, identity: identityOf(path)!, record: intent };
    if (text !== undefined) entry.text = text;
    held.set(path, entry);
    mine.push([path, entry]);
  }
  return release;
}

/** Releases scheduled with {@link releaseAfter} that have not been made yet. */
const pending = new Set<Promise<void>>();

/**
 * Calls `release` (of {@link holdPlaceholders}) once `ended` settles: when the sandbox that held
 * them has ended, and nothing of it is left to bind them.
 */
export function releaseAfter(ended: Promise<unknown>, release: () => void): void {
  const done: Promise<void> = ended.then(() => {}, () => {}).finally(() => {
    release();
    pending.delete(done);
  });
  pending.add(done);
}

/** Resolves once every release scheduled with {@link releaseAfter} has been made. */
export async function releasesMade(): Promise<void> {
  await Promise.all(pending);
}

/**
 * Drops each of `holds` (a path and the hold on it); the last one's removes a placeholder when it
 * is still what was made, unless a sandbox this kernel did not start binds it (another kernel's,
 * which took it for an existing protected name): it lingers then, and each later drop and a timer
 * ({@link retryLeftovers}) try again (what still lingers at exit, the next kernel removes). Call
 * it once the sandboxes that held them have ended (see `untilEnded`): one still going away would
 * count as another's.
 */
function drop(holds: readonly [string, Held][]): void {
  const earlier = [...lingering.keys()];
  const unheld: string[] = [];
  const gone = new Forgotten();
  for (const [path, entry] of holds) {
    if (--entry.count > 0) continue;
    if (held.get(path) !== entry) {
      // removed on the host while held, and made afresh for a newer sandbox, which holds that one
      gone.add(path, entry);
      continue;
    }
    held.delete(path);
    lingering.set(path, entry);
    unheld.push(path);
  }
  if (unheld.length > 0) {
    // the sandboxes that held them have ended; its nsenter processes this kernel started may linger
    const bound = mountedElsewhere(unheld, true);
    for (const path of unheld) {
      if (bound.has(path)) continue;
      remove(path, lingering.get(path)!, gone);
      lingering.delete(path);
    }
    removeUnbound(earlier, gone);
  }
  gone.forget();
  retryLeftovers();
}

/** Records of placeholders gone, taken out of their files together: one write per file. */
class Forgotten {
  #paths = new Map<Intent, string[]>();

  add(path: string, entry: Held): void {
    if (entry.record === null) return;
    const paths = this.#paths.get(entry.record);
    if (paths === undefined) this.#paths.set(entry.record, [path]);
    else paths.push(path);
  }

  forget(): void {
    for (const [intent, paths] of this.#paths) forgetPlaceholders(intent, paths);
    this.#paths.clear();
  }
}

/**
 * Removes those of the lingering `paths` that no sandbox binds now, this kernel's counted too (one
 * may bind a lingering placeholder as an existing name by now).
 */
function removeUnbound(paths: readonly string[], gone: Forgotten): void {
  const bound = mountedElsewhere(paths, false);
  for (const path of paths) {
    const entry = lingering.get(path);
    if (entry === undefined || bound.has(path)) continue;
    lingering.delete(path);
    remove(path, entry, gone);
  }
}

/** Removes the placeholder at `path` when it is still what was made; its record goes to `gone`. */
function remove(path: string, entry: Held, gone: Forgotten): void {
  // filled, replaced or gone meanwhile: not ours to remove any more
  if (entry.identity === identityOf(path)) removeMade(path, entry.text);
  gone.add(path, entry);
}
