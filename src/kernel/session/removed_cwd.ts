/**
 * A session whose working directory was removed after an exec entered it (K-BASH-1/5): bash
 * cannot be started there, so every later exec failed, `cd /` included, until the session was
 * dropped.
 */
import { ErrorCode, RpcError } from "../../protocol/errors.ts";
import { spawnDir } from "../bash/shell_state.ts";
import type { Attachment } from "./attachment.ts";

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * Whether nothing but a file, or nothing at all, is at `path` now: a directory that cannot be
 * looked at (a path past PATH_MAX, say) is not taken for gone.
 */
function removed(path: string): boolean {
  try {
    return !Deno.statSync(path).isDirectory;
  } catch (e) {
    return e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory;
  }
}

/**
 * Moves the session of `attachment` into `dir` as a `cd` there would, `PWD` included when the
 * principal's view exports one (M-ONB-1, K-BASH-5).
 */
export function moveSession(attachment: Pick<Attachment, "session" | "principal">, dir: string) {
  const none = () => ({ set: new Map<string, string>(), unset: [] });
  const env = none();
  const { session, principal } = attachment;
  if (session.shell.view(principal).env.has("PWD")) env.set.set("PWD", dir);
  session.shell.merge(principal, {
    cwd: { cwd: dir },
    env,
    vars: none(),
    funcs: none(),
    aliases: none(),
  });
}

/**
 * Refuses a run of `attachment` whose session cwd no longer exists, before anything of it runs
 * or is journaled (-32603, `data.reason` `cwd_removed`), and moves the session to the nearest
 * existing directory above it (for a sandboxed principal, one its sandbox shows), so the next
 * exec runs there knowingly: never in a place its caller did not see named. Starting this run
 * there instead would have let `rm -rf *`, meant for the removed directory, empty its parent.
 */
export function refuseRemovedCwd(attachment: Attachment): void {
  const cwd = spawnDir(attachment.session.shell.view(attachment.principal));
  if (!removed(cwd)) return;
  const shows = (dir: string) => {
    if (!attachment.grants.sandboxed) return true;
    try {
      return attachment.grants.sandboxFor(dir) !== null;
    } catch {
      return false;
    }
  };
  let parent = cwd;
  do {
    parent = parent.slice(0, parent.lastIndexOf("/")) || "/";
  } while (parent !== "/" && !(isDirectory(parent) && shows(parent)));
  const moved = isDirectory(parent) && shows(parent);
  if (moved) moveSession(attachment, parent);
  throw new RpcError(
    ErrorCode.INTERNAL_ERROR,
    `cannot start bash: the session's working directory ${cwd} no longer exists; ` +
      (moved ? `the session is now in ${parent}; nothing ran` : "nothing ran"),
    { reason: "cwd_removed", cwd, moved_to: moved ? parent : null },
  );
}
