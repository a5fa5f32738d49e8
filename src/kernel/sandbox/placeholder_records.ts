/**
 * Records of the placeholders a kernel holds (P-SBX-6), kept in its state directory while they
 * exist, so that those of a kernel killed before it could remove them (SIGKILL, a crash) are
 * removed by the next kernel started on that directory, and only when they are still exactly the
 * empty directories, or files of the placeholder's text, that kernel made. Each kernel records in
 * a directory of its own, named for its process, since kernels of several sockets may share one
 * state directory.
 */
import { procStat } from "../bash/proc_stat.ts";
import { mountedElsewhere } from "./foreign_mounts.ts";

/**
 * A placeholder's record: where it is, when it was about to be made (ms since the epoch) and, for
 * a file, its text and where it is written before it is renamed into place (`staged`), written
 * before the kernel makes it; then also which entry it is and its mode as made.
 */
interface PlaceholderRecord {
  path: string;
  intended: number;
  text?: string;
  staged?: string;
  identity?: string;
  mode?: number;
}

/**
 * How much earlier than its record's `intended` time a directory recorded only as intended may
 * have been born (file system clocks are coarse), and how much later, to count as the kernel's.
 */
const BORN_BEFORE_MS = 1000;
const BORN_AFTER_MS = 5000;

/** What {@link keepPlaceholderRecords} found of ended kernels' placeholders. */
export interface Leftovers {
  /** Removed: still the empty directories or files that kernel made. */
  removed: string[];
  /** Left alone: filled, replaced or changed since (they are the user's now). */
  kept: string[];
}

/** This kernel's directory of records, or null when none are kept. */
let records: string | null = null;

/** The entry at `path` without following a final symlink, or null. */
export function lstat(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

/**
 * Which entry `path` names (no final symlink followed), or null: its device, inode and birth time
 * (the change time where the file system keeps none), since a file system such as ext4 gives a
 * directory made right after one was removed the same inode.
 */
export function identityOf(path: string): string | null {
  const info = lstat(path);
  return info === null ? null : identityOfInfo(info);
}

/** The {@link identityOf} the entry whose lstat is `info`. */
export function identityOfInfo(info: Deno.FileInfo): string {
  return `${info.dev}:${info.ino}:${(info.birthtime ?? info.ctime)?.getTime() ?? ""}`;
}

/** Removes `path` when it is an empty directory (never recursively); whether it did. */
export function removeEmpty(path: string): boolean {
  try {
    if (!lstat(path)?.isDirectory) return false;
    Deno.removeSync(path);
    return true;
  } catch {
    return false; // filled or gone meanwhile
  }
}

/**
 * The text of the regular file `path` (no final symlink followed) when it has at most `size`
 * bytes, else null.
 */
function textUpTo(path: string, size: number): string | null {
  const info = lstat(path);
  if (!info?.isFile || info.size > size) return null;
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

/**
 * Removes the placeholder at `path` when it is what was made: an empty directory, or for a file
 * placeholder (`text` set) a file holding `text`, or when a kill may have cut its writing short
 * (`cut`), the start of it (one written since is the user's); whether it did.
 */
export function removeMade(path: string, text: string | undefined, cut = false): boolean {
  if (text === undefined) return removeEmpty(path);
  const found = textUpTo(path, new TextEncoder().encode(text).length);
  if (found === null || (cut ? !text.startsWith(found) : found !== text)) return false;
  try {
    Deno.removeSync(path);
    return true;
  } catch {
    return false; // gone meanwhile
  }
}

/** The permission bits of `info`. */
function modeOf(info: Deno.FileInfo): number {
  return (info.mode ?? 0) & 0o7777;
}

/**
 * When process `pid` started (clock ticks since boot, /proc/PID/stat field 22), or null when it
 * is gone or there is no /proc: with the pid, it names one process, whatever pid reuse brings.
 */
function startOf(pid: number): string | null {
  return procStat(pid)?.[19] ?? null;
}

/** Whether the kernel that named its directory of records `name` (`<pid>-<start>`) still runs. */
function runs(name: string): boolean {
  const [pid, start] = name.split("-");
  return start !== undefined && startOf(Number(pid)) === start;
}

/** The record in `file`, or null when it holds none (torn by a kill while it was written). */
function readRecord(file: string): PlaceholderRecord | null {
  try {
    const record = JSON.parse(Deno.readTextFileSync(file));
    const valid = typeof record?.path === "string" && typeof record?.intended === "number" &&
      (record.text === undefined || typeof record.text === "string") &&
      (record.staged === undefined || typeof record.staged === "string") &&
      (record.identity === undefined || typeof record.identity === "string") &&
      (record.mode === undefined || typeof record.mode === "number");
    return valid ? record : null;
  } catch {
    return null;
  }
}

/**
 * Whether the entry `info` at `record.path` is the placeholder the kernel made (a directory, or a
 * file for a record with a text, which {@link removeMade} checks): of the recorded identity and
 * mode; for a record the kill came before completing, one marked as placeholders are (a sticky
 * directory, a file without write permission) born around the time the kernel was about to make it.
 */
function made(record: PlaceholderRecord, info: Deno.FileInfo): boolean {
  if (record.text === undefined ? !info.isDirectory : !info.isFile) return false;
  if (record.identity !== undefined) {
    return modeOf(info) === record.mode && identityOf(record.path) === record.identity;
  }
  const born = (info.birthtime ?? info.ctime)?.getTime();
  const marked = record.text === undefined
    ? (modeOf(info) & 0o1000) !== 0
    : (modeOf(info) & 0o222) === 0;
  return marked && born !== undefined &&
    born >= record.intended - BORN_BEFORE_MS && born <= record.intended + BORN_AFTER_MS;
}

/**
 * Removes the file a kernel killed while making a file placeholder left where it wrote it before
 * renaming it into place: a file without write permission holding the start of the text; whether
 * it did.
 */
function removeStaged(record: PlaceholderRecord): boolean {
  const info = lstat(record.staged!);
  if (!info?.isFile || (modeOf(info) & 0o222) !== 0) return false;
  return removeMade(record.staged!, record.text ?? "", true);
}

/**
 * Removes what the ended kernels that recorded in `stateDir/placeholders` left there: a recorded
 * placeholder only when it is still an empty directory of the recorded identity
 * ({@link identityOf}) and mode, never one the user since filled, replaced or changed, nor one a
 * running sandbox binds; the records of kernels still running are left to them. From now on, every placeholder this kernel makes is
 * recorded ({@link intendPlaceholder}).
 */
export function keepPlaceholderRecords(stateDir: string): Leftovers {
  const base = `${stateDir}/placeholders`;
  Deno.mkdirSync(base, { recursive: true, mode: 0o700 });
  const found: Leftovers = { removed: [], kept: [] };
  const left: { file: string; record: PlaceholderRecord | null }[] = [];
  for (const owner of Deno.readDirSync(base)) {
    if (!owner.isDirectory || runs(owner.name)) continue;
    for (const entry of Deno.readDirSync(`${base}/${owner.name}`)) {
      const file = `${base}/${owner.name}/${entry.name}`;
      left.push({ file, record: readRecord(file) });
    }
  }
  // one a running sandbox of another kernel binds stays, and its record, for a later start
  const bound = mountedElsewhere(left.flatMap(({ record }) => record?.path ?? []), false);
  for (const { file, record } of left) {
    if (record !== null && bound.has(record.path)) continue;
    if (record?.staged !== undefined && removeStaged(record)) found.removed.push(record.staged);
    if (record !== null) {
      const info = lstat(record.path);
      if (
        info !== null && made(record, info) &&
        removeMade(record.path, record.text, record.identity === undefined)
      ) {
        found.removed.push(record.path);
      } else if (info !== null) found.kept.push(record.path);
    }
    forgetPlaceholder(file); // another kernel starting may have taken it first
  }
  for (const owner of Deno.readDirSync(base)) {
    if (!owner.isDirectory || runs(owner.name)) continue;
    try {
      Deno.removeSync(`${base}/${owner.name}`); // empty now, unless a record stayed
    } catch {
      // a record stayed
    }
  }
  records = `${base}/${Deno.pid}-${startOf(Deno.pid) ?? "0"}`;
  Deno.mkdirSync(records, { recursive: true, mode: 0o700 });
  return found;
}

/** Names the records this kernel writes. */
let recorded = 0;

/** A record of a placeholder about to be made: its file and what it holds so far. */
export interface Intent {
  file: string;
  record: PlaceholderRecord;
}

/**
 * Records that a placeholder is about to be made at `path` (a file of `text`, written at `staged`
 * first, when that is set, else a directory), before it is (a kill mid-write leaves an empty or
 * torn record, of nothing made yet); null when no records are kept. Throws when the record cannot
 * be written.
 */
export function intendPlaceholder(path: string, text?: string, staged?: string): Intent | null {
  if (records === null) return null;
  const record: PlaceholderRecord = text === undefined
    ? { path, intended: Date.now() }
    : { path, intended: Date.now(), text, ...staged === undefined ? {} : { staged } };
  const intent = { file: `${records}/${recorded++}.json`, record };
  Deno.writeTextFileSync(intent.file, JSON.stringify(intent.record), { mode: 0o600 });
  return intent;
}

/**
 * Completes the record of `intent`, whose placeholder was just made, with what it is: written
 * aside and renamed over it, so a kill leaves the whole former record or the whole new one.
 */
export function recordPlaceholder(intent: Intent): void {
  const { path } = intent.record;
  const record = { ...intent.record, identity: identityOf(path)!, mode: modeOf(lstat(path)!) };
  Deno.writeTextFileSync(`${intent.file}.new`, JSON.stringify(record), { mode: 0o600 });
  Deno.renameSync(`${intent.file}.new`, intent.file);
}

/** Removes the record `file` of a placeholder that is gone, if it is still there. */
export function forgetPlaceholder(file: string): void {
  try {
    Deno.removeSync(file);
  } catch {
    // gone already (the state directory went first, or another kernel took it)
  }
}
