/**
 * An ssh `ProxyCommand` for a proxied sandbox (perl core only): `connect PROXY HOST PORT` asks the
 * proxy, by SOCKS5 over TCP to the forwarder's loopback port `PROXY` (the agent's processes cannot
 * open a Unix socket, `unix_socket_filter.ts`), for `HOST:PORT` and then relays stdin to it and it
 * to stdout; a refusal is one line on stderr and exit 1. ssh, and git over ssh, have no proxy
 * variable to read: this is how they reach a granted `host:22`.
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

write_all($up, "\x05\x01\x00\x05\x01\x00\x03" . chr(length $host) . $host . pack('n', $port));
my $reply = '';
while (length $reply < 12) { sysread($up, $reply, 12 - length $reply, length $reply) or last }
if (substr($reply, 0, 4) ne "\x05\x00\x05\x00") {
  die "shoal: $host:$port is not in this principal's net_connect grants\n"
    if substr($reply, 3, 1) eq "\x02";
  die "shoal: cannot connect to $host:$port\n";
}
my $pid = fork // die "fork: $!\n";
if ($pid == 0) {
  close STDIN;
  while (sysread($up, my $buf, 65536)) { last unless write_all(\*STDOUT, $buf) }
  POSIX::_exit(0);
}
# ssh sees the end of what comes back once the child that copies it is gone
close STDOUT;
while (sysread(STDIN, my $buf, 65536)) { last unless write_all($up, $buf) }
shutdown($up, SHUT_WR);
waitpid($pid, 0);
`;
