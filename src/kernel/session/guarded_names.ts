import { CONFIG_VARIABLE } from "../policy/_shell_tables.ts";

/**
 * Variables beyond {@link CONFIG_VARIABLE} that make bash, the loader or a common program run
 * code, load files or pick a program the caller did not name: word splitting, glibc's modules and
 * tunables, interpreters' start-up and module paths, build tools' compilers and flags (all of GNU
 * make's built-in programs, autoconf's site file, gcc's dependency output), pagers and the
 * options they pass to less and groff, editors and askpass helpers, shell history and zsh start
 * files, mail checks (bash expands their messages), OpenSSL engines, editors' and toolkits'
 * start-up code; and, by the shape of their
 * names, search paths, options and flags (`TAR_OPTIONS` runs `--checkpoint-action=exec=…`),
 * installation and configuration homes (`JAVA_HOME`, `AWS_CONFIG_FILE`), remote shells
 * (`RSYNC_RSH`), helper programs and wrappers, files and directories a program loads from
 * (`*_DIR`, `*_FILE`; oh-my-zsh's `ZSH_CUSTOM`, asdf's `ASDF_DATA_DIR`, which the human's
 * interactive shell sources or puts first on PATH), package managers' and cloud tools' settings,
 * the display and session bus a program talks to; Info-ZIP's default options (`zip -TT` runs a
 * command), the temporary directories Python's tempfile takes when `TMPDIR` is unset, bash's
 * message catalogues (a `$"…"` translation is expanded), Kerberos' and TLS key log files, the
 * locale, the time zone file, the modules GIO, GStreamer, GTK, SDL and graphics drivers load,
 * more build tools' and environment managers' settings (Maven's MAVEN_BASEDIR), all of Go's
 * settings, programs' added arguments (`*_ARGS`), bash's TMOUT and FUNCNEST (the human's
 * reads time out, idle shells exit, nested function calls fail), wine's and cvs's programs, and
 * programs and start-up commands a few more tools take from one variable each.
 */
const MORE_GUARDED = new RegExp(
  "^(" + [
    "IFS",
    "SHELL",
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "MALLOC_.*",
    "LOCPATH",
    "NLSPATH",
    "HOSTALIASES",
    "RES_OPTIONS",
    "LOCALDOMAIN",
    "PYTHON.*",
    "PERL.*",
    "RUBY.*",
    "GEM_.*",
    "BUNDLE_.*",
    "NODE_.*",
    "NPM_CONFIG_.*",
    "npm_config_.*",
    "DENO_.*",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "CLASSPATH",
    "MAKEFLAGS",
    "MAKEFILES",
    "MFLAGS",
    "CC",
    "CXX",
    "CPP",
    "LD",
    "AR",
    // the rest of GNU make's built-in variables, which the environment overrides: `$(MAKE)` in a
    // recursive make, `$(RM)` in `make clean`, `$(OUTPUT_OPTION)` in every implicit compile
    "MAKE",
    "RM",
    "AS",
    "F77",
    "FC",
    "M2C",
    "PC",
    "CO",
    "GET",
    "LEX",
    "YACC",
    "LINT",
    "MAKEINFO",
    "TEX",
    "TEXI2DVI",
    "WEAVE",
    "CWEAVE",
    "TANGLE",
    "CTANGLE",
    "OBJC",
    "OUTPUT_OPTION",
    // gcc appends its dependency rules, with a target of the variable's choosing, to the file it
    // names (a line of the human's ~/.bashrc); gcc's and clang's other settings
    "DEPENDENCIES_OUTPUT",
    "SUNPRO_DEPENDENCIES",
    "GCC_.*",
    "CCC_.*",
    // what an autoconf `./configure` sources, and the shell it runs itself again with
    "CONFIG_SITE",
    "CONFIG_SHELL",
    "[A-Z]*FLAGS",
    "CARGO_.*",
    "RUSTC.*",
    "RUSTUP_.*",
    // all of Go's: GOWORK names the go.work whose directories the build compiles, GOCACHE and
    // GOMODCACHE the objects it links and the module sources it compiles unchecked
    "GO[A-Z0-9]*",
    "DOCKER_.*",
    "KUBECONFIG",
    "SSH_.*",
    ".*ASKPASS",
    "GNUPGHOME",
    "GPG_.*",
    "BROWSER",
    "MANPAGER",
    "MANOPT",
    // man-db puts MANLESS, systemd's tools SYSTEMD_LESS, into less's options: `+!cmd` runs cmd
    "MANLESS",
    // man-db's options to groff (`-U -M dir -m name` loads a macro file that runs commands)
    "MANROFFOPT",
    "MANROFFSEQ",
    "MAN_.*",
    "SYSTEMD_.*",
    // GNU parallel's default options (`--rpl` takes Perl code)
    "PARALLEL",
    // psql's system psqlrc (`\!` runs a command) and service file, IPython's startup scripts,
    // matplotlib's backend
    "PG[A-Z]*",
    "IPYTHONDIR",
    "MPLCONFIGDIR",
    ".*_PAGER",
    ".*_EDITOR",
    "TERMINFO.*",
    "PKG_CONFIG_.*",
    "ZDOTDIR",
    "FPATH",
    "HIST.*",
    // where sqlite3, psql, mysql, gdb … write the human's history (like HISTFILE)
    ".*HIST(ORY|FILE)",
    // the python gcloud runs with, valgrind's tools, the rustdoc `cargo doc` runs, pytest's
    // added options and plugins (`-c FILE -p MODULE` loads the agent's module)
    "CLOUDSDK_.*",
    "VALGRIND_.*",
    "RUSTDOC.*",
    "PYTEST_.*",
    "MAIL(PATH|CHECK)?",
    "OPENSSL_.*",
    "LUA_.*",
    "TCLLIBPATH",
    "R_(LIBS.*|PROFILE.*|ENVIRON.*)",
    "PHP_INI_SCAN_DIR",
    "VIMINIT",
    "EXINIT",
    "QT_PLUGIN_PATH",
    "GTK_(PATH|MODULES|EXE_PREFIX)",
    // the libraries GLib's GIO loads from GIO_EXTRA_MODULES (the human's `gio info /` ran an
    // agent's library), GStreamer's plugins and scanner, GTK 2/3's and GDK's modules, the library
    // SDL_DYNAMIC_API names, EGL's, GLX's, Vulkan's and OpenCL's drivers
    "GIO_.*",
    "GST_.*",
    "GTK.*",
    "GDK_.*",
    "SDL_.*",
    "__(EGL|GLX)_.*",
    "VK_.*",
    "OCL_.*",
    ".*_(FILES|FILENAMES)",
    ".*PATH",
    ".*FLAGS",
    ".*_OPTS",
    ".*_OPTIONS",
    // arguments a program adds to its own (MAVEN_ARGS `-f POM -s SETTINGS`, ANT_ARGS `-lib DIR`)
    ".*_ARGS",
    ".*_HOME",
    ".*_ROOT",
    ".*_CONFIG.*",
    ".*_(RSH|SSH)",
    ".*_(PROG|PROGRAM|COMMAND|CMD|WRAPPER|LAUNCHER|PREFIX)",
    // what shell frameworks and version managers, loaded by the human's rc files, source or put
    // first on PATH: oh-my-zsh's ZSH_CUSTOM, oh-my-bash's OSH_CUSTOM, asdf's ASDF_DATA_DIR …
    ".*_(DIR|DIRS|FILE|CUSTOM|INSTALL)",
    "ZSH.*",
    "OSH.*",
    "(NVM|ASDF|MISE|RTX|SDKMAN|RBENV|NODENV|PYENV|JENV|GOENV|NVIM|STARSHIP|DIRENV)_.*",
    // shoal's own: the kernel the human's shoal-mcp starts, the socket its CLI approves through
    "SHOAL_.*",
    "FCEDIT",
    "VIRTUAL_ENV",
    "CONDA.*",
    "(PIP|UV|POETRY|PIPX|YARN|PNPM|BUN|COMPOSER)_.*",
    "(CMAKE|CCACHE|DISTCC|DOTNET|CORECLR|COMPlus|ERL|JULIA)_.*",
    "(AWS|TF|ANSIBLE|GH|FZF)_.*",
    // Maven's launcher reads the JVM options of $MAVEN_BASEDIR/.mvn/jvm.config (the human's mvn
    // ran -XX:OnOutOfMemoryError=PROGRAM of the agent's); the java ant and gradle run; kubectl's
    // diff program; where tmux's server is; the registries, archives, package stores and
    // interpreters of more build tools and environment managers; Hugging Face's hub; TeX's inputs
    // and kpathsea's shell_escape; the system bus
    "(MAVEN|GRADLE|COREPACK|BAZELISK|MIX|HEX|NUGET|PIPENV|HATCH|PDM|TOX|NOX|RYE|PIXI)_.*",
    "(VAGRANT|HELM|HELIX|HF|HUGGINGFACE|TRANSFORMERS|DBUS)_.*",
    "JAVA.*",
    "JDK_.*",
    "KUBE.*",
    "TMUX.*",
    "USE_BAZEL.*",
    "OPAM.*",
    "GHC.*",
    "TEX.*",
    ".*INPUTS",
    "shell_escape.*",
    "open(in|out)_any",
    // the credentials file Google's libraries and tools sign in with (the human's uploads would
    // go to the agent's account)
    "GOOGLE_.*",
    "HG.*",
    "EMACS.*",
    "VIM.*",
    "REQUESTS_CA_BUNDLE",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
    "ZIPOPT",
    // xz's default options (`--files=LIST` compresses, and removes, the files LIST names)
    "XZ_OPT",
    "XZ_DEFAULTS",
    "UNZIP(OPT)?",
    "ZIPINFO(OPT)?",
    "TEMP",
    "TMP",
    "TEMPDIR",
    "TEXTDOMAIN(DIR)?",
    "TZDIR",
    "KRB5.*",
    "SSLKEYLOGFILE",
    // the locale the human's bash reads the restored variables in: in Big5, GBK or GB18030 a
    // character's second byte may be the backslash that escapes a quote in a value dumped in
    // UTF-8 (one the human read from a file of the agent's), and the rest of it ran as the human
    "LANG",
    "LANGUAGE",
    "LC_.*",
    // the time zone file every program loads (`TZ=/path`), as TZDIR; the hosts bash completes
    "TZ",
    "HOSTFILE",
    // no code, but the human's own shell: every `read` times out, an idle interactive one exits;
    // at FUNCNEST=1 every nested function call fails, stopping the command that made it
    "TMOUT",
    "FUNCNEST",
    // wine runs the loader and server they name and loads DLLs from the prefix, native ones
    // first where the overrides say so; cvs runs its editor, and the server of a :fork: root
    "WINE.*",
    "CVSEDITOR",
    "CVS_SERVER",
    // programs named outright: darcs' copy programs, pacdiff's diff, SwiftPM's compiler,
    // Cypress's binary; podman's and buildah's configuration names the runtime, conmon, hooks
    // and the storage's mount program they run
    "DARCS_SCP",
    "DARCS_SFTP",
    "DIFFPROG",
    "SWIFT_EXEC",
    "CYPRESS_RUN_BINARY",
    "CONTAINERS_.*",
    // commands run at start-up or for a file's type: gvim's Ex commands, the mailcap files of
    // run-mailcap, mutt and w3m; coverage.py's configuration loads plugins into every Python
    // process once COVERAGE_PROCESS_START names it; matplotlib imports a `module://` backend
    "GVIMINIT",
    "MAILCAPS",
    "COVERAGE_PROCESS_START",
    "COVERAGE_RCFILE",
    "MPLBACKEND",
    // editors' extensions (`code .` from the session loads them), module and package paths of
    // Raku, Dart and Nim, and the programs nnn, lf and terminal launchers open files with
    "VSCODE_EXTENSIONS",
    "VSCODE_PORTABLE",
    "RAKULIB",
    "PUB_CACHE",
    "DART_SDK",
    "NIM_LIB",
    "NNN_OPENER",
    "OPENER",
    "TERMINAL",
    // just takes its flags from JUST_*: the justfile whose recipes `just build` runs, its shell
    "JUST_.*",
    // ts-node requires the compiler and transpiler they name, and its tsconfig's `require`;
    // Prisma loads the query engine library and runs the schema engine they name
    "TS_NODE_.*",
    "PRISMA_.*",
  ].join("|") + ")$",
);

/**
 * Names judged so far: every exec tests every name of two environments against two alternations
 * of some 200 patterns, the same few dozen names each time (issue 33).
 */
const judged = new Map<string, boolean>();
/** Judged names kept at most: an environment of many names is judged again, not held. */
const JUDGED_KEPT = 4096;

/**
 * Whether a variable's value can make bash or a program it runs execute code, load files or
 * resolve another program (P-SBX-7, K-EFF-6): a principal's change to such a name stays its own.
 */
export function guardedName(name: string): boolean {
  let guarded = judged.get(name);
  if (guarded === undefined) {
    guarded = CONFIG_VARIABLE.test(name) || MORE_GUARDED.test(name);
    if (judged.size >= JUDGED_KEPT) judged.clear();
    judged.set(name, guarded);
  }
  return guarded;
}

/** Whether two environments hold the same value (or none) for every guarded name. */
export function sameGuardedEnv(
  a: ReadonlyMap<string, string>,
  b: ReadonlyMap<string, string>,
): boolean {
  for (const [name, value] of a) if (guardedName(name) && b.get(name) !== value) return false;
  for (const name of b.keys()) if (guardedName(name) && !a.has(name)) return false;
  return true;
}
