// The PROXY protocol header the native relay sends a real server before any client byte: the bytes
// proxy-protocol.ts would write (v1 text, v2 binary), from the accepted socket's addresses.
#include "relay.h"
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

// An IPv4 client of a dual-stack socket is written in its plain form, as proxy-protocol.ts's unmapped().
static int is_v4(const struct sockaddr_storage* a) {
  return a->ss_family == AF_INET ||
         (a->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6*)a)->sin6_addr));
}

static void addr_bytes(const struct sockaddr_storage* a, int v4, uint8_t* out) {
  const struct sockaddr_in6* a6 = (const struct sockaddr_in6*)a;
  if (a->ss_family == AF_INET) {
    const uint8_t* p = (const uint8_t*)&((const struct sockaddr_in*)a)->sin_addr;
    if (v4) {
      memcpy(out, p, 4);
    } else {  // ::ffff:a.b.c.d
      memset(out, 0, 10);
      out[10] = out[11] = 0xff;
      memcpy(out + 12, p, 4);
    }
  } else if (v4) {
    memcpy(out, a6->sin6_addr.s6_addr + 12, 4);
  } else {
    memcpy(out, a6->sin6_addr.s6_addr, 16);
  }
}

uint16_t port_of(const struct sockaddr_storage* a) {
  return ntohs(a->ss_family == AF_INET ? ((const struct sockaddr_in*)a)->sin_port : ((const struct sockaddr_in6*)a)->sin6_port);
}

void text_of(const struct sockaddr_storage* a, int plain_v4, char* out, size_t len) {
  uint8_t b[16];
  if (plain_v4 && is_v4(a)) {
    addr_bytes(a, 1, b);
    inet_ntop(AF_INET, b, out, (socklen_t)len);
  } else if (a->ss_family == AF_INET) {
    inet_ntop(AF_INET, &((const struct sockaddr_in*)a)->sin_addr, out, (socklen_t)len);
  } else {
    inet_ntop(AF_INET6, &((const struct sockaddr_in6*)a)->sin6_addr, out, (socklen_t)len);
  }
}

void build_head(conn_t* c, int version, const struct sockaddr_storage* src, const struct sockaddr_storage* dst) {
  int v4 = is_v4(src) && is_v4(dst);
  if (version == 1) {
    char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
    text_of(src, 1, s, sizeof s);
    text_of(dst, 1, d, sizeof d);
    int n = snprintf(c->head, HEAD_MAX, "PROXY %s %s %s %u %u\r\n", v4 ? "TCP4" : "TCP6", s, d, port_of(src), port_of(dst));
    c->headlen = n > 0 && n < HEAD_MAX ? (uint32_t)n : 0;
    return;
  }
  static const uint8_t sig[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
  uint8_t* h = (uint8_t*)c->head;
  int alen = v4 ? 4 : 16;
  int len = 2 * alen + 4;
  memcpy(h, sig, 12);
  h[12] = 0x21;                     // version 2, command PROXY
  h[13] = v4 ? 0x11 : 0x21;         // AF_INET / AF_INET6, STREAM
  h[14] = (uint8_t)(len >> 8);
  h[15] = (uint8_t)len;
  addr_bytes(src, v4, h + 16);
  addr_bytes(dst, v4, h + 16 + alen);
  uint16_t sp = port_of(src), dp = port_of(dst);
  h[16 + 2 * alen] = (uint8_t)(sp >> 8);
  h[17 + 2 * alen] = (uint8_t)sp;
  h[18 + 2 * alen] = (uint8_t)(dp >> 8);
  h[19 + 2 * alen] = (uint8_t)dp;
  c->headlen = (uint32_t)(16 + len);
}

