/** curl: the hosts it connects to and the files it reads and writes. */
import { type ArgValue, type CommandIO, eachOutput, eachPath, STATIC } from "./command_io.ts";
import { hasOption, optionValues, parse } from "./_getopt.ts";
import { connectUrl } from "./url.ts";
import { CURL_FLAGS, CURL_OTHER_VALUES } from "./curl_options.ts";

const CURL_VALUE_LONG = [
  "data",
  "data-ascii",
  "data-binary",
  "data-raw",
  "data-urlencode",
  "json",
  "header",
  "proxy-header",
  "output",
  "output-dir",
  "user",
  "user-agent",
  "referer",
  "request",
  "form",
  "form-string",
  "upload-file",
  "write-out",
  "cookie",
  "cookie-jar",
  "config",
  "max-time",
  "connect-timeout",
  "retry",
  "retry-delay",
  "retry-max-time",
  "proxy",
  "preproxy",
  "socks4",
  "socks4a",
  "socks5",
  "socks5-hostname",
  "proxy-user",
  "noproxy",
  "range",
  "continue-at",
  "dump-header",
  "trace",
  "trace-ascii",
  "stderr",
  "unix-socket",
  "abstract-unix-socket",
  "cert",
  "key",
  "cacert",
  "capath",
  "cert-type",
  "key-type",
  "pass",
  "ciphers",
  "resolve",
  "connect-to",
  "interface",
  "limit-rate",
  "netrc-file",
  "url",
  "url-query",
  "max-filesize",
  "max-redirs",
  "speed-limit",
  "speed-time",
  "time-cond",
  "oauth2-bearer",
  "dns-servers",
  "local-port",
  "variable",
  "expect100-timeout",
  "keepalive-time",
  "aws-sigv4",
  "hsts",
  "alt-svc",
  "etag-save",
  "etag-compare",
  "proto",
  "proto-redir",
  "proto-default",
  "login-options",
  "mail-from",
  "mail-rcpt",
  "mail-auth",
  "request-target",
  "ftp-port",
  "quote",
  "telnet-option",
  "create-file-mode",
  "parallel-max",
  "rate",
  "libcurl",
  "doh-url",
  "proxy1.0",
  "proxy-cacert",
  "proxy-capath",
  "proxy-cert",
  "proxy-key",
  "crlfile",
  "proxy-crlfile",
  "pubkey",
  "random-file",
  "egd-file",
];

/** curl: URLs and proxies it connects to, files it uploads, reads and writes. */
export function curl(args: ArgValue[], io: CommandIO): void {
  const parsed = parse(args, {
    short: "AbcCdDeEFHKmoPQrtTuUwxXyYz",
    long: [...CURL_VALUE_LONG, ...CURL_OTHER_VALUES],
    // `--parallel` is an exact option, not `--parallel-max` abbreviated.
    flags: [
      "remote-name",
      "remote-name-all",
      "remote-header-name",
      "parallel",
      "netrc",
      "netrc-optional",
      "create-dirs",
      ...CURL_FLAGS,
    ],
  }, io);
  if (parsed === null) return;
  const unknown = parsed.options.find(({ name }) =>
    name.startsWith("--") && !knownLong(name.slice(2))
  );
  if (unknown !== undefined) {
    io.opaque(`curl option not known: ${unknown.name}`);
    return;
  }
  const opaqueOptions = [
    "-K",
    "--config",
    "--unix-socket",
    "--abstract-unix-socket",
    "--connect-to",
    "--resolve",
    "--variable",
    // an OpenSSL engine: a shared library, which a path may name, loaded into curl
    "--engine",
    // active FTP: curl listens for the server's data connection
    "-P",
    "--ftp-port",
    // caches curl reads before connecting: an alt-svc entry sends a granted origin's request to
    // another host and port, an HSTS entry an http:// URL to port 443
    "--alt-svc",
    "--hsts",
  ];
  if (hasOption(parsed, ...opaqueOptions)) {
    io.opaque("curl option not followed");
    return;
  }
  const urls = [...parsed.operands, ...optionValues(parsed, "--url", "--doh-url")];
  // a URL without a scheme is --proto-default's when given (the last), else curl guesses one
  const scheme = optionValues(parsed, "--proto-default").at(-1);
  if (scheme !== undefined && scheme.text === null) {
    io.opaque("dynamic --proto-default");
    return;
  }
  for (const url of urls) {
    if (scheme === undefined) connectUrl(io, url, "http", { slashes: true, guess: "curl" });
    else connectUrl(io, url, scheme.text!.toLowerCase(), { slashes: true });
  }
  for (
    const proxy of optionValues(
      parsed,
      "-x",
      "--proxy",
      "--proxy1.0",
      "--preproxy",
      "--socks4",
      "--socks4a",
      "--socks5",
      "--socks5-hostname",
    )
  ) {
    const text = proxy.text;
    if (text !== null && !text.includes("://") && !/:\d+$/.test(text)) {
      connectUrl(io, STATIC(`${text}:1080`), "http", { slashes: true });
    } else connectUrl(io, proxy, "http", { slashes: true });
  }
  const outputs = optionValues(
    parsed,
    "-o",
    "--output",
    "-c",
    "--cookie-jar",
    "-D",
    "--dump-header",
    "--trace",
    "--trace-ascii",
    "--stderr",
    "--etag-save",
    "--hsts",
    "--alt-svc",
    "--libcurl",
  );
  // `#N` in an output name is replaced by what the URL's Nth glob (`{a,b}`, `[1-3]`) matched.
  if (outputs.some((output) => /#\d/.test(output.text ?? output.prefix))) {
    io.opaque("curl output named by a URL glob");
    return;
  }
  eachOutput(io, outputs);
  // `--create-dirs` makes the missing directories on the way to each output
  if (hasOption(parsed, "--create-dirs")) {
    for (const output of outputs) if (output.text !== "-") io.parents(output);
    for (const dir of optionValues(parsed, "--output-dir")) {
      io.parents(dir.text === null ? dir : STATIC(`${dir.text}/.`));
    }
  }
  // `-n` sends the credentials ~/.netrc holds for the host (or its `default` entry)
  const netrc = hasOption(parsed, "-n", "--netrc", "--netrc-optional");
  if (netrc && !hasOption(parsed, "--netrc-file")) io.homePath("fs_read", ".netrc");
  eachPath(io, "fs_write", optionValues(parsed, "--output-dir"));
  if (hasOption(parsed, "-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name")) {
    if (!hasOption(parsed, "--output-dir")) io.cwd("fs_write");
    // each file is named after its URL (or the server's choice, any name) and opened through a
    // link of that name
    const dir = optionValues(parsed, "--output-dir").at(-1)?.text ?? ".";
    const server = hasOption(parsed, "-J", "--remote-header-name");
    if (server) io.output(STATIC(`${dir}/*`));
    for (const name of server ? [] : urls.map(remoteName)) {
      if (name === null) io.opaque("curl remote file name not known");
      else if (name !== "") io.link(STATIC(dir), [STATIC(name)], { links: false, use: "output" });
    }
  }
  eachPath(
    io,
    "fs_read",
    optionValues(
      parsed,
      "-T",
      "--upload-file",
      "-E",
      "--cert",
      "--key",
      "--cacert",
      "--netrc-file",
      "--etag-compare",
      "--proxy-cacert",
      "--proxy-capath",
      "--proxy-cert",
      "--proxy-key",
      "--crlfile",
      "--proxy-crlfile",
      "--pubkey",
      "--random-file",
      "--egd-file",
    ),
  );
  // a public key to pin: a file unless given as `sha256//HASH`
  const pinned = optionValues(parsed, "--pinnedpubkey", "--proxy-pinnedpubkey");
  eachPath(io, "fs_read", pinned.filter((key) => !(key.text ?? key.prefix).startsWith("sha256//")));
  const dataOptions = [
    "-d",
    "--data",
    "--data-binary",
    "--data-ascii",
    "--data-urlencode",
    "--json",
    "-F",
    "--form",
    "-b",
    "--cookie",
    "-H",
    "--header",
    "--proxy-header",
    "--url-query",
  ];
  for (const option of parsed.options) {
    if (!dataOptions.includes(option.name) || option.value === null) continue;
    const value = option.value;
    if (value.text === null) {
      if (value.prefix === "" || /[@<]/.test(value.prefix)) io.opaque("dynamic curl data");
      continue;
    }
    const file = curlDataFile(option.name, value.text);
    if (file !== null) io.path("fs_read", STATIC(file));
  }
  for (const format of optionValues(parsed, "-w", "--write-out")) writeOut(format, io);
}

/**
 * `-w FORMAT`: curl 8.3 writes what follows `%output{NAME}` (`%output{>>NAME}` appends) into
 * NAME; a format read from a file (`@FILE`) may name any.
 */
function writeOut(format: ArgValue, io: CommandIO): void {
  const text = format.text;
  // a dynamic part may itself hold an `%output{…}`
  if (text === null) {
    io.opaque("dynamic curl write-out");
    return;
  }
  if (text.startsWith("@")) {
    if (text === "@-") io.opaque("curl write-out format from standard input");
    else io.opaque("curl write-out format from a file");
    return;
  }
  for (const match of text.matchAll(/%output\{(?:>>)?([^}]*)\}/g)) io.output(STATIC(match[1]));
}

/** Whether `name` is a long option of curl 7.88 (or the `--no-` form of one without a value). */
function knownLong(name: string): boolean {
  const flag = (n: string) => CURL_FLAGS.includes(n);
  return CURL_VALUE_LONG.includes(name) || CURL_OTHER_VALUES.includes(name) || flag(name) ||
    (name.startsWith("no-") && flag(name.slice(3)));
}

/** The name `curl -O` saves a URL under: its path's last segment; null when not static. */
function remoteName(url: ArgValue): string | null {
  if (url.text === null) return null;
  const path = url.text.replace(/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/, "").replace(/[?#].*$/s, "");
  const name = path.slice(path.lastIndexOf("/") + 1);
  return /[[\]{}]/.test(name) || name === "." || name === ".." ? null : name;
}

/** The file a curl data/form/cookie value reads, if any. */
function curlDataFile(option: string, value: string): string | null {
  if (option === "-b" || option === "--cookie") return value.includes("=") ? null : value;
  if (option === "-F" || option === "--form") {
    const match = /^[^=]*=[@<]([^;]*)/.exec(value);
    return match ? match[1] : null;
  }
  // `--url-query` takes `--data-urlencode` forms, or one starting with `+` sent as it is
  if (option === "--url-query" && value.startsWith("+")) return null;
  if (option === "--data-urlencode" || option === "--url-query") {
    const match = /^[^=@]*@(.*)$/s.exec(value);
    return match ? match[1] : null;
  }
  return value.startsWith("@") && value !== "@-" ? value.slice(1) : null;
}
