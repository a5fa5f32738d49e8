/**
 * The launcher a resident sandbox runs as its bwrap command (perl: perl-base is Essential on
 * Debian, and /usr is visible in every view). It keeps one forked "spare" child waiting on the
 * launcher's stdin, which the kernel writes; the spare reads one request, leads a new session and
 * process group, opens its output FIFOs and execs the run's program: a sandboxed spawn costs one
 * exec, and its pid (known to the kernel before the request) is the run's. Once the spare has
 * taken a request and opened its FIFOs, it writes `t` on its pipe to the launcher, which forks the
 * next spare. The launcher is the parent of every run and reports on its stdout:
 *
 * - `spare <pid>`: a new spare waits (pid inside the sandbox);
 * - `exit <pid> <wait status>`: a child of the launcher ended (the raw waitpid(2) status).
 *
 * A request is one record: its byte length as 8 hex digits and then, joined by NUL, the pid of
 * the spare it is for, the stdout and stderr FIFOs (paths inside), and its run: the working
 * directory, the number of environment entries, the `NAME=value` entries and the argv — or, when
 * that would not fit in one record, an empty field and the path inside of a file holding the run
 * (the same fields, joined by NUL). The kernel writes each record in one write of at most
 * PIPE_BUF bytes, which a pipe keeps whole, and a spare takes what waits with one read of the
 * pipe's capacity: a read is never cut by a kill, so the next spare starts at a record's start
 * whenever its predecessor died. It runs the record for its pid and drops the others (left by a
 * spare killed before it read them) and any it cannot parse, waiting for none. The spare runs it
 * with stdin /dev/null and exactly that environment, plus the proxy variables (`*proxy`,
 * GIT_SSH_COMMAND) the launcher started with (those its forwarder set, P-NET-1; bwrap adds only PWD); a failure before the exec is written to its
 * stderr FIFO and it exits 126 (no directory) or 127 (no program or run file). A spare that reads
 * the end of stdin (the kernel is gone) exits 0, and the launcher with it, and its sandbox with
 * the launcher. Perl runs its SIGCHLD handler (which wakes the launcher's `select`) only between
 * its own ops: a child that ends just before `select` blocks wakes nothing, so that wait is
 * bounded (0.1 s) and each timeout reaps.
 *
 * It loads no module but strict: POSIX.pm (and POSIX.so) made each fork of a spare and its exec
 * some 2 ms of CPU dearer on a paravirtualised host (the copy-on-write faults of a larger address
 * space), and Errno (which `%!` loads) cost the launcher 13 more page faults per run (53 against 40;
 * issue 34). The spare makes its session by setsid(2)'s number, the script's argument
 * ({@link launcherArgs}), and by POSIX only when that number is missing or fails.
 */
export const LAUNCHER_SCRIPT = String.raw`
use strict;
$| = 1;
my $setsid_number = $ARGV[0];
pipe(my $wake_r, my $wake_w) or die "pipe: $!";
$SIG{CHLD} = sub { syswrite($wake_w, "x") };
$SIG{PIPE} = 'IGNORE';
my ($spare, $told);
my %proxy_env = map { $_ => $ENV{$_} } grep { /proxy$/i || $_ eq 'GIT_SSH_COMMAND' } keys %ENV;

# The pipe's capacity (F_GETPIPE_SZ): one read of it takes every record waiting.
my $cap = fcntl(STDIN, 1032, 0) || 65536;

# The run of the next record for this process: its FIFOs, and its fields or the file holding them.
sub request {
  while (1) {
    my $buf = '';
    exit 0 unless sysread(STDIN, $buf, $cap);
    while ($buf =~ /^([0-9a-f]{8})/ && 8 + hex($1) <= length $buf) {
      my @fields = split /\0/, substr($buf, 8, hex $1), -1;
      substr($buf, 0, 8 + hex $1) = '';
      return @fields[1 .. $#fields] if @fields > 4 && $fields[0] eq $$;
    }
  }
}

# A new session led by this process: setsid(2) by its number, else (no number, or it failed) by POSIX.
sub new_session {
  return if $setsid_number && syscall($setsid_number + 0) > 0 && getpgrp() == $$;
  require POSIX;
  POSIX::setsid();
}

sub take {
  my ($tell) = @_;
  $SIG{CHLD} = $SIG{PIPE} = 'DEFAULT';
  close $wake_r; close $wake_w;
  my ($out, $err, @rest) = request();
  new_session();
  open(STDIN, '<', '/dev/null') or exit(127);
  open(STDOUT, '>', $out) or exit(127);
  open(STDERR, '>', $err) or exit(127);
  if ($rest[0] eq '') {
    my $file = $rest[1];
    open(my $run, '<', $file) or do { print STDERR "shoal: cannot read $file: $!\n"; exit(127) };
    local $/;
    @rest = split /\0/, <$run>, -1;
  }
  my ($cwd, $n) = splice @rest, 0, 2;
  my @env = splice @rest, 0, $n;
  syswrite($tell, "t");
  unless (chdir $cwd) { print STDERR "shoal: cannot enter $cwd: $!\n"; exit(126) }
  %ENV = ((map { split /=/, $_, 2 } @env), %proxy_env);
  syscall(436, 3, 0xffffffff, 0); # close_range: no file the kernel was started with reaches the run
  exec { $rest[0] } @rest;
  print STDERR "shoal: cannot run $rest[0]: $!\n";
  exit(127);
}

sub fork_spare {
  pipe(my $r, my $w) or die "pipe: $!";
  my $pid = fork;
  die "fork: $!" unless defined $pid;
  if ($pid == 0) { close $r; take($w) }
  close $w;
  ($spare, $told) = ($pid, $r);
  print "spare $pid\n";
}

sub ended {
  my ($pid, $status) = @_;
  print "exit $pid $status\n";
  return unless $pid == $spare;
  my $took = sysread($told, my $byte, 1);
  close $told;
  exit 0 if !$took && $status == 0;
  fork_spare();
}

# Reaps every ended child (1: WNOHANG on Linux).
sub reap {
  while ((my $pid = waitpid(-1, 1)) > 0) { ended($pid, $?) }
}

fork_spare();
while (1) {
  my $in = '';
  vec($in, fileno($wake_r), 1) = 1;
  vec($in, fileno($told), 1) = 1;
  my $n = select(my $ready = $in, undef, undef, 0.1);
  if ($n < 0) { next if $! == 4; die "select: $!" } # EINTR (4 on Linux): %! would load Errno
  if ($n == 0) { reap(); next }
  if (vec($ready, fileno($wake_r), 1)) { sysread($wake_r, my $drop, 4096); reap(); next }
  next unless vec($ready, fileno($told), 1);
  if (sysread($told, my $byte, 1)) { close $told; fork_spare(); next }
  my $pid = waitpid($spare, 0);
  ended($pid, $?) if $pid > 0;
}
`;

/** setsid(2)'s number on the architectures Deno runs on under Linux. */
const SETSID: Partial<Record<typeof Deno.build.arch, number>> = { x86_64: 112, aarch64: 157 };

/** The arguments after perl that run {@link LAUNCHER_SCRIPT} on this host. */
export function launcherArgs(): string[] {
  return ["-e", LAUNCHER_SCRIPT, String(SETSID[Deno.build.arch] ?? "")];
}
