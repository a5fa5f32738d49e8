/**
 * The files a `.envrc` has direnv load (P-SBX-6): direnv runs them as it runs the `.envrc` itself,
 * in the human's shell, without asking again (its `direnv allow` covers the `.envrc` alone), so a
 * file a protected `.envrc` sources is as protected. `source_env_if_exists .envrc.local` and
 * `dotenv` (a `.env` file's variables, `LD_PRELOAD` or `PATH` among them) are the usual ones.
 */
import { readSmallFile } from "../bash/small_file.ts";
import { normalizePath } from "../bash/lexical_path.ts";

/** Most of a `.envrc` read for the files it loads. */
const ENVRC_LIMIT = 65536;

/**
 * A line that loads a file: direnv's `source_env`, `source_env_if_exists`, `dotenv`,
 * `dotenv_if_exists` (whose file is `.env` when none is named), or bash's `source` and `.`, with
 * the word it names (up to the end of the word: `;`, `&&`, a comment may follow).
 */
const LOADS =
  /^\s*(source_env_if_exists|source_env|dotenv_if_exists|dotenv|source|\.)(?:\s+("[^"]*"|'[^']*'|[^\s;&|()#]+))?\s*(?:$|[;&|#])/;

/**
 * The absolute paths of the files the `.envrc` at `envrc`, in directory `dir`, loads by a literal
 * word (one with a `$`, a backquote or a glob is not followed); `~/` is `home`. A `source_env` of a
 * directory loads that directory's `.envrc`.
 */
export function envrcSources(envrc: string, dir: string, home: string | undefined): string[] {
  const text = readSmallFile(envrc, ENVRC_LIMIT);
  if (text === null) return [];
  const found: string[] = [];
  // each simple command of a line: `[[ -f .envrc.local ]] && source_env .envrc.local` too
  const commands = text.split("\n").flatMap((line) => line.split(/;|&&|\|\||\b(?:then|do|else)\b/));
  for (const line of commands) {
    const m = LOADS.exec(line);
    if (m === null) continue;
    let word = m[2] ?? (m[1].startsWith("dotenv") ? ".env" : null);
    if (word === null) continue;
    const quoted = /^(["'])(.*)\1$/s.exec(word);
    // bash expands a `$`, a backquote or a glob: what the word names then is not known here
    if (quoted === null && /[$`*?[\]{}\\]/.test(word)) continue;
    if (quoted !== null && quoted[1] === '"' && /[$`\\]/.test(quoted[2])) continue;
    if (quoted !== null) word = quoted[2];
    if (word.startsWith("~/")) {
      if (home === undefined) continue;
      word = `${home}${word.slice(1)}`;
    }
    const path = normalizePath(word.startsWith("/") ? word : `${dir}/${word}`);
    let directory = false;
    try {
      directory = m[1].startsWith("source_env") && Deno.statSync(path).isDirectory;
    } catch {
      // absent: held as a file
    }
    found.push(directory ? `${path}/.envrc` : path);
  }
  return found;
}
