/**
 * Which program a command name runs (issue 14): the known-command table describes the system's
 * programs, so a name is looked up along the session `PATH` as bash would, and only a hit in a
 * system directory counts as that command.
 */
import { physicalPath } from "./_physical_paths.ts";
import { SYSTEM_DIRS } from "./_shell_tables.ts";
import { isExecutableFile } from "../bash/executable_file.ts";
import { TooManyLookups } from "./_step_budget.ts";

/** Where a command name resolves. */
export interface Resolution {
  /** The program is a system one (the table applies), or the reason it is not. */
  system: true | string;
  /** `PATH` directories searched before the hit: a file written there would run instead. */
  shadowing: string[];
  /** Whether a program of that name exists now (bash runs `command_not_found_handle` otherwise). */
  found: boolean;
}

/** Homebrew's directories on Apple silicon, system directories on macOS (issue 15). */
const DARWIN_DIRS = ["/opt/homebrew/bin/", "/opt/homebrew/sbin/"];

/** Whether the physical directory of `file` is a system directory on `platform`. */
function inSystemDir(file: string, platform: string): boolean {
  const physical = physicalPath(file);
  if (physical === null) return false;
  const dir = physical.slice(0, physical.lastIndexOf("/") + 1);
  const systems = platform === "darwin" ? [...SYSTEM_DIRS, ...DARWIN_DIRS] : SYSTEM_DIRS;
  return systems.some((system) => physicalPath(system) + "/" === dir || system === dir);
}

/**
 * Resolves argv0 `name` from `cwd` with the session `PATH` (undefined: bash's default, the
 * system directories) on `platform`. A name with `/` must be a normalized absolute path in a system directory.
 * A null `cwd` (its name is not UTF-8, so its text names another directory) resolves no relative
 * `PATH` entry: a name reaching one is not the system's.
 */
export function resolveProgram(
  name: string,
  path: string | undefined,
  cwd: string | null,
  platform: string,
): Resolution {
  if (name.includes("/")) {
    if (!name.startsWith("/") || name.split("/").some((s) => s === ".." || s === ".")) {
      return { system: `program path not pinned: ${name}`, shadowing: [], found: true };
    }
    return {
      system: inSystemDir(name, platform)
        ? true
        : `program outside the system directories: ${name}`,
      shadowing: [],
      found: isExecutableFile(name),
    };
  }
  if (path === undefined) return { system: true, shadowing: [], found: true };
  const shadowing: string[] = [];
  for (const entry of path.split(":")) {
    if ((entry === "" || !entry.startsWith("/")) && cwd === null) {
      return {
        system: `${name} may resolve in a directory that is not UTF-8`,
        shadowing,
        found: true,
      };
    }
    const dir = entry === "" || !entry.startsWith("/") ? `${cwd}/${entry}` : entry;
    const file = `${dir.replace(/\/+$/, "")}/${name}`;
    if (isExecutableFile(file)) {
      return {
        system: inSystemDir(file, platform)
          ? true
          : `${name} resolves outside the system directories`,
        shadowing,
        found: true,
      };
    }
    shadowing.push(physicalPath(dir) ?? dir);
  }
  // Not found now: it fails, unless the source creates it in a PATH directory (checked by caller).
  return { system: true, shadowing, found: false };
}

/**
 * {@link resolveProgram} of one analysis, each name looked up once: a lookup costs ~80 µs (a stat
 * per PATH directory, a thrown error per miss) and a script names the same programs again and
 * again (E-4). Past `limit` distinct lookups it throws {@link TooManyLookups}.
 */
export class ProgramLookups {
  readonly #known = new Map<string, Resolution>();

  constructor(private readonly limit: number) {}

  /** {@link resolveProgram}'s answer, looked up at the first ask. */
  resolve(
    name: string,
    path: string | undefined,
    cwd: string | null,
    platform: string,
  ): Resolution {
    const key = `${name}\0${cwd}\0${path}\0${platform}`;
    let resolution = this.#known.get(key);
    if (resolution === undefined) {
      if (this.#known.size >= this.limit) throw new TooManyLookups();
      resolution = resolveProgram(name, path, cwd, platform);
      this.#known.set(key, resolution);
    }
    return resolution;
  }
}
