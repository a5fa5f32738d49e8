/** The connection a URL makes (K-EFF-3a network rows). */
import type { ArgValue, CommandIO } from "./command_io.ts";

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443, "ftp:": 21 };

/**
 * How a tool reads a URL where the URL parser reads it otherwise: curl takes `http:/host/` and
 * `http:///host/` for `http://host/` (`slashes`) and, for a URL without a scheme, guesses one from
 * the host's first label (`ftp.x` is ftp's, `smtp.x` smtp's: `guess` "curl"); wget takes
 * `host:path` for `ftp://host/path` unless digits alone follow the colon (`guess` "wget").
 */
export interface UrlReading {
  slashes?: boolean;
  guess?: "curl" | "wget";
}

/** The schemes curl guesses from a host's first label (the rest are http's). */
const CURL_GUESSES = /^(ftp|dict|ldap|imap|smtp|pop3)\./i;

/** `text` (no scheme) as the tool that `guess` names reads it, with the scheme it guesses. */
function guessed(text: string, guess: UrlReading["guess"], defaultScheme: string): string {
  if (guess === "curl") {
    const host = /^[^/?#]*/.exec(text)![0];
    const label = CURL_GUESSES.exec(host.slice(host.lastIndexOf("@") + 1));
    if (label !== null) return `${label[1].toLowerCase()}://${text}`;
  }
  if (guess === "wget") {
    const colon = /^[^:/]*:/.exec(text);
    if (colon !== null && !/^\d+(\/|$)/.test(text.slice(colon[0].length))) {
      return `ftp://${colon[0].slice(0, -1)}/${text.slice(colon[0].length)}`;
    }
  }
  return `${defaultScheme}://${text}`;
}

/** Reports the connection a URL operand makes; `opaque` when it cannot be followed. */
export function connectUrl(
  io: CommandIO,
  arg: ArgValue,
  defaultScheme = "http",
  reading: UrlReading = {},
): void {
  if (arg.text === null) {
    io.opaque("dynamic URL");
    return;
  }
  const slashes = /^([A-Za-z][A-Za-z0-9+.-]*:)(\/|\/\/\/)(?!\/)/.exec(arg.text);
  const given = reading.slashes && slashes !== null && DEFAULT_PORTS[slashes[1].toLowerCase()]
    ? `${slashes[1]}//${arg.text.slice(slashes[0].length)}`
    : arg.text;
  const text = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(given)
    ? given
    : guessed(given, reading.guess, defaultScheme);
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
