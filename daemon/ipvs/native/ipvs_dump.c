// lvsd_ipvs: the IPVS table read (one GET_SERVICE dump, then one GET_DEST dump per service) done in C on a
// worker thread, returned to JavaScript as one buffer of the kernel's own attribute bytes. A restart adopting a
// big table spent most of its time in the JavaScript side of a thousand netlink round-trips (receive callbacks,
// a view per reply, a request per dump), run cold; here each dump is a sendmsg and a few recvmsg on one blocking
// socket, as ipvsadm does. Nothing is decoded here: daemon/dataplane/ipvs/observe.ts decodes the buffer with the
// same code as the replies read through the JavaScript transport (daemon/ipvs/native.ts describes the layout).
// Read-only: it sends GET commands only.
#include <node_api.h>
#include "ipvs.h"
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
#define NLA_F_NESTED_ 0x8000
// The attributes that name a service (AF, PROTOCOL, ADDR, PORT, FWMARK): a GET_DEST request carries them.
#define SVC_KEY_FIRST 1
#define SVC_KEY_LAST 5
#define RECV_SIZE (256 * 1024)


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
