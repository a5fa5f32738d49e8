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

/** Whether `record` is a placeholder's record as written (a torn one is not). */
function validRecord(record: PlaceholderRecord | null): record is PlaceholderRecord {
  return typeof record?.path === "string" && typeof record?.intended === "number" &&
    (record.text === undefined || typeof record.text === "string") &&
    (record.staged === undefined || typeof record.staged === "string") &&
    (record.identity === undefined || typeof record.identity === "string") &&
    (record.mode === undefined || typeof record.mode === "number");
}

/**
 * The records in `file`: those of one sandbox's placeholders, or the one record a kernel before
 * issue 33 kept per file; none when it holds none (torn by a kill while it was written).
 */
function readRecords(file: string): PlaceholderRecord[] {
  try {
    const read = JSON.parse(Deno.readTextFileSync(file));
    const records = Array.isArray(read) ? read : [read];
    return records.every(validRecord) ? records : [];
  } catch {
    return [];
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

/** The state directory's `placeholders`, once {@link keepPlaceholderRecords} has run. */
let base: string | null = null;

/** Whether the last {@link removeLeftovers} left records that a sandbox still binds. */
let leftBound = false;

/**
 * Removes what the ended kernels that recorded in `stateDir/placeholders` left there
 * ({@link removeLeftovers}). From now on, every placeholder this kernel makes is recorded
 * ({@link intendPlaceholders}).
 */
export function keepPlaceholderRecords(stateDir: string): Leftovers {
  base = `${stateDir}/placeholders`;
  Deno.mkdirSync(base, { recursive: true, mode: 0o700 });
  const found = removeLeftovers();
  records = `${base}/${Deno.pid}-${startOf(Deno.pid) ?? "0"}`;
  Deno.mkdirSync(records, { recursive: true, mode: 0o700 });
  return found;
}

/**
 * Whether the last {@link removeLeftovers} left placeholders of ended kernels because a sandbox
 * binds them: looked at again later, since that sandbox's end tells this kernel nothing.
 */
export function leftoversBound(): boolean {
  return leftBound;
}

/**
 * Removes what the ended kernels that recorded in the state directory left: a recorded
 * placeholder only when it is still an empty directory of the recorded identity
 * ({@link identityOf}) and mode, never one the user since filled, replaced or changed, nor one a
 * running sandbox binds (it stays, and its record, for a later look); the records of kernels still
 * running are left to them.
 */
export function removeLeftovers(): Leftovers {
  const found: Leftovers = { removed: [], kept: [] };
  leftBound = false;
  if (base === null) return found;
  const left: { file: string; records: PlaceholderRecord[] }[] = [];
  try {
    for (const owner of Deno.readDirSync(base)) {
      if (!owner.isDirectory || runs(owner.name)) continue;
      for (const entry of Deno.readDirSync(`${base}/${owner.name}`)) {
        const file = `${base}/${owner.name}/${entry.name}`;
        left.push({ file, records: readRecords(file) });
      }
    }
  } catch {
    return found; // the state directory is gone: nothing left to look at
  }
  // one a running sandbox of another kernel binds stays, and its record, for a later look
  const bound = mountedElsewhere(left.flatMap(({ records }) => records.map((r) => r.path)), false);
  for (const { file, records } of left) {
    const staying = records.filter((record) => bound.has(record.path));
    if (staying.length > 0) leftBound = true;
    for (const record of records.filter((record) => !bound.has(record.path))) {
      if (record.staged !== undefined && removeStaged(record)) found.removed.push(record.staged);
      const info = lstat(record.path);
      if (
        info !== null && made(record, info) &&
        removeMade(record.path, record.text, record.identity === undefined)
      ) {
        found.removed.push(record.path);
      } else if (info !== null) found.kept.push(record.path);
    }
    try {
      // another kernel starting may have taken it first
      if (staying.length === 0) removeFile(file);
      else if (staying.length < records.length) writeRecords(file, staying);
    } catch {
      // kept whole: a later kernel judges its records afresh
    }
  }
  try {
    for (const owner of Deno.readDirSync(base)) {
      if (!owner.isDirectory || runs(owner.name)) continue;
      try {
        Deno.removeSync(`${base}/${owner.name}`); // empty now, unless a record stayed
      } catch {
        // a record stayed
      }
    }
  } catch {
    // the state directory is gone
  }
  return found;
}

/** Names the records this kernel writes. */
let recorded = 0;

/** What {@link intendPlaceholders} is given of each placeholder about to be made. */
export interface Intended {
  path: string;
  /** The text of a file placeholder, written at `staged` first; a directory when unset. */
  text?: string;
  staged?: string;
}

/**
 * The records of the placeholders one sandbox makes, in one file: written before they are made,
 * completed once they are, and removed with the last of them.
 */
export interface Intent {
  file: string;
  records: PlaceholderRecord[];
}

/**
 * Records that the placeholders `intended` are about to be made (a file of its text, written at
 * its `staged` first, when that is set, else a directory), before they are (a kill mid-write
 * leaves an empty or torn record, of nothing made yet), in one file: a file written per
 * placeholder, twice, cost the first exec of a sandboxed agent in a fresh project ~0.9 ms each,
 * 18 of them, on this ext4 (issue 33). Null when no records are kept. Throws when the record
 * cannot be written.
 */
export function intendPlaceholders(intended: readonly Intended[]): Intent | null {
  if (records === null || intended.length === 0) return null;
  const now = Date.now();
  const intent: Intent = {
    file: `${records}/${recorded++}.json`,
    records: intended.map(({ path, text, staged }) =>
      text === undefined
        ? { path, intended: now }
        : { path, intended: now, text, ...staged === undefined ? {} : { staged } }
    ),
  };
  Deno.writeTextFileSync(intent.file, JSON.stringify(intent.records), { mode: 0o600 });
  return intent;
}

/** Writes `list` to `file` aside and renames it over, so a kill leaves the whole former list or the new one. */
function writeRecords(file: string, list: readonly PlaceholderRecord[]): void {
  Deno.writeTextFileSync(`${file}.new`, JSON.stringify(list), { mode: 0o600 });
  Deno.renameSync(`${file}.new`, file);
}

/** Removes the record file `file` if it is still there. */
function removeFile(file: string): void {
  try {
    Deno.removeSync(file);
  } catch {
    // gone already (the state directory went first, or another kernel took it)
  }
}

/**
 * Completes the records of `intent` with what each placeholder of `made` (the paths just made)
 * is; the others, not made, leave it. Its file goes when none was made.
 */
export function recordPlaceholders(intent: Intent, made: ReadonlySet<string>): void {
  intent.records = intent.records.filter((record) => made.has(record.path)).map((record) => ({
    ...record,
    identity: identityOf(record.path)!,
    mode: modeOf(lstat(record.path)!),
  }));
  if (intent.records.length === 0) removeFile(intent.file);
  else writeRecords(intent.file, intent.records);
}

/**
 * Takes the placeholders at `paths`, which are gone, out of `intent`'s records: its file goes with
 * the last one, else is written again without them.
 */
export function forgetPlaceholders(intent: Intent, paths: readonly string[]): void {
  const records = intent.records.filter((record) => !paths.includes(record.path));
  if (records.length === intent.records.length) return;
  intent.records = records;
  try {
    if (records.length === 0) removeFile(intent.file);
    else writeRecords(intent.file, records);
  } catch {
    // the state directory is gone or full: a later kernel finds it gone, or judges it afresh
  }
}
