/**
 * The resident's launcher in C: {@link LAUNCHER_SCRIPT}'s protocol (`launcher_script.ts`: the
 * spare, the records on stdin, the `spare`/`exit` report lines) and nothing else, compiled once
 * with the host's C compiler where there is one (`compiled_launcher.ts`). A fork copies the
 * forking process's page tables, which on a paravirtualised host costs more than the exec after it
 * (a fork of perl twice the CPU of an unconfined run, issue 34; of this program ~0.6 ms): its
 * spare is a clone sharing its memory (CLONE_VM, as posix_spawn's child does), waiting on a pipe
 * for the run the launcher itself reads off stdin and prepares. The spare then only makes system
 * calls (no allocation, no stdio) until it execs, and the launcher keeps the run's memory and the
 * spare's stack untouched until the spare's pipe back closes at that exec (or its end); only then
 * is the next spare cloned. It takes no argument and loads nothing: it calls setsid(2) itself.
 *
 * Every length it reads is checked against what it holds: a record names its own length, the run
 * its number of environment entries, and a record or run file that does not add up is dropped (a
 * record) or fails as a spawn (exit 127), as perl's does.
 */
export const LAUNCHER_C = String.raw`
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define STACK_SIZE (256 * 1024)
#define RECORDS (64 * 1024) /* records are at most PIPE_BUF long: a run too long names a file */

static int wake_r, wake_w; /* SIGCHLD writes a byte here: it wakes the select */
static char **proxy_env;   /* the proxy variables the launcher started with (P-NET-1) */
static int proxy_count;
static char *stack;        /* the spare's stack, a guard page below it */

static pid_t spare;        /* the spare waiting for its run */
static int go = -1;        /* its pipe from here: a byte once its run is ready */
static int told = -1;      /* its pipe to here (close-on-exec): EOF once it exec'd or ended */
static int go_r, told_w;   /* the ends the spare keeps */
static int taken;          /* whether its run was handed to it */

/* The run handed to the spare: made here, only read there until told closes. */
static struct {
  char *out, *err, *cwd, *path, *fail;
  char **argv, **env;
  int fail_status;
  char *record, *file;
  char **fields;
} run;

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

/* The fields of bytes[0..len) (NUL-terminated at len) split at NUL, in a new NULL-ended array. */
static char **fields_of(char *bytes, size_t len, int *count) {
  int max = 1;
  for (size_t i = 0; i < len; i++) max += bytes[i] == 0;
  char **fields = malloc(sizeof(char *) * (max + 1));
  if (fields == NULL) exit(1);
  int n = 0;
  fields[n++] = bytes;
  for (size_t i = 0; i < len && n < max; i++) {
    if (bytes[i] == 0) fields[n++] = bytes + i + 1;
  }
  fields[n] = NULL;
  *count = n;
  return fields;
}

/* The whole of a file, NUL-terminated (its length in *size), or NULL with errno set. */
static char *whole_file(const char *path, size_t *size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  size_t cap = 65536, len = 0;
  char *data = malloc(cap + 1);
  for (;;) {
    if (data == NULL) exit(1);
    ssize_t got = read(fd, data + len, cap - len);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int saved = errno;
      free(data);
      close(fd);
      errno = saved;
      return NULL;
    }
    if (got == 0) break;
    len += got;
    if (len == cap) data = realloc(data, (cap *= 2) + 1);
  }
  close(fd);
  data[len] = 0;
  *size = len;
  return data;
}

static void free_run(void) {
  free(run.fail);
  free(run.env);
  free(run.fields);
  free(run.file);
  free(run.record);
  memset(&run, 0, sizeof run);
}

/* Makes the run one that fails as a spawn does: the message on its stderr, then the status. */
static void failing(int status, const char *what, const char *path, const char *why) {
  if (asprintf(&run.fail, "shoal: %s%s%s%s\n", what, path, why[0] ? ": " : "", why) < 0) exit(1);
  run.fail_status = status;
}

/* Prepares the run of a record's fields after its pid: the FIFOs, then the run or its file. */
static void prepare(char **fields, int count) {
  run.out = fields[0];
  run.err = fields[1];
  char **fs = fields + 2;
  count -= 2;
  if (fs[0][0] == 0) {
    size_t size;
    run.file = whole_file(fs[1], &size);
    if (run.file == NULL) {
      failing(127, "cannot read ", fs[1], strerror(errno));
      return;
    }
    fs = run.fields = fields_of(run.file, size, &count);
  }
  long entries = count >= 2 ? strtol(fs[1], NULL, 10) : -1;
  if (entries < 0 || entries > count - 3) {
    failing(127, "a malformed run", "", "");
    return;
  }
  run.env = malloc(sizeof(char *) * (entries + proxy_count + 1));
  if (run.env == NULL) exit(1);
  memcpy(run.env, fs + 2, sizeof(char *) * entries);
  memcpy(run.env + entries, proxy_env, sizeof(char *) * proxy_count);
  run.env[entries + proxy_count] = NULL;
  run.cwd = fs[0];
  run.argv = fs + 2 + entries;
  for (long i = 0; i < entries; i++) {
    if (strncmp(fs[2 + i], "PATH=", 5) == 0) run.path = fs[2 + i] + 5;
  }
}

/* Writes the NUL-terminated pieces to stderr (no stdio: the spare shares the launcher's memory). */
static void say(const char *a, const char *b, const char *c, const char *d) {
  const char *parts[] = {a, b, c, d, "\n"};
  for (int i = 0; i < 5; i++) (void)!write(2, parts[i], strlen(parts[i]));
}

/* Opens path as fd (O_WRONLY, or O_RDONLY for stdin), or ends the spare with 127. */
static void reopen(const char *path, int flags, int fd) {
  int opened = open(path, flags);
  if (opened < 0) _exit(127);
  if (opened != fd) {
    dup2(opened, fd);
    close(opened);
  }
}

/* Execs name as execvp would, searching the run's PATH for a name without a slash. */
static void exec_run(char *name, char **argv, char **env) {
  if (strchr(name, '/') != NULL || run.path == NULL) {
    execve(name, argv, env);
    return;
  }
  char full[4096];
  size_t name_len = strlen(name);
  int denied = 0;
  for (const char *dir = run.path;; dir++) {
    const char *end = strchrnul(dir, ':');
    size_t dir_len = end - dir;
    if (dir_len + 1 + name_len < sizeof full) {
      memcpy(full, dir, dir_len);
      size_t at = dir_len;
      if (dir_len == 0) full[at++] = '.';
      full[at++] = '/';
      memcpy(full + at, name, name_len + 1);
      execve(full, argv, env);
      if (errno == EACCES) denied = 1;
    }
    if (*end == 0) break;
    dir = end;
  }
  if (denied) errno = EACCES;
}

/*
 * The spare: waits for its run, then opens its output, enters its directory and execs it. System
 * calls only: its memory is the launcher's (CLONE_VM), and so is errno, which the launcher never
 * reads.
 */
static int spare_main(void *unused) {
  (void)unused;
  signal(SIGPIPE, SIG_DFL);
  close(go);
  close(told);
  close(wake_r);
  close(wake_w);
  char byte;
  ssize_t got;
  while ((got = read(go_r, &byte, 1)) < 0) {
  }
  if (got == 0) _exit(0); /* the launcher ended without a run for it */
  setsid();
  reopen("/dev/null", O_RDONLY, 0);
  reopen(run.out, O_WRONLY, 1);
  reopen(run.err, O_WRONLY, 2);
  if (run.fail != NULL) {
    (void)!write(2, run.fail, strlen(run.fail));
    _exit(run.fail_status);
  }
  /* nothing but its three and, until the exec, its pipe back (as fd 3, close-on-exec) */
  if (told_w != 3 && dup3(told_w, 3, O_CLOEXEC) < 0) _exit(127);
  syscall(436 /* close_range, the same number everywhere */, 4, ~0U, 0);
  if (chdir(run.cwd) != 0) {
    say("shoal: cannot enter ", run.cwd, ": ", strerror(errno));
    _exit(126);
  }
  exec_run(run.argv[0], run.argv, run.env);
  say("shoal: cannot run ", run.argv[0], ": ", strerror(errno));
  _exit(127);
}

static void clone_spare(void) {
  int go_fds[2], told_fds[2];
  if (pipe2(go_fds, O_CLOEXEC) != 0 || pipe2(told_fds, O_CLOEXEC) != 0) {
    perror("pipe");
    exit(1);
  }
  go = go_fds[1];
  go_r = go_fds[0];
  told = told_fds[0];
  told_w = told_fds[1];
  pid_t pid = clone(spare_main, stack + STACK_SIZE, CLONE_VM | SIGCHLD, NULL);
  if (pid < 0) {
    perror("clone");
    exit(1);
  }
  close(go_r);
  close(told_w);
  spare = pid;
  taken = 0;
  report("spare %ld\n", pid, 0);
}

/* The spare's pipe back closed: it exec'd its run (the next spare is cloned) or it ended. */
static void spare_gone(void) {
  close(told);
  told = -1;
  close(go);
  go = -1;
  if (!taken) return;
  free_run();
  clone_spare();
}

static void ended(pid_t pid, int status) {
  report("exit %ld %ld\n", pid, status);
  if (pid != spare) return;
  if (told >= 0) {
    char byte;
    while (read(told, &byte, 1) > 0) {
    }
    spare_gone();
    if (pid != spare) return;
  }
  /* it ended before its run: killed, or the launcher's end */
  clone_spare();
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) ended(pid, status);
}

/* Reads stdin's records: the spare's run is prepared and handed to it, others dropped. */
static void requests(void) {
  static char in[RECORDS];
  static size_t have;
  ssize_t got = read(0, in + have, sizeof in - have);
  if (got == 0) exit(0); /* the kernel is gone */
  if (got < 0) return;
  have += got;
  size_t at = 0;
  while (have - at >= 8) {
    char hex[9], *end;
    memcpy(hex, in + at, 8);
    hex[8] = 0;
    long len = strtol(hex, &end, 16);
    if (*end != 0 || len < 0 || len > (long)sizeof in - 8) {
      at = have; /* not a record: what came with it is dropped too */
      break;
    }
    if ((size_t)len > have - at - 8) break; /* the rest comes with the next read */
    char mine[24];
    snprintf(mine, sizeof mine, "%ld", (long)spare);
    char *body = in + at + 8;
    at += 8 + len;
    if (taken || len <= (long)strlen(mine) || memcmp(body, mine, strlen(mine) + 1) != 0) continue;
    int n;
    run.record = malloc(len + 1);
    if (run.record == NULL) exit(1);
    memcpy(run.record, body, len);
    run.record[len] = 0;
    char **fields = fields_of(run.record, len, &n);
    if (n <= 4) {
      free(fields);
      free_run();
      continue;
    }
    prepare(fields + 1, n - 1);
    if (run.fields == NULL) run.fields = fields;
    else free(fields);
    taken = 1;
    (void)!write(go, "g", 1);
  }
  memmove(in, in + at, have - at);
  have -= at;
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
  long page = sysconf(_SC_PAGESIZE);
  char *map = mmap(NULL, STACK_SIZE + page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (map == MAP_FAILED || mprotect(map, page, PROT_NONE) != 0) return 1;
  stack = map + page;
  int wake[2];
  if (pipe2(wake, O_CLOEXEC) != 0) return 1;
  wake_r = wake[0];
  wake_w = wake[1];
  fcntl(wake_w, F_SETFL, O_NONBLOCK);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_child;
  action.sa_flags = SA_RESTART;
  sigaction(SIGCHLD, &action, NULL);
  signal(SIGPIPE, SIG_IGN);
  clone_spare();
  for (;;) {
    fd_set in;
    FD_ZERO(&in);
    FD_SET(0, &in);
    FD_SET(wake_r, &in);
    if (told >= 0) FD_SET(told, &in);
    int top = wake_r > told ? wake_r : told;
    /* unbounded: the handler's byte waits in the pipe; a spare's errno may show here, so a failed
       select is only tried again */
    if (select(top + 1, &in, NULL, NULL, NULL) < 0) continue;
    if (FD_ISSET(wake_r, &in)) {
      char drop[4096];
      (void)!read(wake_r, drop, sizeof drop);
      reap();
      continue;
    }
    if (told >= 0 && FD_ISSET(told, &in)) {
      char byte;
      if (read(told, &byte, 1) == 0) spare_gone();
      continue;
    }
    if (FD_ISSET(0, &in)) requests();
  }
}
`;
