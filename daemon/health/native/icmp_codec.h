// ICMP / ICMPv6 echo for the probe engine's ping checks: build a request, read what a raw or ping
// socket hands back. Pure: bytes in, bytes out; the engine owns the sockets. Exposed to JavaScript
// too (icmpEcho, icmpRead) so unit tests exercise the very code that runs.
#ifndef LVSD_ICMP_CODEC_H
#define LVSD_ICMP_CODEC_H
#include <stddef.h>
#include <stdint.h>

// The echo request: 8 bytes of header, then this many bytes of payload (a fixed pattern).
#define ICMP_ECHO_LEN 16

enum { ICMP_NONE = 0, ICMP_REPLY = 1, ICMP_ERROR = 2 };

typedef struct {
  int kind;      // ICMP_NONE: not ours to look at (another type, too short, bad checksum)
  uint16_t id;   // of the echo request (the reply's own, or the one quoted by an error)
  uint16_t seq;
  int err;       // ICMP_ERROR: the errno it stands for (EHOSTUNREACH, ENETUNREACH, ...)
  // Who the request went to: the reply's source is checked by the caller; an error quotes the
  // original destination (IPv4: 4 bytes, IPv6: 16), which must be the probe's target.
  const uint8_t* quoted_dst;
} icmp_read_t;

// RFC 1071 Internet checksum over b[0..n).
uint16_t icmp_checksum(const uint8_t* b, size_t n);

// Writes an echo request (ICMP_ECHO_LEN bytes) for family 4 or 6. IPv4 carries its checksum; IPv6's
// needs the pseudo-header, which the kernel fills in for ICMPv6 sockets (RFC 3542 3.1), so it is 0.
void icmp_echo(uint8_t* out, int family, uint16_t id, uint16_t seq);

// Reads one datagram. `ip_header`: IPv4 raw sockets deliver the IP header first; ping sockets and
// ICMPv6 sockets do not.
icmp_read_t icmp_read(const uint8_t* b, size_t n, int family, int ip_header);

#endif
