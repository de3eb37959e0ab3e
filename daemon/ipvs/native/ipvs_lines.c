// lvsd_ipvs, second half: each service of a table read (ipvs_dump.c's buffer) as one line of text, and the
// adoption's compare of those lines with the desired ones.
#include <node_api.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ipvs.h"

// The text is daemon/dataplane/ipvs/reconcile.ts's configText of the service observe.ts would read from the same
// bytes (test/unit/ipvs-fingerprint.test.ts holds the two together over random tables): its id, scheduler, flags,
// persistence and each destination's id and configuration, destinations in the kernel's order. A service whose
// bytes observe.ts would refuse, or holding text outside [a-z0-9_-] where a name goes, gets an empty line (it
// matches nothing, and is decoded and refused in JavaScript as before).

typedef struct {
  char *p;
  size_t len, cap;
  int bad;
} text_t;

static void put(text_t *t, const char *s, size_t n) {
  if (t->bad) return;
  if (t->len + n > t->cap) {
    size_t cap = t->cap == 0 ? 1 << 16 : t->cap;
    while (cap < t->len + n) cap *= 2;
    char *q = realloc(t->p, cap);
    if (q == NULL) {
      t->bad = 1;
      return;
    }
    t->p = q;
    t->cap = cap;
  }
  memcpy(t->p + t->len, s, n);
  t->len += n;
}
static void puts_(text_t *t, const char *s) { put(t, s, strlen(s)); }
static void putu(text_t *t, uint32_t v) {
  char b[10];
  int n = 10;
  do {
    b[--n] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  put(t, b + n, (size_t)(10 - n));
}

static uint16_t rd16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}
static uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static uint16_t rdbe16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }

/** Each attribute's offset by type (types 0..15; the last one wins) as observe.ts's offsets(); -1 if malformed. */
static int attr_offsets(const uint8_t *buf, uint32_t start, uint32_t end, long at[16]) {
  for (int i = 0; i < 16; i++) at[i] = -1;
  for (uint32_t off = start; off + 4 <= end;) {
    uint16_t len = rd16(buf + off), type = rd16(buf + off + 2) & NLA_TYPE_MASK_;
    if (len < 4 || off + len > end) return -1;
    if (type < 16) at[type] = off;
    off += (len + 3u) & ~3u;
  }
  return 0;
}
/** The value of attribute `a` if it holds at least n bytes; NULL (and *bad) if shorter, NULL if absent. */
static const uint8_t *val(const uint8_t *buf, long a, uint32_t n, int *bad) {
  if (a < 0) return NULL;
  if ((uint32_t)rd16(buf + a) < n + 4) {
    *bad = 1;
    return NULL;
  }
  return buf + a + 4;
}
static uint32_t u32_or0(const uint8_t *buf, long a, int *bad) {
  const uint8_t *v = val(buf, a, 4, bad);
  return v == NULL ? 0 : rd32(v);
}

/** An address as observe.ts's ipText writes it (IPv6 as WHATWG URL serialises it, RFC 5952); 0 if too short. */
static int put_ip(text_t *t, const uint8_t *buf, long a, int family) {
  uint32_t len = rd16(buf + a) - 4u;
  const uint8_t *p = buf + a + 4;
  char b[48];
  if (family == 4) {
    if (len < 4) return 0;
    for (int i = 0; i < 4; i++) {
      if (i > 0) put(t, ".", 1);
      putu(t, p[i]);
    }
    return 1;
  }
  if (len < 16) return 0;
  uint16_t g[8];
  for (int i = 0; i < 8; i++) g[i] = rdbe16(p + 2 * i);
  int best = -1, bestLen = 1;
  for (int i = 0; i < 8;) {
    int j = i;
    while (j < 8 && g[j] == 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j == i ? i + 1 : j;
  }
  int ignore0 = 0;
  for (int i = 0; i < 8; i++) {
    if (ignore0 && g[i] == 0) continue;
    ignore0 = 0;
    if (best == i) {
      puts_(t, i == 0 ? "::" : ":");
      ignore0 = 1;
      continue;
    }
    snprintf(b, sizeof b, "%x", g[i]);
    puts_(t, b);
    if (i != 7) puts_(t, ":");
  }
  return 1;
}

/** A name attribute (up to its NUL) if it is made of [a-z0-9_-] only; 0 otherwise. */
static int put_name(text_t *t, const uint8_t *buf, long a) {
  if (a < 0) return 1;
  uint32_t len = rd16(buf + a) - 4u;
  const uint8_t *p = buf + a + 4;
  uint32_t n = 0;
  while (n < len && p[n] != 0) {
    uint8_t c = p[n];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return 0;
    n++;
  }
  put(t, (const char *)p, n);
  return 1;
}

static int family_of(uint16_t af) { return af == 2 ? 4 : af == 10 ? 6 : 0; }

/** One destination: "|id weight method", then " tunnel" for tun, " uN" / " lN" for thresholds not 0. 0 where observe.ts refuses it. */
static int put_dest(text_t *t, const uint8_t *buf, uint32_t start, uint32_t end, int serviceFamily) {
  long at[16];
  int bad = 0;
  if (attr_offsets(buf, start, end, at) < 0) return 0;
  int family = serviceFamily;
  const uint8_t *af = val(buf, at[11], 2, &bad);
  if (af != NULL) family = family_of(rd16(af));
  const uint8_t *port = val(buf, at[2], 2, &bad);
  if (bad || family == 0 || at[1] < 0 || port == NULL) return 0;
  uint32_t fwd = u32_or0(buf, at[3], &bad) & 7, weight = u32_or0(buf, at[4], &bad);
  uint32_t upper = u32_or0(buf, at[5], &bad), lower = u32_or0(buf, at[6], &bad);
  const uint8_t *tt = val(buf, at[13], 1, &bad), *tp = val(buf, at[14], 2, &bad), *tf = val(buf, at[15], 2, &bad);
  u32_or0(buf, at[7], &bad);
  u32_or0(buf, at[8], &bad);
  u32_or0(buf, at[9], &bad);
  if (bad || fwd > 4 || (tt != NULL && *tt > 2)) return 0;
  puts_(t, family == 6 ? "|[" : "|");
  if (!put_ip(t, buf, at[1], family)) return 0;
  puts_(t, family == 6 ? "]:" : ":");
  putu(t, rdbe16(port));
  puts_(t, " ");
  putu(t, weight);
  puts_(t, fwd == 3 ? " dr" : fwd == 2 ? " tun " : " nat");
  if (fwd == 2) {
    static const char *names[] = {"ipip", "gue", "gre"};
    int type = tt == NULL ? 0 : *tt;
    uint16_t flags = tf == NULL ? 0 : rd16(tf);
    puts_(t, names[type]);
    puts_(t, "/");
    putu(t, type == 1 && tp != NULL ? rdbe16(tp) : 0);
    puts_(t, flags & 2 ? "/remcsum" : flags & 1 ? "/csum" : "/none");
  }
  if (upper != 0) {
    puts_(t, " u");
    putu(t, upper);
  }
  if (lower != 0) {
    puts_(t, " l");
    putu(t, lower);
  }
  return 1;
}

/** One service's line, without its destinations: 0 where observe.ts refuses it. *family gets its family. */
static int put_service(text_t *t, const uint8_t *buf, uint32_t start, uint32_t end, int *family) {
  long at[16];
  int bad = 0;
  if (attr_offsets(buf, start, end, at) < 0) return 0;
  const uint8_t *af = val(buf, at[1], 2, &bad);
  if (af == NULL || (*family = family_of(rd16(af))) == 0) return 0;
  uint32_t mark = u32_or0(buf, at[5], &bad);
  if (bad) return 0;
  if (mark != 0) {
    puts_(t, *family == 6 ? "fwmark:6:" : "fwmark:4:");
    putu(t, mark);
  } else {
    const uint8_t *proto = val(buf, at[2], 2, &bad), *port = val(buf, at[4], 2, &bad);
    if (bad || proto == NULL || port == NULL || at[3] < 0) return 0;
    uint16_t p = rd16(proto);
    if (p != 6 && p != 17 && p != 132) return 0;
    puts_(t, p == 6 ? "tcp:" : p == 17 ? "udp:" : "sctp:");
    if (*family == 6) puts_(t, "[");
    if (!put_ip(t, buf, at[3], *family)) return 0;
    puts_(t, *family == 6 ? "]:" : ":");
    putu(t, rdbe16(port));
  }
  puts_(t, "|");
  size_t sched = t->len;
  if (!put_name(t, buf, at[6])) return 0;
  int shmh = t->len - sched == 2 && (memcmp(t->p + sched, "sh", 2) == 0 || memcmp(t->p + sched, "mh", 2) == 0);
  char sname[3] = {0};
  if (shmh) memcpy(sname, t->p + sched, 2);
  uint32_t flags = at[7] >= 0 && rd16(buf + at[7]) >= 8 ? rd32(buf + at[7] + 4) : 0;
  uint32_t timeout = u32_or0(buf, at[8], &bad);
  if (bad) return 0;
  puts_(t, "|");
  if (shmh && (flags & 0x8)) {
    puts_(t, sname);
    puts_(t, "-fallback");
    if (flags & 0x10) puts_(t, ",");
  }
  if (shmh && (flags & 0x10)) {
    puts_(t, sname);
    puts_(t, "-port");
  }
  puts_(t, flags & 0x4 ? "|1|" : "|0|");
  if (!(flags & 0x1)) {
    puts_(t, "-");
    return 1;
  }
  putu(t, timeout);
  puts_(t, "/");
  long nm = at[9];
  if (nm < 0 || rd16(buf + nm) < 8) puts_(t, *family == 4 ? "255.255.255.255" : "128");
  else if (*family == 4) put_ip(t, buf, nm, 4);
  else putu(t, rd32(buf + nm + 4));
  puts_(t, "/");
  // The persistence engine, when named (observe.ts leaves an empty name out).
  size_t eq = t->len;
  puts_(t, "=");
  if (!put_name(t, buf, at[11])) return 0;
  if (t->len == eq + 1) t->len = eq;
  return 1;
}

/**
 * Each service's line of a dumpTable buffer into *t, line k starting at (*at)[k] (one more entry: the end); NULL, or
 * what is wrong with the layout.
 */
static const char *table_lines(const uint8_t *buf, size_t size, text_t *t, size_t **at, uint32_t *count) {
  uint32_t off = 4;
  *count = size >= 4 ? rd32(buf) : 0;
  *at = NULL;
  if (size < 4) return "the buffer is shorter than its count";
  if (*count > size / 8) return "a service runs past the end of the buffer";
  *at = malloc(((size_t)*count + 1) * sizeof **at);
  if (*at == NULL) return "out of memory";
  for (uint32_t k = 0; k < *count; k++) {
    if (off + 4 > size || off + 4 + (uint64_t)rd32(buf + off) > size) return "a service runs past the end of the buffer";
    uint32_t svcEnd = off + 4 + rd32(buf + off);
    size_t line = t->len;
    (*at)[k] = line;
    int family = 0;
    int ok = put_service(t, buf, off + 4, svcEnd, &family);
    off = (svcEnd + 3u) & ~3u;
    if (off + 4 > size) return "a destination count runs past the end of the buffer";
    uint32_t dests = rd32(buf + off);
    off += 4;
    for (uint32_t d = 0; d < dests; d++) {
      if (off + 4 > size || off + 4 + (uint64_t)rd32(buf + off) > size) return "a destination runs past the end of the buffer";
      uint32_t end = off + 4 + rd32(buf + off);
      if (ok) ok = put_dest(t, buf, off + 4, end, family);
      off = (end + 3u) & ~3u;
    }
    if (!ok) t->len = line;
  }
  (*at)[*count] = t->len;
  return t->bad ? "out of memory" : NULL;
}

static napi_value table_arg(napi_env env, napi_value v, uint8_t **buf, size_t *size) {
  bool isBuffer = false;
  if (napi_is_buffer(env, v, &isBuffer) != napi_ok || !isBuffer) {
    napi_throw_type_error(env, NULL, "a dumpTable buffer expected");
    return NULL;
  }
  CHECK(napi_get_buffer_info(env, v, (void **)buf, size));
  return v;
}

static napi_value layout_error(napi_env env, const char *what, const char *broken) {
  char msg[160];
  snprintf(msg, sizeof msg, "%s: %s", what, broken);
  napi_throw_error(env, NULL, msg);
  return NULL;
}

/** fingerprints(buf): one line per service of a dumpTable buffer, joined by "\n" (the layout is checked). */
napi_value Fingerprints(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1] = {NULL}, result;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint8_t *buf;
  size_t size;
  if (argc < 1 || table_arg(env, argv[0], &buf, &size) == NULL) return NULL;
  text_t t = {0};
  size_t *at;
  uint32_t count;
  const char *broken = table_lines(buf, size, &t, &at, &count);
  if (broken == NULL) {
    // The lines joined by "\n" into a new text.
    text_t j = {0};
    for (uint32_t k = 0; k < count; k++) {
      if (k > 0) puts_(&j, "\n");
      put(&j, t.p + at[k], at[k + 1] - at[k]);
    }
    free(t.p);
    t = j;
    if (t.bad) broken = "out of memory";
  }
  free(at);
  if (broken != NULL) {
    free(t.p);
    return layout_error(env, "fingerprints", broken);
  }
  napi_status st = napi_create_string_latin1(env, t.len == 0 ? "" : t.p, t.len, &result);
  free(t.p);
  CHECK(st);
  return result;
}

static uint64_t fnv(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
  return h;
}

typedef struct {
  uint64_t hash;
  const char *p;
  size_t len;
  int32_t index;
} line_t;

static int by_hash(const void *a, const void *b) {
  const line_t *x = a, *y = b;
  if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/**
 * match(buf, lines): for each service of a dumpTable buffer, the index of the first of `lines` ("\n"-joined, UTF-8)
 * equal to its line, -1 for none; an empty line matches nothing. The adoption's compare, without a JavaScript
 * string or Map lookup per service.
 */
napi_value Match(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2] = {NULL, NULL}, ab, result;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint8_t *buf;
  size_t size, dlen;
  if (argc < 2 || table_arg(env, argv[0], &buf, &size) == NULL) return NULL;
  if (napi_get_value_string_utf8(env, argv[1], NULL, 0, &dlen) != napi_ok) {
    napi_throw_type_error(env, NULL, "match(buffer, lines): lines is a string");
    return NULL;
  }
  char *desired = malloc(dlen + 1);
  text_t t = {0};
  size_t *at = NULL;
  uint32_t count = 0;
  line_t *lines = NULL;
  const char *broken = desired == NULL ? "out of memory" : NULL;
  if (broken == NULL && napi_get_value_string_utf8(env, argv[1], desired, dlen + 1, &dlen) != napi_ok) broken = "cannot read the lines";
  if (broken == NULL) broken = table_lines(buf, size, &t, &at, &count);
  size_t n = 0;
  if (broken == NULL) {
    size_t cap = 1;
    for (size_t i = 0; i < dlen; i++) cap += desired[i] == '\n';
    lines = malloc(cap * sizeof *lines);
    if (lines == NULL) broken = "out of memory";
    for (size_t i = 0, from = 0; broken == NULL && i <= dlen; i++) {
      if (i < dlen && desired[i] != '\n') continue;
      lines[n] = i > from ? (line_t){fnv(desired + from, i - from), desired + from, i - from, (int32_t)n} : (line_t){0, NULL, 0, -1};
      n++;
      from = i + 1;
    }
  }
  if (broken != NULL) {
    free(desired);
    free(t.p);
    free(at);
    free(lines);
    return layout_error(env, "match", broken);
  }
  // Sorted by hash (each keeps its index; an empty line, index -1, is never compared), then looked up by halving.
  qsort(lines, n, sizeof *lines, by_hash);
  int32_t *out;
  napi_status st = napi_create_arraybuffer(env, (size_t)count * 4, (void **)&out, &ab);
  if (st == napi_ok) {
    for (uint32_t k = 0; k < count; k++) {
      out[k] = -1;
      size_t len = at[k + 1] - at[k];
      if (len == 0) continue;
      const char *p = t.p + at[k];
      uint64_t h = fnv(p, len);
      size_t lo = 0, hi = n;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (lines[mid].hash < h) lo = mid + 1;
        else hi = mid;
      }
      for (size_t i = lo; i < n && lines[i].hash == h; i++) {
        if (lines[i].p != NULL && lines[i].len == len && memcmp(lines[i].p, p, len) == 0) {
          out[k] = lines[i].index;
          break;
        }
      }
    }
    st = napi_create_typedarray(env, napi_int32_array, count, ab, 0, &result);
  }
  free(desired);
  free(t.p);
  free(at);
  free(lines);
  CHECK(st);
  return result;
}
