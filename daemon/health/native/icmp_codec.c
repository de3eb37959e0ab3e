// See icmp_codec.h. Types and codes: RFC 792 (ICMP) and RFC 4443 (ICMPv6).
#include "icmp_codec.h"
#include <errno.h>
#include <string.h>

uint16_t icmp_checksum(const uint8_t* b, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < n; i += 2) sum += (uint32_t)(b[i] << 8 | b[i + 1]);
  if (n & 1) sum += (uint32_t)b[n - 1] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t)~sum;
}

void icmp_echo(uint8_t* out, int family, uint16_t id, uint16_t seq) {
  memset(out, 0, ICMP_ECHO_LEN);
  out[0] = family == 6 ? 128 : 8;
  out[4] = (uint8_t)(id >> 8);
  out[5] = (uint8_t)id;
  out[6] = (uint8_t)(seq >> 8);
  out[7] = (uint8_t)seq;
  // "lvsd" and a fixed tail: a reader of a capture sees whose echo it is.
  memcpy(out + 8, "lvsd-hc\0", 8);
  if (family != 6) {
    uint16_t c = icmp_checksum(out, ICMP_ECHO_LEN);
    out[2] = (uint8_t)(c >> 8);
    out[3] = (uint8_t)c;
  }
}

static uint16_t be16(const uint8_t* p) { return (uint16_t)(p[0] << 8 | p[1]); }

// The errno an ICMP error stands for, as the kernel reports it on a connected socket
// (net/ipv4/icmp.c icmp_err_convert, net/ipv6/icmp.c tab_unreach).
static int unreach_errno4(int type, int code) {
  if (type == 11) return EHOSTUNREACH;  // time exceeded: a loop or a too-small TTL on the way
  switch (code) {
    case 0: case 6: case 9: return ENETUNREACH;
    case 2: return ENOPROTOOPT;
    case 3: return ECONNREFUSED;
    case 4: return EMSGSIZE;
    case 10: case 13: return EACCES;
    default: return EHOSTUNREACH;
  }
}

static int unreach_errno6(int type, int code) {
  if (type != 1) return EHOSTUNREACH;  // 3: time exceeded
  switch (code) {
    case 0: return ENETUNREACH;
    case 1: case 5: case 6: return EACCES;
    case 4: return ECONNREFUSED;
    default: return EHOSTUNREACH;
  }
}

icmp_read_t icmp_read(const uint8_t* b, size_t n, int family, int ip_header) {
  icmp_read_t r = {ICMP_NONE, 0, 0, 0, NULL};
  if (family != 6 && ip_header) {
    if (n < 20 || (b[0] >> 4) != 4) return r;
    size_t ihl = (size_t)(b[0] & 0x0f) * 4;
    if (ihl < 20 || n < ihl) return r;
    b += ihl;
    n -= ihl;
  }
  if (n < 8) return r;
  int type = b[0], code = b[1];
  if (family != 6) {
    if (icmp_checksum(b, n) != 0) return r;
    if (type == 0) {
      r.kind = ICMP_REPLY;
      r.id = be16(b + 4);
      r.seq = be16(b + 6);
      return r;
    }
    if (type != 3 && type != 11) return r;
    // The quoted datagram: its IPv4 header, then at least 8 bytes of our echo request.
    const uint8_t* q = b + 8;
    size_t qn = n - 8;
    if (qn < 20 || (q[0] >> 4) != 4) return r;
    size_t qihl = (size_t)(q[0] & 0x0f) * 4;
    if (qihl < 20 || qn < qihl + 8 || q[9] != 1 || q[qihl] != 8) return r;
    r.kind = ICMP_ERROR;
    r.err = unreach_errno4(type, code);
    r.id = be16(q + qihl + 4);
    r.seq = be16(q + qihl + 6);
    r.quoted_dst = q + 16;
    return r;
  }
  if (type == 129) {
    r.kind = ICMP_REPLY;
    r.id = be16(b + 4);
    r.seq = be16(b + 6);
    return r;
  }
  if (type != 1 && type != 3) return r;
  // The quoted packet: a 40-byte IPv6 header whose next header is ICMPv6, then our echo request.
  const uint8_t* q = b + 8;
  size_t qn = n - 8;
  if (qn < 48 || (q[0] >> 4) != 6 || q[6] != 58 || q[40] != 128) return r;
  r.kind = ICMP_ERROR;
  r.err = unreach_errno6(type, code);
  r.id = be16(q + 44);
  r.seq = be16(q + 46);
  r.quoted_dst = q + 24;
  return r;
}
