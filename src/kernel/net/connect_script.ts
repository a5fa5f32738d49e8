/**
 * An ssh `ProxyCommand` for a proxied sandbox (perl core only): `connect HOST PORT` asks the
 * proxy's Unix socket beside it, by SOCKS5, for `HOST:PORT` and then relays stdin to it and it to
 * stdout; a refusal is one line on stderr and exit 1. ssh, and git over ssh, have no proxy
 * variable to read: this is how they reach a granted `host:22`.
 */
export const CONNECT_SCRIPT = String.raw`
use strict;
use POSIX ();
use Socket qw(PF_UNIX SOCK_STREAM SHUT_WR pack_sockaddr_un);
my ($host, $port) = @ARGV;
die "usage: connect HOST PORT\n" unless defined $port && $port =~ /^\d+$/ && length $host < 256;
(my $unix = $0) =~ s{[^/]*$}{proxy};
my $up;
socket($up, PF_UNIX, SOCK_STREAM, 0) && connect($up, pack_sockaddr_un($unix))
  or die "shoal: cannot reach the sandbox's proxy at $unix: $!\n";

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
