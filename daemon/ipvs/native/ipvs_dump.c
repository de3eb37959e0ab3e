// lvsd_ipvs: the IPVS table read (one GET_SERVICE dump, then one GET_DEST dump per service) done in C on a
// worker thread, returned to JavaScript as one buffer of the kernel's own attribute bytes. A restart adopting a
// big table spent most of its time in the JavaScript side of a thousand netlink round-trips (receive callbacks,
// a view per reply, a request per dump), run cold; here each dump is a sendmsg and a few recvmsg on one blocking
// socket, as ipvsadm does. Nothing is decoded here: daemon/dataplane/ipvs/observe.ts decodes the buffer with the
// same code as the replies read through the JavaScript transport (daemon/ipvs/native.ts describes the layout).
// Read-only: it sends GET commands only.
#include <node_api.h>
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/genetlink.h>

#define IPVS_CMD_GET_SERVICE 4
#define IPVS_CMD_GET_DEST 8
#define IPVS_CMD_ATTR_SERVICE 1
#define IPVS_CMD_ATTR_DEST 2
#define IPVS_GENL_VERSION 1
#define NLA_TYPE_MASK_ 0x3fff
#define NLA_F_NESTED_ 0x8000
// The attributes that name a service (AF, PROTOCOL, ADDR, PORT, FWMARK): a GET_DEST request carries them.
#define SVC_KEY_FIRST 1
#define SVC_KEY_LAST 5
#define RECV_SIZE (256 * 1024)

#define CHECK(call)                                                                    \
  do {                                                                                 \
    if ((call) != napi_ok) {                                                           \
      napi_throw_error(env, NULL, "N-API call failed: " #call);                     \
      return NULL;                                                                     \
    }                                                                                  \
  } while (0)

/** A growing output buffer. */
typedef struct {
  uint8_t *data;
  size_t len, cap;
} out_t;

static int out_reserve(out_t *o, size_t n) {
  if (o->len + n <= o->cap) return 0;
  size_t cap = o->cap == 0 ? 1 << 20 : o->cap;
  while (cap < o->len + n) cap *= 2;
  uint8_t *d = realloc(o->data, cap);
  if (d == NULL) return ENOMEM;
  o->data = d;
  o->cap = cap;
  return 0;
}

static int out_u32(out_t *o, uint32_t v) {
  if (out_reserve(o, 4) != 0) return ENOMEM;
  memcpy(o->data + o->len, &v, 4);
  o->len += 4;
  return 0;
}

/** u32 length, then the bytes, padded to 4. */
static int out_blob(out_t *o, const uint8_t *p, uint32_t n) {
  size_t padded = (n + 3u) & ~3u;
  if (out_reserve(o, 4 + padded) != 0) return ENOMEM;
  memcpy(o->data + o->len, &n, 4);
  memcpy(o->data + o->len + 4, p, n);
  memset(o->data + o->len + 4 + n, 0, padded - n);
  o->len += 4 + padded;
  return 0;
}

typedef struct {
  int fd;
  uint32_t seq;
  uint16_t family;
  uint8_t *rbuf;
} sock_t;

/** Service nests' offsets in `out` (to build each GET_DEST request from). */
typedef struct {
  size_t *at;
  size_t n, cap;
} list_t;

static int send_dump(sock_t *s, uint8_t cmd, const uint8_t *payload, uint32_t plen) {
  uint8_t msg[512];
  uint32_t len = NLMSG_HDRLEN + GENL_HDRLEN + plen;
  if (len > sizeof msg) return EMSGSIZE;
  struct nlmsghdr *h = (struct nlmsghdr *)msg;
  h->nlmsg_len = len;
  h->nlmsg_type = s->family;
  h->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  h->nlmsg_seq = ++s->seq;
  h->nlmsg_pid = 0;
  struct genlmsghdr *g = (struct genlmsghdr *)(msg + NLMSG_HDRLEN);
  g->cmd = cmd;
  g->version = IPVS_GENL_VERSION;
  g->reserved = 0;
  memcpy(msg + NLMSG_HDRLEN + GENL_HDRLEN, payload, plen);
  struct sockaddr_nl to = {.nl_family = AF_NETLINK};
  for (;;) {
    ssize_t n = sendto(s->fd, msg, len, 0, (struct sockaddr *)&to, sizeof to);
    if (n >= 0) return 0;
    if (errno != EINTR) return errno;
  }
}

/** The (last) attribute `type` among buf[0..len): its value's offset and length; -1 when absent or malformed. */
static long find_attr(const uint8_t *buf, uint32_t len, uint16_t type, uint32_t *vlen) {
  long found = -1;
  for (uint32_t off = 0; off + 4 <= len;) {
    uint16_t alen, atype;
    memcpy(&alen, buf + off, 2);
    memcpy(&atype, buf + off + 2, 2);
    if (alen < 4 || off + alen > len) return -1;
    if ((atype & NLA_TYPE_MASK_) == type) {
      found = off + 4;
      *vlen = alen - 4u;
    }
    off += (alen + 3u) & ~3u;
  }
  return found;
}

/**
 * Receives one dump's replies: each reply's attribute `nest` (its value) is written to `o` as a blob, and counted
 * in *count. Returns 0, or the errno the kernel (or the socket) reported; EPROTO for a malformed reply.
 */
static int recv_dump(sock_t *s, uint16_t nest, out_t *o, uint32_t *count, list_t *starts) {
  for (;;) {
    ssize_t n = recv(s->fd, s->rbuf, RECV_SIZE, MSG_TRUNC);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if ((size_t)n > RECV_SIZE) return EMSGSIZE;
    for (struct nlmsghdr *h = (struct nlmsghdr *)s->rbuf; NLMSG_OK(h, (uint32_t)n); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_seq != s->seq) continue;
      if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_DONE) {
        int32_t err = 0;
        if (h->nlmsg_len >= NLMSG_HDRLEN + 4) memcpy(&err, NLMSG_DATA(h), 4);
        return err < 0 ? -err : 0;
      }
      if (h->nlmsg_type != s->family) continue;
      if (h->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) return EPROTO;
      const uint8_t *attrs = (const uint8_t *)NLMSG_DATA(h) + GENL_HDRLEN;
      uint32_t alen = h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, vlen = 0;
      long at = find_attr(attrs, alen, nest, &vlen);
      if (at < 0) return EPROTO;
      if (starts != NULL) {
        if (starts->n == starts->cap) {
          size_t cap = starts->cap == 0 ? 1024 : starts->cap * 2;
          size_t *p = realloc(starts->at, cap * sizeof *p);
          if (p == NULL) return ENOMEM;
          starts->at = p;
          starts->cap = cap;
        }
        starts->at[starts->n++] = o->len;
      }
      int e = out_blob(o, attrs + at, vlen);
      if (e != 0) return e;
      (*count)++;
    }
  }
}

/** A GET_DEST request's payload: a SERVICE nest holding the service's key attributes, copied as they are. */
static uint32_t dest_request(const uint8_t *svc, uint32_t len, uint8_t *req, uint32_t cap) {
  uint32_t at = 4;
  for (uint32_t off = 0; off + 4 <= len;) {
    uint16_t alen, atype;
    memcpy(&alen, svc + off, 2);
    memcpy(&atype, svc + off + 2, 2);
    if (alen < 4 || off + alen > len) break;
    uint16_t t = atype & NLA_TYPE_MASK_;
    uint32_t padded = (alen + 3u) & ~3u;
    if (t >= SVC_KEY_FIRST && t <= SVC_KEY_LAST && at + padded <= cap) {
      memset(req + at, 0, padded);
      memcpy(req + at, svc + off, alen);
      at += padded;
    }
    off += padded;
  }
  uint16_t nlen = (uint16_t)at, ntype = IPVS_CMD_ATTR_SERVICE | NLA_F_NESTED_;
  memcpy(req, &nlen, 2);
  memcpy(req + 2, &ntype, 2);
  return at;
}

/**
 * The whole table into `o`: u32 service count, then per service its SERVICE nest as a blob, a u32 destination
 * count, and each DEST nest as a blob (blob: u32 length, bytes, zero padding to 4). A service deleted between the
 * dumps (ESRCH, ENOENT) has no destinations. Returns 0 or an errno; *where names the dump that failed.
 */
static int dump_table(uint16_t family, out_t *o, const char **where) {
  sock_t s = {.fd = -1, .seq = 0, .family = family, .rbuf = NULL};
  list_t starts = {0};
  int err = 0;
  *where = "socket";
  s.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
  if (s.fd < 0) return errno;
  int rcv = 1 << 20;
  setsockopt(s.fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
  struct sockaddr_nl me = {.nl_family = AF_NETLINK};
  s.rbuf = malloc(RECV_SIZE);
  if (s.rbuf == NULL) err = ENOMEM;
  else if (bind(s.fd, (struct sockaddr *)&me, sizeof me) < 0) err = errno;
  uint32_t services = 0;
  if (err == 0) err = out_u32(o, 0);
  *where = "GET_SERVICE";
  if (err == 0) err = send_dump(&s, IPVS_CMD_GET_SERVICE, NULL, 0);
  if (err == 0) {
    // Service nests go to a staging buffer first: each is copied out with its destinations after it.
    out_t svcs = {0};
    err = recv_dump(&s, IPVS_CMD_ATTR_SERVICE, &svcs, &services, &starts);
    memcpy(o->data, &services, 4);
    *where = "GET_DEST";
    for (uint32_t k = 0; err == 0 && k < services; k++) {
      const uint8_t *blob = svcs.data + starts.at[k];
      uint32_t len;
      memcpy(&len, blob, 4);
      err = out_blob(o, blob + 4, len);
      if (err != 0) break;
      size_t count_at = o->len;
      err = out_u32(o, 0);
      if (err != 0) break;
      uint8_t req[256];
      uint32_t rlen = dest_request(blob + 4, len, req, sizeof req);
      uint32_t dests = 0;
      err = send_dump(&s, IPVS_CMD_GET_DEST, req, rlen);
      if (err == 0) err = recv_dump(&s, IPVS_CMD_ATTR_DEST, o, &dests, NULL);
      if (err == ESRCH || err == ENOENT) err = 0;
      memcpy(o->data + count_at, &dests, 4);
    }
    free(svcs.data);
  }
  free(starts.at);
  free(s.rbuf);
  close(s.fd);
  return err;
}

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  uint16_t family;
  out_t out;
  int err;
  const char *where;
} job_t;

static void job_execute(napi_env env, void *data) {
  job_t *j = data;
  j->err = dump_table(j->family, &j->out, &j->where);
}

static void free_out(napi_env env, void *data, void *hint) {
  free(data);
}

static void job_complete(napi_env env, napi_status status, void *data) {
  job_t *j = data;
  napi_value v;
  if (status == napi_ok && j->err == 0) {
    if (napi_create_external_buffer(env, j->out.len, j->out.data, free_out, NULL, &v) == napi_ok) {
      j->out.data = NULL;
      napi_resolve_deferred(env, j->deferred, v);
    } else {
      napi_value msg;
      napi_create_string_utf8(env, "IPVS table read: cannot hand over the buffer", NAPI_AUTO_LENGTH, &msg);
      napi_create_error(env, NULL, msg, &v);
      napi_reject_deferred(env, j->deferred, v);
    }
  } else {
    napi_value msg, code, command;
    char text[160];
    int e = status == napi_ok ? j->err : ECANCELED;
    snprintf(text, sizeof text, "IPVS table read: %s failed: %s", j->where, strerror(e));
    napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &v);
    napi_create_int32(env, e, &code);
    napi_set_named_property(env, v, "errno", code);
    napi_create_string_utf8(env, j->where, NAPI_AUTO_LENGTH, &command);
    napi_set_named_property(env, v, "command", command);
    napi_reject_deferred(env, j->deferred, v);
  }
  free(j->out.data);
  napi_delete_async_work(env, j->work);
  free(j);
}

/** dumpTable(familyId): Promise<Buffer>, the layout dump_table writes. */
static napi_value DumpTable(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], promise, name;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint32_t family = 0;
  if (argc < 1 || napi_get_value_uint32(env, argv[0], &family) != napi_ok || family == 0 || family > 0xffff) {
    napi_throw_type_error(env, NULL, "dumpTable(familyId): the IPVS generic netlink family id, 1..65535");
    return NULL;
  }
  job_t *j = calloc(1, sizeof *j);
  if (j == NULL) {
    napi_throw_error(env, NULL, "dumpTable: out of memory");
    return NULL;
  }
  j->family = (uint16_t)family;
  CHECK(napi_create_promise(env, &j->deferred, &promise));
  CHECK(napi_create_string_utf8(env, "lvsd_ipvs_dump", NAPI_AUTO_LENGTH, &name));
  CHECK(napi_create_async_work(env, NULL, name, job_execute, job_complete, j, &j->work));
  CHECK(napi_queue_async_work(env, j->work));
  return promise;
}


// ---- fingerprints: each service of a table read as one line of text, for an adoption's compare ----------------
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
static napi_value Fingerprints(napi_env env, napi_callback_info info) {
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
static napi_value Match(napi_env env, napi_callback_info info) {
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

static napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  CHECK(napi_create_function(env, "dumpTable", NAPI_AUTO_LENGTH, DumpTable, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "dumpTable", fn));
  CHECK(napi_create_function(env, "fingerprints", NAPI_AUTO_LENGTH, Fingerprints, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "fingerprints", fn));
  CHECK(napi_create_function(env, "match", NAPI_AUTO_LENGTH, Match, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "match", fn));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
