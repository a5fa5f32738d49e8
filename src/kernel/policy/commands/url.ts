/** The connection a URL makes (K-EFF-3a network rows). */
import type { ArgValue, CommandIO } from "./command_io.ts";

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443, "ftp:": 21 };

/**
 * Reports the connection a URL operand makes; `opaque` when it cannot be followed. `loneSlashes`:
 * the tool (curl) reads `http:/host/` and `http:///host/` as `http://host/`, where the URL parser
 * reads a scheme-less `http:/host/` as the host `http`.
 */
export function connectUrl(
  io: CommandIO,
  arg: ArgValue,
  defaultScheme = "http",
  loneSlashes = false,
): void {
  if (arg.text === null) {
    io.opaque("dynamic URL");
    return;
  }
  const slashes = /^([A-Za-z][A-Za-z0-9+.-]*:)(\/|\/\/\/)(?!\/)/.exec(arg.text);
  const given = loneSlashes && slashes !== null && DEFAULT_PORTS[slashes[1].toLowerCase()]
    ? `${slashes[1]}//${arg.text.slice(slashes[0].length)}`
    : arg.text;
  const text = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(given) ? given : `${defaultScheme}://${given}`;
  // curl and wget end the authority at `/`, `?` or `#` only: a `\` is a character of it (in
  // `https://granted.example\@other.example/` of the userinfo), where the URL parser reads `/`
  const authority = /^([^:]*:\/\/)([^/?#]*)/.exec(text);
  const written = authority === null
    ? text
    : authority[1] + authority[2].replaceAll("\\", "%5C") + text.slice(authority[0].length);
  let url: URL;
  try {
    url = new URL(written);
  } catch {
    io.opaque("unparsable URL");
    return;
  }
  const port = DEFAULT_PORTS[url.protocol];
  if (
    // `[`/`{` are curl's globs; `*` no host holds, and named as one it would read as a grant's
    port === undefined || url.hostname === "" ||
    /[[{*]/.test(url.hostname.replace(/^\[.*\]$/, ""))
  ) {
    io.opaque(`unsupported URL: ${arg.text}`);
    return;
  }
  io.connect(url.hostname, url.port === "" ? port : Number(url.port));
}
