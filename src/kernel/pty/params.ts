/** Params schemas of the `pty.*` methods (K-PTY-1..6); unknown members are ignored (C-6). */

import { z } from "zod";
import { PTY_DEFAULT_COLS, PTY_DEFAULT_ROWS } from "../../protocol/limits.ts";

/**
 * An environment variable's name: not empty, no `=` and no NUL. The environment is a list of
 * `NAME=VALUE` strings, so a name `PERL5OPT=-MEvil` would set PERL5OPT, past every check made by
 * name: the names held back from the host programs that start a sandbox (P-SBX-3) among them.
 */
const envName = z.string().regex(/^[^=\0]+$/, "an environment variable name has no '=' and no NUL");

/** `pty.open` params (K-PTY-1); `cols`/`rows` are clamped later, so any integer passes. */
export const ptyOpenParams = z.object({
  cmd: z.string().min(1),
  args: z.array(z.string()).default([]),
  cols: z.number().int().default(PTY_DEFAULT_COLS),
  rows: z.number().int().default(PTY_DEFAULT_ROWS),
  env: z.record(envName, z.string()).default({}),
});

/** `pty.send` params (K-PTY-2); `input` is checked in full by `encodePtyInput`. */
export const ptySendParams = z.object({
  pty_id: z.string(),
  input: z.custom<unknown>((v) => v !== undefined, "input is required"),
});

/** `pty.read` params (K-PTY-3). */
export const ptyReadParams = z.object({ pty_id: z.string() });

/** `pty.resize` params (K-PTY-4); both sizes required, clamped later. */
export const ptyResizeParams = z.object({
  pty_id: z.string(),
  cols: z.number().int(),
  rows: z.number().int(),
});

/** `pty.close` params (K-PTY-5). */
export const ptyCloseParams = z.object({ pty_id: z.string() });

/** `pty.list` params (K-PTY-6): none. */
export const ptyListParams = z.object({});
