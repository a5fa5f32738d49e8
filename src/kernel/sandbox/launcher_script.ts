/**
 * The launcher a resident sandbox runs as its bwrap command (perl: perl-base is Essential on
 * Debian, and /usr is visible in every view). It keeps one forked "spare" child waiting; the
 * kernel writes a request on the launcher's stdin, the spare takes it, leads a new session and
 * process group, opens its output FIFOs and execs the run's program: a sandboxed spawn costs one
 * exec, and its pid (known to the kernel before the request) is the run's. The launcher is the
 * parent of every run and reports on its stdout:
 *
 * - `spare <pid>`: a new spare waits (pid inside the sandbox);
 * - `exit <pid> <wait status>`: a child of the launcher ended (the raw waitpid(2) status).
 *
 * A request is `<byte length>\n` and then, joined by NUL: the pid of the spare it is for (another
 * spare, after that one died, exits instead of running it), the working directory, the stdout and
 * stderr FIFOs (paths inside), the number of environment entries, the `NAME=value` entries and
 * the argv. The spare runs with stdin /dev/null and exactly that environment; a failure before
 * the exec is written to its stderr FIFO and it exits 126 (no directory) or 127 (no program).
 * When its stdin ends (the kernel is gone) the launcher exits, and its sandbox with it.
 */
export const LAUNCHER_SCRIPT = String.raw`
use strict;
use POSIX ();
$| = 1;
pipe(my $wake_r, my $wake_w) or die "pipe: $!";
$SIG{CHLD} = sub { syswrite($wake_w, "x") };
$SIG{PIPE} = 'IGNORE';
my ($spare, $to_spare);

sub take {
  my ($from) = @_;
  $SIG{CHLD} = $SIG{PIPE} = 'DEFAULT';
  close $wake_r; close $wake_w;
  local $/;
  my $request = <$from>;
  POSIX::_exit(0) unless defined $request && length $request;
  my ($for, $cwd, $out, $err, $n, @rest) = split /\0/, $request, -1;
  POSIX::_exit(0) unless $for == $$;
  my @env = splice @rest, 0, $n;
  POSIX::setsid();
  open(STDIN, '<', '/dev/null') or POSIX::_exit(127);
  open(STDOUT, '>', $out) or POSIX::_exit(127);
  open(STDERR, '>', $err) or POSIX::_exit(127);
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
  if ($pid == 0) { close $w; take($r) }
  close $r;
  ($spare, $to_spare) = ($pid, $w);
  print "spare $pid\n";
}

sub reap {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    print "exit $pid $?\n";
    if (defined $spare && $pid == $spare) { close $to_spare; fork_spare() }
  }
}

fork_spare();
my $buf = '';
while (1) {
  my $in = '';
  vec($in, fileno(STDIN), 1) = 1;
  vec($in, fileno($wake_r), 1) = 1;
  my $n = select(my $ready = $in, undef, undef, undef);
  if ($n < 0) { next if $!{EINTR}; die "select: $!" }
  if (vec($ready, fileno($wake_r), 1)) { sysread($wake_r, my $drop, 4096); reap() }
  next unless vec($ready, fileno(STDIN), 1);
  my $got = sysread(STDIN, $buf, 65536, length $buf);
  exit 0 unless $got;
  while ($buf =~ /^(\d+)\n/) {
    my ($len, $at) = ($1, length($1) + 1);
    last if length($buf) < $at + $len;
    my $request = substr($buf, $at, $len);
    substr($buf, 0, $at + $len) = '';
    print $to_spare $request;
    close $to_spare;
    $spare = undef;
    fork_spare();
  }
}
`;
