import { dirname } from "node:path";
import type { SocketChoice } from "../../protocol/socket_path.ts";
import type { ServeArgs } from "../cli/serve_args.ts";
import { bashOwnVariables } from "../bash/shell_state.ts";
import { Kernel } from "./kernel.ts";
import { defaultPolicy, loadPolicyFile, startupPolicyPath } from "../policy/leash.ts";
import { detectSandbox } from "../sandbox/probe.ts";
import { acceptLoop } from "./accept_loop.ts";
import { prepareSocket, StartupError } from "./socket_prep.ts";

/** Picks the bash binary: `--bash`, else the first of /bin/bash, /usr/bin/bash, `bash` on PATH (K-CLI-1). */
function resolveBash(flag: string | undefined): string {
  const candidates = flag ? [flag] : ["/bin/bash", "/usr/bin/bash", "bash"];
  for (const bash of candidates) {
    try {
      const out = new Deno.Command(bash, {
        args: ["-c", 'echo "${BASH_VERSINFO[0]} ${BASH_VERSINFO[1]}"'],
        stdout: "piped",
        stderr: "null",
      }).outputSync();
      const [major, minor] = new TextDecoder().decode(out.stdout).trim().split(" ").map(Number);
      if (major > 4 || (major === 4 && minor >= 4)) return bash;
      if (flag) throw new StartupError(1, `${bash} is bash ${major}.${minor}; 4.4 or later needed`);
    } catch (e) {
      if (e instanceof StartupError) throw e;
    }
  }
  throw new StartupError(1, `no usable bash (tried ${candidates.join(", ")})`);
}

/** Runs the daemon until SIGINT/SIGTERM; returns the exit status (G-SOCK-3..9). */
export async function serve(
  opts: ServeArgs,
  stateDir: string,
  socket: SocketChoice,
): Promise<number> {
  Deno.env.delete("SHOAL_TOKEN");
  const env = Deno.env.toObject();
  const uid = Deno.uid() ?? 0;
  const bash = resolveBash(opts.bash);
  const policyPath = startupPolicyPath(opts.policy ?? null, env);
  let policy;
  try {
    policy = policyPath === null ? defaultPolicy() : loadPolicyFile(policyPath);
  } catch (e) {
    throw new StartupError(1, e instanceof Error ? e.message : String(e));
  }
  await Deno.mkdir(`${stateDir}/tmp`, { recursive: true, mode: 0o700 });
  const prepared = await prepareSocket(socket, uid);
  const cwd = Deno.cwd();
  const kernel = await Kernel.start({
    stateDir: stateDir,
    socketPath: socket.path,
    bash,
    bashVariables: bashOwnVariables(bash),
    localHuman: `uid:${uid}`,
    home: env.HOME || undefined,
    policy,
    sandbox: {
      host: await detectSandbox(env.PATH ?? ""),
      home: env.HOME || undefined,
      masked: [stateDir, dirname(socket.path), ...(policyPath === null ? [] : [policyPath])],
    },
    initialState: () => ({
      cwd,
      env: new Map(Object.entries(env)),
      vars: new Map(),
      funcs: new Map(),
      aliases: new Map(),
    }),
  });
  const stop = new AbortController();
  Deno.addSignalListener("SIGTERM", () => stop.abort());
  Deno.addSignalListener("SIGINT", () => stop.abort());
  kernel.log(`ready ${socket.path}`);
  await acceptLoop(kernel, prepared.listener, stop.signal);
  await kernel.shutdown();
  prepared.release();
  return 0;
}
