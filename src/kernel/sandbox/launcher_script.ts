/**
 * The launcher a resident sandbox runs as its bwrap command (perl: perl-base is Essential on
 * Debian, and /usr is visible in every view). It keeps one forked "spare" child waiting on the
 * launcher's stdin, which the kernel writes; the spare reads one request, leads a new session and
 * process group, opens its output FIFOs and execs the run's program: a sandboxed spawn costs one
 * exec, and its pid (known to the kernel before the request) is the run's. Once the spare has
 * exec'd (its close-on-exec pipe to the launcher ends after it wrote `t`), the launcher forks the
 * next. The launcher is the parent of every run and reports on its stdout:
 *
 * - `spare <pid>`: a new spare waits (pid inside the sandbox);
 * - `exit <pid> <wait status>`: a child of the launcher ended (the raw waitpid(2) status).
 *
 * A request is its byte length as 8 hex digits and then, joined by NUL: the pid of the spare it
 * is for (another spare, after that one died, exits 1 instead of running it), the working
 * directory, the stdout and stderr FIFOs (paths inside), the number of environment entries, the
 * `NAME=value` entries and the argv. The spare runs it with stdin /dev/null and exactly that
 * environment; a failure before the exec is written to its stderr FIFO and it exits 126 (no
 * directory) or 127 (no program). A spare that reads the end of stdin (the kernel is gone) exits
 * 0, and the launcher with it, and its sandbox with the launcher.
 */
export const LAUNCHER_SCRIPT = String.raw`
use strict;
use POSIX ();
$| = 1;
pipe(my $wake_r, my $wake_w) or die "pipe: $!";
$SIG{CHLD} = sub { syswrite($wake_w, "x") };
$SIG{PIPE} = 'IGNORE';
my ($spare, $told, $took);

sub readn {
  my ($n) = @_;
  my $buf = '';
  while (length($buf) < $n) {
    my $got = sysread(STDIN, $buf, $n - length($buf), length $buf);
    POSIX::_exit(0) unless $got;
  }
  return $buf;
}

sub take {
  my ($tell) = @_;
  $SIG{CHLD} = $SIG{PIPE} = 'DEFAULT';
  close $wake_r; close $wake_w;
  my $request = readn(hex readn(8));
  my ($for, $cwd, $out, $err, $n, @rest) = split /\0/, $request, -1;
  POSIX::_exit(1) unless $for == $$;
  my @env = splice @rest, 0, $n;
  POSIX::setsid();
  open(STDIN, '<', '/dev/null') or POSIX::_exit(127);
  open(STDOUT, '>', $out) or POSIX::_exit(127);
  open(STDERR, '>', $err) or POSIX::_exit(127);
  syswrite($tell, "t");
  unless (chdir $cwd) { print STDERR "shoal: cannot enter $cwd: $!\n"; POSIX::_exit(126) }
  %ENV = map { split /=/, $_, 2 } @env;
  exec { $rest[0] } @rest;
  print STDERR "shoal: cannot run $rest[0]: $!\n";
  POSIX::_exit(127);
}

sub fork_spare {
  pipe(my $r, my $w) or die "pipe: $!";
  my $pid = fork;
  die "fork: $!" unless defined $pid;
  if ($pid == 0) { close $r; take($w) }
  close $w;
  ($spare, $told, $took) = ($pid, $r, 0);
  print "spare $pid\n";
}

sub ended {
  my ($pid, $status) = @_;
  print "exit $pid $status\n";
  return unless $pid == $spare;
  $took = 1 if sysread($told, my $byte, 1);
  close $told;
  exit 0 if !$took && $status == 0;
  fork_spare();
}

sub reap {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) { ended($pid, $?) }
}

fork_spare();
while (1) {
  my $in = '';
  vec($in, fileno($wake_r), 1) = 1;
  vec($in, fileno($told), 1) = 1;
  my $n = select(my $ready = $in, undef, undef, undef);
  if ($n < 0) { next if $!{EINTR}; die "select: $!" }
  if (vec($ready, fileno($wake_r), 1)) { sysread($wake_r, my $drop, 4096); reap(); next }
  next unless vec($ready, fileno($told), 1);
  if (sysread($told, my $byte, 1)) { $took = 1; next }
  if ($took) { close $told; fork_spare(); next }
  my $pid = waitpid($spare, 0);
  ended($pid, $?) if $pid > 0;
}
`;
