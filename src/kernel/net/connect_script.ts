/**
 * An ssh `ProxyCommand` for a proxied sandbox (perl core only): `connect PROXY HOST PORT` asks the
 * proxy, by HTTP `CONNECT` over TCP to the forwarder's loopback port `PROXY` (the agent's
 * processes cannot open a Unix socket, `unix_socket_filter.ts`), for `HOST:PORT` and then relays
 * stdin to it and it to stdout; a refusal is the proxy's own line on stderr (why: not granted, or
 * a granted name leading to an address it may not) and exit 1. ssh, and git over ssh, have no
 * proxy variable to read: this is how they reach a granted `host:22`.
 */
export const CONNECT_SCRIPT = String.raw`
use strict;
use POSIX ();
use Socket qw(PF_INET SOCK_STREAM IPPROTO_TCP TCP_NODELAY SHUT_WR INADDR_LOOPBACK pack_sockaddr_in);
my ($proxy, $host, $port) = @ARGV;
die "usage: connect PROXY HOST PORT\n"
  unless defined $port && $proxy =~ /^\d+$/ && $port =~ /^\d+$/ && length $host < 256;
my $up;
socket($up, PF_INET, SOCK_STREAM, 0) && connect($up, pack_sockaddr_in($proxy, INADDR_LOOPBACK))
  or die "shoal: cannot reach the sandbox's proxy at 127.0.0.1:$proxy: $!\n";
setsockopt($up, IPPROTO_TCP, TCP_NODELAY, 1);

sub write_all {
  my ($fh, $data) = @_;
  while (length $data) {
    my $n = syswrite($fh, $data) or return 0;
    substr($data, 0, $n) = '';
  }
  return 1;
}

my $authority = ($host =~ /:/ ? "[$host]" : $host) . ":$port";
die "shoal: $host is no host name\n" if $host =~ /[\s\x00-\x1f\x7f]/;
write_all($up, "CONNECT $authority HTTP/1.1\r\nHost: $authority\r\n\r\n");
# the proxy's answer head, and what came after it (the server's banner may come along)
my $head = '';
while ($head !~ /\r\n\r\n/ && length $head < 16384) {
  sysread($up, $head, 4096, length $head) or last;
}
my $end = index($head, "\r\n\r\n");
my ($status) = $head =~ m{^HTTP/1\.[01] (\d{3}) };
my $rest = $end < 0 ? '' : substr($head, $end + 4);
if ($end < 0 || !defined $status || $status ne '200') {
  # the proxy's answer says why, in one line (its body), and then the proxy closes
  while (length $head < 16384) { sysread($up, $head, 4096, length $head) or last }
  my ($why) = $head =~ /\r\n\r\n([^\n]*)/;
  $why =~ s/[\x00-\x1f\x7f]//g if defined $why;
  die((defined $why && length $why ? $why : "shoal: cannot connect to $authority") . "\n");
}
my $pid = fork // die "fork: $!\n";
if ($pid == 0) {
  close STDIN;
  POSIX::_exit(0) unless write_all(\*STDOUT, $rest);
  while (sysread($up, my $buf, 65536)) { last unless write_all(\*STDOUT, $buf) }
  POSIX::_exit(0);
}
# ssh sees the end of what comes back once the child that copies it is gone
close STDOUT;
while (sysread(STDIN, my $buf, 65536)) { last unless write_all($up, $buf) }
shutdown($up, SHUT_WR);
waitpid($pid, 0);
`;
