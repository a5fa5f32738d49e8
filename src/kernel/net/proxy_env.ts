/**
 * The environment that points a sandboxed run's tools at the proxy (P-NET-1): set for that run
 * only, and taken out of the state it leaves, so the session never keeps it.
 */

import { CONNECT_FILE, NET_MOUNT, PERL } from "./inside.ts";

/**
 * The variables and values a run behind the proxy listening on loopback `port` gets; each name
 * ends in `proxy` (any case) or is GIT_SSH_COMMAND, which is how the sandbox's launcher tells
 * them apart.
 */
export function proxyEnv(port: number): [string, string][] {
  const http = `http://127.0.0.1:${port}`;
  return [
    // libcurl (curl, git) reads lower-case http_proxy only; most others either case
    ["http_proxy", http],
    ["HTTP_PROXY", http],
    ["https_proxy", http],
    ["HTTPS_PROXY", http],
    // the HTTP form, which the proxy serves for any protocol: some clients (httpx) fail on socks5h
    ["all_proxy", http],
    ["ALL_PROXY", http],
    ["grpc_proxy", http],
    ["GRPC_PROXY", http],
    // nothing goes around the proxy: there is no route there
    ["no_proxy", ""],
    ["NO_PROXY", ""],
    // npm's own settings win over ~/.npmrc; its defaults already read HTTP(S)_PROXY
    ["npm_config_proxy", http],
    ["npm_config_https_proxy", http],
    ["npm_config_noproxy", ""],
    // node >= 24 (and 22.21) reads the variables above in fetch and http(s) only when asked to:
    // without it a sandboxed node connects directly, where there is no route
    ["NODE_USE_ENV_PROXY", "1"],
    // git over ssh: ssh reads no proxy variable, its ProxyCommand asks the proxy (a run's own
    // GIT_SSH_COMMAND or core.sshCommand could not leave the sandbox anyway)
    [
      "GIT_SSH_COMMAND",
      `ssh -o ProxyCommand='${PERL} ${NET_MOUNT}/${CONNECT_FILE} ${port} %h %p'`,
    ],
  ];
}

/**
 * Takes the proxy variables out of a run's final environment `end` where they still hold the
 * values the run was given: each gets back its value at the run's start `start` (or none).
 */
export function withoutProxyEnv(
  start: ReadonlyMap<string, string>,
  end: Map<string, string>,
  port: number,
): void {
  for (const [name, value] of proxyEnv(port)) {
    if (end.get(name) !== value) continue;
    const before = start.get(name);
    if (before === undefined) end.delete(name);
    else end.set(name, before);
  }
}
