/**
 * Where known commands read configuration that can change what they do (issue 14): a curl whose
 * `.curlrc` names an output file or URL, a less whose `LESSOPEN` runs a preprocessor, an rg whose
 * config adds `--pre`, a jq whose `~/.jq` redefines its builtins. When such configuration is
 * present, the command is opaque; a variable the session inherited unchanged from the kernel's
 * start is the local human's and does not count.
 */

/**
 * Environment variables and files that configure a command: `~/` is the session HOME, `$NAME`
 * the value of a variable when set (an inherited one is trusted, the file it names is not: a
 * command may have written it).
 */
interface ToolConfig {
  env: readonly string[];
  files: readonly string[];
}

/**
 * Proxies, the file curl and wget append TLS session secrets to, and the OpenSSL configuration,
 * whose providers and engines are shared libraries it loads.
 */
const TRANSFER_ENV = [
  "SSLKEYLOGFILE",
  "OPENSSL_CONF",
  "OPENSSL_MODULES",
  "OPENSSL_ENGINES",
  "http_proxy",
  "https_proxy",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "all_proxy",
  "ftp_proxy",
];

const TOOL_CONFIG: Record<string, ToolConfig> = {
  curl: {
    env: ["CURL_HOME", "XDG_CONFIG_HOME", ...TRANSFER_ENV],
    files: [
      "~/.curlrc",
      "~/.config/.curlrc",
      "~/_curlrc",
      "$CURL_HOME/.curlrc",
      "$XDG_CONFIG_HOME/.curlrc",
    ],
  },
  wget: {
    env: ["WGETRC", "SYSTEM_WGETRC", ...TRANSFER_ENV],
    files: ["~/.wgetrc", "$WGETRC", "$SYSTEM_WGETRC"],
  },
  less: {
    env: [
      "LESSOPEN",
      "LESSCLOSE",
      "LESS",
      "LESSKEY",
      "LESSKEYIN",
      "LESSKEY_CONTENT",
      "LESSEDIT",
      // the system lesskey files, and where the user's lesskey source is
      "LESSKEY_SYSTEM",
      "LESSKEYIN_SYSTEM",
      "XDG_CONFIG_HOME",
    ],
    files: [
      "~/.lesskey",
      "~/.config/lesskey",
      "~/.lesskey.in",
      "$LESSKEY",
      "$LESSKEYIN",
      "$XDG_CONFIG_HOME/lesskey",
    ],
  },
  rg: { env: ["RIPGREP_CONFIG_PATH"], files: ["$RIPGREP_CONFIG_PATH"] },
  grep: { env: ["GREP_OPTIONS"], files: [] },
  // a `~/.jq` file is sourced into every program (redefining `length` as `$ENV`, say); jq 1.7
  // takes a directory there as a module library
  jq: { env: [], files: ["~/.jq"] },
};

/**
 * Why `command` is configured beyond what analysis sees, or null when it is not. A variable
 * configures it only when set and `changed` since the session's start (K-EFF-6).
 */
export function toolConfigured(
  command: string,
  env: Readonly<Record<string, string>>,
  changed: ReadonlySet<string>,
  home: string | undefined,
): string | null {
  const config = Object.hasOwn(TOOL_CONFIG, command) ? TOOL_CONFIG[command] : undefined;
  if (config === undefined) return null;
  const name = config.env.find((name) => Object.hasOwn(env, name) && changed.has(name));
  if (name !== undefined) return `${command} configured by ${name}`;
  if (home === undefined && config.files.some((file) => file.startsWith("~/"))) {
    return `${command} reads configuration from an unknown HOME`;
  }
  for (const path of toolConfigFiles(command, env, home)) {
    try {
      Deno.lstatSync(path);
      return `${command} configured by ${path}`;
    } catch {
      // absent: nothing configured there
    }
  }
  return null;
}

/**
 * The configuration files `command` reads (absolute, as the session's HOME and variables name
 * them): one written by the same source configures it too.
 */
export function toolConfigFiles(
  command: string,
  env: Readonly<Record<string, string>>,
  home: string | undefined,
): string[] {
  const config = Object.hasOwn(TOOL_CONFIG, command) ? TOOL_CONFIG[command] : undefined;
  return (config?.files ?? []).flatMap((file) => {
    const variable = /^\$([A-Z_]+)/.exec(file)?.[1];
    if (variable === undefined) return home === undefined ? [] : [`${home}/${file.slice(2)}`];
    return Object.hasOwn(env, variable) ? [env[variable] + file.slice(variable.length + 1)] : [];
  });
}
