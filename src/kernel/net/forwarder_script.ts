/**
 * The forwarder a proxied sandbox starts before its command (perl core only: IO::Socket::IP and
 * ::UNIX). Arguments: the proxy's Unix socket path inside, then `P:<port>` (the proxy's loopback
 * listener), `L:<addr>|<port>|<host>` (a loopback port forwarded to `host:port` outside),
 * `E:<NAME>=<value>` (the proxy environment), `--` and the command. It forks a child that listens
 * on every loopback port and forwards each accepted connection to the Unix socket (a forwarded
 * port first asks the proxy, by SOCKS5, for its destination); once the child listens, the
 * command is executed with the environment entries added, in the forwarder's own pid. Each
 * connection is relayed by a process of its own; the listener exits when the sandbox does.
 */
export const FORWARDER_SCRIPT = String.raw`
use strict;
use IO::Socket::IP;
use IO::Socket::UNIX;
use Socket qw(SOCK_STREAM IPPROTO_TCP TCP_NODELAY);
use POSIX ();
my $unix = shift @ARGV;
my (@listen, @env);
while (@ARGV && $ARGV[0] ne '--') {
  my $arg = shift @ARGV;
  if ($arg =~ /^P:(\d+)$/) { push @listen, ['127.0.0.1', $1, undef] }
  elsif ($arg =~ /^L:([^|]+)\|(\d+)\|(.+)$/) { push @listen, [$1, $2, $3] }
  elsif ($arg =~ /^E:([^=]+)=(.*)$/s) { push @env, [$1, $2] }
}
shift @ARGV;

sub write_all {
  my ($fh, $data) = @_;
  while (length $data) {
    my $n = syswrite($fh, $data);
    return 0 unless $n;
    substr($data, 0, $n) = '';
  }
  return 1;
}

sub read_exact {
  my ($fh, $len) = @_;
  my $buf = '';
  while (length $buf < $len) { return undef unless sysread($fh, $buf, $len - length $buf, length $buf) }
  return $buf;
}

# Relays one accepted connection through the proxy's socket; a forward asks for its destination.
sub relay {
  my ($client, $host, $port) = @_;
  my $up = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $unix) or return;
  if (defined $host) {
    write_all($up, "\x05\x01\x00") or return;
    (read_exact($up, 2) // '') eq "\x05\x00" or return;
    write_all($up, "\x05\x01\x00\x03" . chr(length $host) . $host . pack('n', $port)) or return;
    my $reply = read_exact($up, 10) // return;
    return unless substr($reply, 1, 1) eq "\x00";
  }
  my %peer = (fileno($client) => $up, fileno($up) => $client);
  my %open = (fileno($client) => $client, fileno($up) => $up);
  while (%open) {
    my $in = '';
    vec($in, $_, 1) = 1 for keys %open;
    my $n = select(my $ready = $in, undef, undef, undef);
    if ($n < 0) { next if $!{EINTR}; return }
    for my $fd (keys %open) {
      next unless vec($ready, $fd, 1);
      my $got = sysread($open{$fd}, my $buf, 131072);
      if (!$got) {
        shutdown($peer{$fd}, 1);
        delete $open{$fd};
        next;
      }
      return unless write_all($peer{$fd}, $buf);
    }
  }
}

pipe(my $ready_r, my $ready_w) or die "pipe: $!";
my $pid = fork;
die "fork: $!" unless defined $pid;
if ($pid == 0) {
  close $ready_r;
  open(STDIN, '<', '/dev/null');
  open(STDOUT, '>', '/dev/null');
  open(STDERR, '>', '/dev/null');
  $SIG{CHLD} = 'IGNORE';
  my @servers;
  for my $l (@listen) {
    my $s = IO::Socket::IP->new(LocalHost => $l->[0], LocalPort => $l->[1], Listen => 128, ReuseAddr => 1)
      or next;
    push @servers, [$s, $l->[2], $l->[1]];
  }
  syswrite($ready_w, "r");
  close $ready_w;
  while (1) {
    my $in = '';
    vec($in, fileno($_->[0]), 1) = 1 for @servers;
    my $n = select(my $ready = $in, undef, undef, undef);
    next if $n <= 0;
    for my $s (@servers) {
      next unless vec($ready, fileno($s->[0]), 1);
      my $client = $s->[0]->accept or next;
      setsockopt($client, IPPROTO_TCP(), TCP_NODELAY(), 1);
      my $child = fork;
      if (defined $child && $child == 0) {
        close $_->[0] for @servers;
        relay($client, $s->[1], $s->[2]);
        POSIX::_exit(0);
      }
      close $client;
    }
  }
}
close $ready_w;
sysread($ready_r, my $byte, 1);
close $ready_r;
$ENV{$_->[0]} = $_->[1] for @env;
exec { $ARGV[0] } @ARGV;
die "cannot run $ARGV[0]: $!";
`;
