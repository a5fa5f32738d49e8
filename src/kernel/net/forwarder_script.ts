/**
 * The forwarder a proxied sandbox starts as its first program (perl core only, and no module but
 * strict: Socket and Fcntl cost ~7 ms of CPU of each proxied sandbox's start here, IO::Socket::IP
 * alone ~9 ms; Linux's numbers are written out instead, alike on x86_64 and aarch64). Arguments:
 * the proxy's Unix socket path inside, then `P:<port>` (the proxy's loopback listener),
 * `L:<addr>|<port>|<host>` (a loopback port forwarded to `host:port` outside), `E:<NAME>=<value>`
 * (the proxy environment), `F:<prctl>:<seccomp>:<hex>` (the socket filter's `install_filter`
 * arguments, `sandbox/unix_socket_filter.ts`; prctl(2)'s number also makes the relay undumpable),
 * `R:<spec>` (the process limit, `sandbox/process_limit.ts`), `N:<name>` (the child's process
 * name, `RELAY_NAME`), `--` and the command. It sets the process limit, then forks a child that
 * carries no socket filter: it is the one process inside that opens Unix sockets (to the proxy
 * alone), and it makes itself undumpable (PR_SET_DUMPABLE 0) so that no process of the agent's
 * may ptrace it or read its memory. The child listens on every loopback port and relays each
 * accepted connection to the Unix socket (a forwarded port first asks the proxy, by SOCKS5, for
 * its destination; one below 1024 is bound once the kernel has lowered the namespace's floor,
 * `sandbox/port_floor.ts`, tried for at most 5 s). Meanwhile the forwarder installs the socket
 * filter on itself (every process of the agent's descends from it), and once the child listens it
 * executes the command with the environment entries added, in its own pid: one program less
 * than a filter's own perl between them (issue 33), and no command runs before the relay
 * listens. The child relays every connection in one select loop (a fork per connection cost
 * milliseconds before the first byte), reading a side only while the other side's pending bytes
 * are written (one chunk per direction); it exits when the sandbox does. `confine` is the perl that
 * defines `set_limit(SPEC)` and `install_filter(PRCTL, SECCOMP, HEX)`: the sandbox's own
 * (`sandbox/process_limit.ts`, `sandbox/unix_socket_filter.ts`).
 */
export function forwarderScript(confine: string): string {
  return String.raw`
use strict;
${confine}
# Linux's numbers: socket families and types, options, fcntl(2)'s and errno's
my ($PF_UNIX, $PF_INET, $PF_INET6, $SOCK_STREAM, $SOL_SOCKET, $SO_REUSEADDR) = (1, 2, 10, 1, 1, 2);
my ($IPPROTO_TCP, $TCP_NODELAY, $SHUT_WR) = (6, 1, 1);
my ($F_GETFL, $F_SETFL, $O_NONBLOCK) = (3, 4, 2048);
my ($EINTR, $EAGAIN, $EACCES) = (4, 11, 13);
my $unix = shift @ARGV;
my (@listen, @env, @filter, $limit, $relay_name);
while (@ARGV && $ARGV[0] ne '--') {
  my $arg = shift @ARGV;
  if ($arg =~ /^P:(\d+)$/) { push @listen, ['127.0.0.1', $1, undef] }
  elsif ($arg =~ /^L:([^|]+)\|(\d+)\|(.+)$/) { push @listen, [$1, $2, $3] }
  elsif ($arg =~ /^E:([^=]+)=(.*)$/s) { push @env, [$1, $2] }
  elsif ($arg =~ /^F:(\d+):(\d+):([0-9a-f]+)$/) { @filter = ($1, $2, $3) }
  elsif ($arg =~ /^R:(.*)$/) { $limit = $1 }
  elsif ($arg =~ /^N:(.+)$/) { $relay_name = $1 }
}
shift @ARGV;
die "shoal: the sandbox's network forwarder has no socket filter\n" unless @filter;
my $prctl = $filter[0];

# The address bytes of a dotted IPv4 or a (loopback) IPv6 address.
sub ip_bytes {
  my $addr = shift;
  return pack('C4', split /\./, $addr) unless $addr =~ /:/;
  my ($head, $tail) = split /::/, $addr, 2;
  my @head = map { hex } grep { length } split /:/, $head;
  my @tail = map { hex } grep { length } split /:/, $tail // '';
  return pack('n8', @head, (0) x (8 - @head - @tail), @tail);
}

my $CHUNK = 131072;
my $PAIRS = 512;
# Each side of a relayed pair: {fh, peer, out (bytes still to write to fh), eof (fh read to its
# end), shut (fh half-closed)}; a forward's Unix side also has {hand} until the SOCKS5 replies.
my %sides;
my $buf = '';

sub nonblocking { my $fh = shift; fcntl($fh, $F_SETFL, fcntl($fh, $F_GETFL, 0) | $O_NONBLOCK) }

sub drop {
  my $side = shift;
  for my $s ($side, $side->{peer}) {
    delete $sides{fileno $s->{fh}};
    close $s->{fh};
  }
}

# Starts relaying an accepted connection; a forward first asks the proxy for its destination.
sub open_pair {
  my ($client, $host, $port) = @_;
  socket(my $up, $PF_UNIX, $SOCK_STREAM, 0) or return;
  connect($up, pack('S a108', $PF_UNIX, $unix)) or return;
  setsockopt($client, $IPPROTO_TCP, $TCP_NODELAY, 1);
  nonblocking($_) for $client, $up;
  my $c = {fh => $client, out => ''};
  my $u = {fh => $up, out => '', peer => $c};
  $c->{peer} = $u;
  if (defined $host) {
    $u->{out} = "\x05\x01\x00\x05\x01\x00\x03" . chr(length $host) . $host . pack('n', $port);
    $u->{hand} = '';
  }
  $sides{fileno $client} = $c;
  $sides{fileno $up} = $u;
}

# Half-closes a side whose peer ended once everything for it is written.
sub settle {
  my $s = shift;
  if ($s->{peer}{eof} && !length $s->{out} && !$s->{shut}) {
    shutdown($s->{fh}, $SHUT_WR);
    $s->{shut} = 1;
  }
  drop($s) if $s->{shut} && $s->{peer}{shut};
}

# Reads what a side has: a SOCKS5 reply while it is awaited, else bytes for its peer.
sub receive {
  my $s = shift;
  my $n = sysread($s->{fh}, $buf, $CHUNK);
  return if !defined $n && ($! == $EAGAIN || $! == $EINTR);
  if (defined $s->{hand}) {
    return drop($s) unless $n;
    $s->{hand} .= $buf;
    return if length $s->{hand} < 12;
    return drop($s) unless substr($s->{hand}, 0, 2) eq "\x05\x00" && substr($s->{hand}, 3, 1) eq "\x00";
    $s->{peer}{out} = substr($s->{hand}, 12);
    delete $s->{hand};
  } elsif (!$n) {
    return drop($s) unless defined $n;
    $s->{eof} = 1;
    return settle($s->{peer});
  } else {
    $s->{peer}{out} = $buf;
  }
  send_out($s->{peer});
}

# A socket listening on loopback address $addr (dotted or IPv6), port $port; undef with $! set.
sub listen_on {
  my ($addr, $port) = @_;
  my $v6 = $addr =~ /:/;
  socket(my $s, $v6 ? $PF_INET6 : $PF_INET, $SOCK_STREAM, 0) or return;
  my $ip = ip_bytes($addr);
  # struct sockaddr_in6 (family, port, flow info, address, scope) or sockaddr_in
  my $at = $v6 ? pack('S n N a16 N', $PF_INET6, $port, 0, $ip, 0)
    : pack('S n a4 x8', $PF_INET, $port, $ip);
  return $s if setsockopt($s, $SOL_SOCKET, $SO_REUSEADDR, 1) && bind($s, $at) && listen($s, 128);
  my $errno = $! + 0;
  close $s;
  $! = $errno;
  return;
}

# Writes what is pending for a side.
sub send_out {
  my $s = shift;
  return settle($s) unless length $s->{out};
  my $n = syswrite($s->{fh}, $s->{out});
  if (!defined $n) { return if $! == $EAGAIN || $! == $EINTR; return drop($s) }
  substr($s->{out}, 0, $n) = '';
  settle($s) unless length $s->{out};
}

set_limit($limit // '');
pipe(my $ready_r, my $ready_w) or die "pipe: $!";
my $pid = fork;
die "fork: $!" unless defined $pid;
if ($pid == 0) {
  # PR_SET_DUMPABLE 0, before anything of the agent's runs
  syscall($prctl + 0, 4, 0, 0, 0, 0) == 0 or exit 1;
  $0 = $relay_name if defined $relay_name;
  close $ready_r;
  open(STDIN, '<', '/dev/null');
  open(STDOUT, '>', '/dev/null');
  open(STDERR, '>', '/dev/null');
  $SIG{PIPE} = 'IGNORE';
  my @servers;
  # a port below the namespace's floor is bound once the kernel has lowered it (sandbox/port_floor.ts)
  my @waiting = @listen;
  for (my $tries = 0; @waiting && $tries < 1000; $tries++) {
    select(undef, undef, undef, 0.005) if $tries;
    my @left;
    for my $l (@waiting) {
      my $s = listen_on($l->[0], $l->[1]);
      if ($s) { push @servers, [$s, $l->[2], $l->[1]] }
      elsif ($l->[1] < 1024 && $! == $EACCES) { push @left, $l }
    }
    @waiting = @left;
  }
  syswrite($ready_w, "r");
  close $ready_w;
  while (1) {
    my ($in, $out) = ('', '');
    vec($in, fileno($_->[0]), 1) = 1 for @servers;
    for my $fd (keys %sides) {
      my $s = $sides{$fd};
      my $p = $s->{peer};
      vec($in, $fd, 1) = 1 if defined $s->{hand} || (!$s->{eof} && !length $p->{out} && !defined $p->{hand});
      vec($out, $fd, 1) = 1 if length $s->{out};
    }
    my $n = select(my $rin = $in, my $wout = $out, undef, undef);
    next if $n <= 0;
    for my $l (@servers) {
      next unless vec($rin, fileno($l->[0]), 1);
      accept(my $client, $l->[0]) or next;
      if (keys(%sides) >= 2 * $PAIRS) { close $client; next }
      open_pair($client, $l->[1], $l->[2]);
    }
    for my $fd (keys %sides) {
      send_out($sides{$fd}) if $sides{$fd} && vec($wout, $fd, 1);
      receive($sides{$fd}) if $sides{$fd} && vec($rin, $fd, 1);
    }
  }
}
close $ready_w;
# every process of the agent's carries the filter; it is installed while the relay starts
install_filter(@filter);
sysread($ready_r, my $byte, 1) or die "shoal: the sandbox's network forwarder did not start\n";
close $ready_r;
$ENV{$_->[0]} = $_->[1] for @env;
exec { $ARGV[0] } @ARGV;
die "cannot run $ARGV[0]: $!";
`;
}
