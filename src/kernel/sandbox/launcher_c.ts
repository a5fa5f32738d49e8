/**
 * The resident's launcher in C: {@link LAUNCHER_SCRIPT}'s protocol (`launcher_script.ts`: the
 * spare, the records on stdin, the `spare`/`exit` report lines) and nothing else, compiled once
 * with the host's C compiler where there is one (`compiled_launcher.ts`). A perl spare is a fork
 * of a perl interpreter, whose copy-on-write page faults made a sandboxed run cost twice the CPU of
 * an unconfined one on a paravirtualised host (issue 34); a fork of this program touches a few
 * pages. It takes no argument and loads nothing: it calls setsid(2) itself.
 *
 * Every length it reads is checked against what it holds: a record names its own length, the run
 * its number of environment entries, and a record or run file that does not add up is dropped (a
 * record) or fails as a spawn (exit 127), as perl's does.
 */
export const LAUNCHER_C = String.raw`
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int wake_r, wake_w; /* SIGCHLD writes a byte here: it wakes the select */
static pid_t spare;        /* the spare waiting for its request */
static int told = -1;      /* its pipe: a byte once it took a request, EOF once it ended */
static char **proxy_env;   /* the proxy variables the launcher started with (P-NET-1) */
static int proxy_count;

static void on_child(int sig) {
  (void)sig;
  int saved = errno;
  (void)!write(wake_w, "x", 1);
  errno = saved;
}

/* The report line of one format with one or two numbers, in one write. */
static void report(const char *format, long a, long b) {
  char line[64];
  int n = snprintf(line, sizeof line, format, a, b);
  (void)!write(1, line, n);
}

/* Splits bytes[0..len) at NUL into at most max fields; their count. bytes[len] must be NUL. */
static int split(char *bytes, size_t len, char **fields, int max) {
  int n = 0;
  fields[n++] = bytes;
  for (size_t i = 0; i < len && n < max; i++) {
    if (bytes[i] == 0) fields[n++] = bytes + i + 1;
  }
  return n;
}

/* The fields of bytes[0..len) (NUL-terminated at len), in a new array with room for a NULL. */
static char **fields_of(char *bytes, size_t len, int *count) {
  int max = 1;
  for (size_t i = 0; i < len; i++) max += bytes[i] == 0;
  char **fields = malloc(sizeof(char *) * (max + 1));
  if (fields == NULL) _exit(127);
  *count = split(bytes, len, fields, max);
  fields[*count] = NULL;
  return fields;
}

/* Reads the next records until one is for this process: its fields after the pid. */
static char **request(int *count) {
  int cap = fcntl(0, 1032 /* F_GETPIPE_SZ */, 0);
  if (cap <= 0) cap = 65536;
  char *buf = malloc(cap + 1);
  if (buf == NULL) _exit(127);
  char mine[24];
  snprintf(mine, sizeof mine, "%ld", (long)getpid());
  for (;;) {
    ssize_t got = read(0, buf, cap);
    if (got <= 0) _exit(0); /* the kernel is gone */
    ssize_t at = 0;
    while (got - at >= 8) {
      char hex[9], *end;
      memcpy(hex, buf + at, 8);
      hex[8] = 0;
      long len = strtol(hex, &end, 16);
      if (*end != 0 || len < 0 || len > got - at - 8) break;
      char *body = buf + at + 8;
      at += 8 + len;
      char kept = body[len];
      body[len] = 0;
      int n;
      char **fields = fields_of(body, len, &n);
      if (n > 4 && strcmp(fields[0], mine) == 0) {
        *count = n - 1;
        return fields + 1;
      }
      free(fields);
      body[len] = kept;
    }
  }
}

/* The whole of a run file, split into its fields. */
static char **run_file(const char *path, int *count) {
  FILE *file = fopen(path, "r");
  if (file == NULL) {
    dprintf(2, "shoal: cannot read %s: %s\n", path, strerror(errno));
    _exit(127);
  }
  char *data = NULL;
  size_t size = 0;
  FILE *all = open_memstream(&data, &size);
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, file)) > 0) fwrite(chunk, 1, n, all);
  fclose(all);
  fclose(file);
  return fields_of(data, size, count);
}

/* Opens path as fd (O_WRONLY, or O_RDONLY for stdin), or exits 127. */
static void reopen(const char *path, int flags, int fd) {
  int opened = open(path, flags);
  if (opened < 0) _exit(127);
  if (opened != fd) {
    dup2(opened, fd);
    close(opened);
  }
}

/* The spare: takes its request, tells the launcher on tell, and execs the run. */
static void take(int tell) {
  signal(SIGCHLD, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  close(wake_r);
  close(wake_w);
  int count;
  char **fields = request(&count);
  setsid();
  reopen("/dev/null", O_RDONLY, 0);
  reopen(fields[0], O_WRONLY, 1);
  reopen(fields[1], O_WRONLY, 2);
  char **run = fields + 2;
  count -= 2;
  if (run[0][0] == 0) run = run_file(run[1], &count);
  long entries = count >= 2 ? strtol(run[1], NULL, 10) : -1;
  if (entries < 0 || entries > count - 3) {
    dprintf(2, "shoal: a malformed run\n");
    _exit(127);
  }
  char **env = malloc(sizeof(char *) * (entries + proxy_count + 1));
  if (env == NULL) _exit(127);
  memcpy(env, run + 2, sizeof(char *) * entries);
  memcpy(env + entries, proxy_env, sizeof(char *) * proxy_count);
  env[entries + proxy_count] = NULL;
  char **argv = run + 2 + entries;
  (void)!write(tell, "t", 1);
  /* nothing but its three: not its pipe to the launcher, nor what the kernel was started with */
  syscall(436 /* close_range, the same number everywhere */, 3, ~0U, 0);
  if (chdir(run[0]) != 0) {
    dprintf(2, "shoal: cannot enter %s: %s\n", run[0], strerror(errno));
    _exit(126);
  }
  environ = env;
  execvp(argv[0], argv);
  dprintf(2, "shoal: cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

static void fork_spare(void) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    perror("pipe");
    exit(1);
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(1);
  }
  if (pid == 0) {
    close(pipe_fds[0]);
    take(pipe_fds[1]);
  }
  close(pipe_fds[1]);
  spare = pid;
  told = pipe_fds[0];
  report("spare %ld\n", pid, 0);
}

static void ended(pid_t pid, int status) {
  report("exit %ld %ld\n", pid, status);
  if (pid != spare) return;
  char byte;
  ssize_t took = read(told, &byte, 1);
  close(told);
  told = -1;
  if (took <= 0 && status == 0) exit(0); /* it read the end of stdin */
  fork_spare();
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) ended(pid, status);
}

/* Whether the NAME=value entry is a proxy variable (a name ending in "proxy", or GIT_SSH_COMMAND). */
static int is_proxy(const char *entry) {
  const char *eq = strchr(entry, '=');
  if (eq == NULL) return 0;
  size_t len = eq - entry;
  return (len >= 5 && strncasecmp(eq - 5, "proxy", 5) == 0) ||
         (len == 15 && strncmp(entry, "GIT_SSH_COMMAND", 15) == 0);
}

int main(void) {
  int all = 0;
  while (environ[all] != NULL) all++;
  proxy_env = malloc(sizeof(char *) * (all + 1));
  for (int i = 0; i < all; i++) {
    if (is_proxy(environ[i])) proxy_env[proxy_count++] = environ[i];
  }
  int wake[2];
  if (pipe2(wake, O_CLOEXEC) != 0) return 1;
  wake_r = wake[0];
  wake_w = wake[1];
  fcntl(wake_w, F_SETFL, O_NONBLOCK);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_child;
  action.sa_flags = SA_RESTART; /* a read of a spare's pipe is never cut short by another's end */
  sigaction(SIGCHLD, &action, NULL);
  signal(SIGPIPE, SIG_IGN);
  fork_spare();
  for (;;) {
    fd_set in;
    FD_ZERO(&in);
    FD_SET(wake_r, &in);
    FD_SET(told, &in);
    /* unbounded: unlike perl's handler, this one runs at once, and its byte waits in the pipe */
    int n = select((wake_r > told ? wake_r : told) + 1, &in, NULL, NULL, NULL);
    if (n < 0) {
      if (errno == EINTR) continue;
      perror("select");
      return 1;
    }
    if (FD_ISSET(wake_r, &in)) {
      char drop[4096];
      (void)!read(wake_r, drop, sizeof drop);
      reap();
      continue;
    }
    if (!FD_ISSET(told, &in)) continue;
    char byte;
    if (read(told, &byte, 1) == 1) {
      close(told);
      fork_spare();
      continue;
    }
    int status;
    pid_t pid = waitpid(spare, &status, 0);
    if (pid > 0) ended(pid, status);
  }
}
`;
