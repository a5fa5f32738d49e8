import { clientConfig, thisInstall } from "./client_config.ts";
import { type Command, EnvReader } from "./config.ts";
import { provision, ProvisionError } from "./onboard.ts";
import { projectSession } from "../protocol/project_session.ts";
import { RELEASE_KERNEL } from "./permissions.ts";
import { terminalJson } from "../protocol/unshowable.ts";

/**
 * `--print-config`: provisions the sandboxed agent and prints its configuration (M-ONB-1), or
 * with `--as-human` the unconfined one, with a warning. Exits 1 when provisioning failed.
 */
export async function printConfig(
  command: Extract<Command, { action: "print-config" }>,
  log: (line: string) => void,
): Promise<number> {
  if (command.asHuman) {
    log(
      "shoal-mcp: warning: --as-human: this configuration has no token, so the agent acts as you: " +
        "unconfined, no sandbox, no approvals, your whole file system and network",
    );
    console.log(clientConfig(command.client, thisInstall(), null));
    return 0;
  }
  const env = new EnvReader(log);
  const kernel = env.get("SHOAL_KERNEL") ?? RELEASE_KERNEL;
  try {
    const install = thisInstall();
    const agent = await provision(
      kernel,
      env.get("PATH") ?? null,
      command.client,
      command.project,
      install.path,
    );
    console.log(clientConfig(command.client, install, agent));
    log(
      `session: agent:${command.client} works in this project's own session ` +
        `${projectSession(agent.project)} (another project gets another)`,
    );
    return 0;
  } catch (e) {
    if (!(e instanceof ProvisionError)) throw e;
    log(`shoal-mcp: ${terminalJson(e.message)}; nothing printed`);
    return 1;
  }
}
