/**
 * Checks over every path a source touches, made once all of it is walked (issue 14): a path that
 * goes through a link the same run creates, a program written into a `PATH` directory searched
 * before the one analysed, and git's or another known command's configuration written before it
 * runs.
 */
import type { FsKind } from "./effect_types.ts";

/** Whether `path` (maybe a glob pattern) may be `target` or lie inside it. */
function mayTouch(path: string, target: string): boolean {
  const glob = path.search(/[*?[]|[@!+]\(/);
  if (glob < 0) return path === target || path.startsWith(`${target}/`);
  const prefix = path.slice(0, path.lastIndexOf("/", glob));
  return target.startsWith(`${prefix}/`) || target === prefix;
}

/** Paths recorded during one analysis, checked together at the end. */
export class PathChecks {
  readonly #records: { kind: FsKind; path: string }[] = [];
  readonly #links = new Set<string>();
  readonly #shadowing = new Set<string>();
  readonly #gitPaths = new Set<string>();
  /** Configuration files of known commands that ran, with the command. */
  readonly #toolPaths = new Map<string, string>();

  /** A path a command reads, writes or deletes. */
  record(kind: FsKind, path: string): void {
    this.#records.push({ kind, path });
  }

  /** A path that may become a (symbolic or hard) link during the run. */
  link(path: string): void {
    this.#links.add(path);
  }

  /** `PATH` directories searched before the program a command name resolved to. */
  shadowing(dirs: readonly string[]): void {
    for (const dir of dirs) this.#shadowing.add(dir);
  }

  /** Files and directories whose change makes git run other code. */
  gitPaths(paths: readonly string[]): void {
    for (const path of paths) this.#gitPaths.add(path);
  }

  /** Configuration files `command` reads (`~/.curlrc`): written, they change what it does. */
  toolPaths(command: string, paths: readonly string[]): void {
    for (const path of paths) this.#toolPaths.set(path, command);
  }

  /** Why the run is opaque after all, or null. */
  finish(): string | null {
    const writes = [
      ...this.#records.filter((r) => r.kind !== "fs_read").map((r) => r.path),
      ...this.#links,
    ];
    for (const { path } of this.#records) {
      for (const link of this.#links) {
        if (mayTouch(path, link)) return `path through a link the run creates: ${path}`;
      }
    }
    for (const path of writes) {
      const dir = path.slice(0, path.lastIndexOf("/")) || "/";
      for (const shadow of this.#shadowing) {
        if (dir === shadow || mayTouch(path, shadow)) {
          return `writes a PATH directory searched before a command: ${path}`;
        }
      }
      for (const git of this.#gitPaths) {
        if (mayTouch(path, git)) return `writes git configuration: ${path}`;
      }
      for (const [config, command] of this.#toolPaths) {
        if (mayTouch(path, config)) return `writes ${command} configuration: ${path}`;
      }
    }
    return null;
  }
}
