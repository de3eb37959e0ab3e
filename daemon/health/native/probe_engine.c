// lvsd's native probe engine: TCP connect, plain-HTTP GET and ICMP/ICMPv6 echo health checks run by
// one epoll thread, so a check costs JavaScript almost nothing (no net.Socket, no Promise, no AbortSignal).
//
//   open(onBatch)                                 → engine; onBatch(Int32Array records, bodies[])
//   addSpec(engine, kind, host, port, bindTo|null, request|null, ranges Int32Array|null, timeoutMs, bindPort, mark) → spec id
//     bindPort 0: any source port; mark 0: no SO_MARK (keepalived's checker bind_port and fwmark)
//   removeSpec(engine, id)
//   start(engine, Int32Array [spec, token, gen]…, count)
//   close(engine)
//
// A result is five int32s [spec, token, gen, code, value]:
//   RES_OK      connected (tcp) / complete head with an accepted status (http)
//   RES_ERRNO   value = errno of connect, bind, send or recv
//   RES_TIMEOUT no verdict within the spec's timeout (the thread enforces it)
//   RES_HEAD    value = index into bodies[]: the bytes of a complete head (or of a head larger than
//               64 KiB) that JavaScript must judge: the slow path keeps every verdict identical to the
//               JavaScript checker's, which reads the same bytes with the same reader. For a check of
//               the body (KIND_HTTP_BODY: regex or digest) the bytes go on to the end of the body, and
//               JavaScript always judges them: the engine only decides when the response is whole
//   RES_EOF     value = index into bodies[]: the peer closed before the head was complete
// Completions are handed over in batches through one napi_threadsafe_function call, at most every
// 5 ms; while a call is pending, further results join the same batch.
//
// Sockets close with SO_LINGER 0 (a reset): no TIME_WAIT piles up on the director at 10,000 checks/s.
//
// SMTP checks (KIND_SMTP: keepalived SMTP_CHECK) read the banner, send the request's first line
// (HELO) after a 220, the rest (QUIT) after a 250, and end at the QUIT's answer, or at a reply that
// is wrong or not SMTP (smtp_scan.c finds where replies end): every outcome but an errno or the timeout
// is RES_HEAD / RES_EOF with the whole transcript, which JavaScript judges with the JavaScript
// checker's own dialog (checkers/smtp.ts).
//
// Ping checks (KIND_PING) share one ICMP socket per family, opened by the first ping spec: raw when
// the process may (CAP_NET_RAW), else a ping socket (SOCK_DGRAM, allowed by net.ipv4.ping_group_range);
// neither is an error addSpec throws. Each echo carries the engine's id and a sequence number unique
// among the echoes in flight, which finds the probe when the reply (or an ICMP error quoting the
// request) comes back; the reply's source must be the target.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <linux/icmp.h>
#include <netinet/icmp6.h>
#include "icmp_codec.h"
#include "smtp_scan.h"
#include "napi_check.h"

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

enum { KIND_TCP = 0, KIND_HTTP = 1, KIND_HTTP_BODY = 2, KIND_PING = 3, KIND_SMTP = 4 };
enum { BODY_EOF = 0, BODY_LENGTH = 1, BODY_CHUNKED = 2 };
enum { RES_OK = 0, RES_ERRNO = 1, RES_TIMEOUT = 2, RES_HEAD = 3, RES_EOF = 4 };
enum { ST_CONNECTING = 0, ST_SENDING = 1, ST_READING = 2 };

// The JavaScript reader gives up on a head without its blank line beyond 64 KiB; one byte more is
// enough to hand it the same verdict.
#define HEAD_LIMIT (64 * 1024)
// The JavaScript reader's body limit (HttpResponseReader's maxBytes) and the slack it allows past it.
#define BODY_LIMIT ((1 << 20) + 64)
#define MAX_EVENTS 512
// Results wait up to this long to share one crossing into JavaScript: every crossing wakes the event
// loop, and under QEMU TCG a wake-up costs more than a check.
#define FLUSH_NS (5 * 1000000LL)
#define REC 5
// checkers/smtp-reply.ts MAX_REPLY_BYTES: unconsumed bytes past this are not SMTP.
#define SMTP_REPLY_LIMIT 4096

typedef struct {
  int id;
  int kind;
  int refs;  // the table's reference + probes in flight
  int removed;
  struct sockaddr_storage dst;
  socklen_t dst_len;
  struct sockaddr_storage src;
  socklen_t src_len;  // 0: no bindto and no bind port
  int src_port;       // keepalived bind_port: the source port is fixed, so no IP_BIND_ADDRESS_NO_PORT
  uint32_t mark;      // SO_MARK, 0: none
  char* request;
  size_t request_len;
  size_t helo_len;  // KIND_SMTP: the request's first line (HELO), sent after the banner
  int32_t* ranges;  // [lo, hi] pairs
  int nranges;
  int64_t timeout_ns;
} spec_t;

typedef struct probe {
  struct probe* prev;  // deadline list (ascending)
  struct probe* next;
  spec_t* spec;
  int fd;    // -1 for a ping: it shares the engine's ICMP socket
  int seq;   // a ping's echo sequence number, -1 before it is sent
  int state;
  int32_t token, gen;
  int64_t deadline;
  size_t sent;
  char* buf;
  size_t len, cap;
  // KIND_HTTP_BODY, once the head is in: where the body starts, how it ends, where the chunk walk is.
  size_t body_at;
  int body_mode;
  size_t body_length;
  size_t chunk_at;
  // KIND_SMTP: replies judged so far (0 banner, 1 HELO, 2 QUIT), bytes they took, request bytes to send by now.
  int smtp_step;
  size_t scan_at;
  size_t send_to;
} probe_t;

typedef struct {
  int32_t* rec;  // REC int32 per result
  size_t n, cap;
  struct {
    char* data;
    size_t len;
  }* bodies;
  size_t nbodies, capbodies;
} batch_t;

typedef struct {
  pthread_t thread;
  pthread_mutex_t mu;
  int epfd, evfd;
  int stopping;
  napi_threadsafe_function tsfn;
  // Guarded by mu: the spec table, submissions, the outgoing batch.
  spec_t** specs;
  int nspecs;
  int* free_ids;
  int nfree, capfree;
  int32_t* sub;  // [spec, token, gen] triples
  size_t nsub, capsub;
  int woken;
  batch_t out;
  int call_pending;
  // ICMP sockets, [0] IPv4 and [1] IPv6 (-1 until a ping spec needs one): opened with mu held,
  // read by the engine thread only after a submission that came through mu.
  int icmp_fd[2];
  int icmp_raw[2];      // raw socket (our id, IPv4 header first) or ping socket (the kernel's id)
  uint16_t icmp_id[2];
  // Engine thread only.
  probe_t** by_seq;     // 65536 slots: the ping in flight with that sequence number
  uint16_t next_seq;
  probe_t* head;
  probe_t* tail;
  batch_t local;
} engine_t;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void* grow(void* p, size_t* cap, size_t need, size_t elem) {
  if (need <= *cap) return p;
  size_t c = *cap == 0 ? 64 : *cap;
  while (c < need) c *= 2;
  void* q = realloc(p, c * elem);
  if (q == NULL) abort();
  *cap = c;
  return q;
}

static void spec_unref(spec_t* s) {  // with mu held
  if (--s->refs > 0) return;
  free(s->request);
  free(s->ranges);
  free(s);
}

// ——— results ———

static void emit(engine_t* e, probe_t* p, int code, int32_t value) {
  batch_t* b = &e->local;
  b->rec = grow(b->rec, &b->cap, b->n + REC, sizeof(int32_t));
  int32_t* r = b->rec + b->n;
  r[0] = p->spec->id;
  r[1] = p->token;
  r[2] = p->gen;
  r[3] = code;
  r[4] = value;
  b->n += REC;
}

static void emit_bytes(engine_t* e, probe_t* p, int code) {
  batch_t* b = &e->local;
  b->bodies = grow(b->bodies, &b->capbodies, b->nbodies + 1, sizeof b->bodies[0]);
  b->bodies[b->nbodies].data = p->buf;  // ownership moves to the batch
  b->bodies[b->nbodies].len = p->len;
  p->buf = NULL;
  p->len = p->cap = 0;
  emit(e, p, code, (int32_t)b->nbodies);
  b->nbodies++;
}

static void flush(engine_t* e) {
  batch_t* l = &e->local;
  if (l->n == 0) return;
  pthread_mutex_lock(&e->mu);
  batch_t* o = &e->out;
  size_t base = o->nbodies;
  o->rec = grow(o->rec, &o->cap, o->n + l->n, sizeof(int32_t));
  for (size_t i = 0; i < l->n; i += REC) {
    int32_t* r = o->rec + o->n + i;
    memcpy(r, l->rec + i, REC * sizeof(int32_t));
    if (r[3] == RES_HEAD || r[3] == RES_EOF) r[4] += (int32_t)base;
  }
  o->n += l->n;
  o->bodies = grow(o->bodies, &o->capbodies, o->nbodies + l->nbodies, sizeof o->bodies[0]);
  memcpy(o->bodies + o->nbodies, l->bodies, l->nbodies * sizeof l->bodies[0]);
  o->nbodies += l->nbodies;
  l->n = 0;
  l->nbodies = 0;
  int call = !e->call_pending;
  e->call_pending = 1;
  pthread_mutex_unlock(&e->mu);
  if (call) napi_call_threadsafe_function(e->tsfn, NULL, napi_tsfn_nonblocking);
}

// ——— probes ———

static void list_unlink(engine_t* e, probe_t* p) {
  if (p->prev != NULL) p->prev->next = p->next;
  else e->head = p->next;
  if (p->next != NULL) p->next->prev = p->prev;
  else e->tail = p->prev;
  p->prev = p->next = NULL;
}

// Deadlines of one timeout value arrive in order, so inserting from the tail is O(1) in practice.
static void list_insert(engine_t* e, probe_t* p) {
  probe_t* after = e->tail;
  while (after != NULL && after->deadline > p->deadline) after = after->prev;
  p->prev = after;
  p->next = after != NULL ? after->next : e->head;
  if (p->next != NULL) p->next->prev = p;
  else e->tail = p;
  if (after != NULL) after->next = p;
  else e->head = p;
}

static void probe_end(engine_t* e, probe_t* p) {
  list_unlink(e, p);
  if (p->seq >= 0 && e->by_seq[p->seq] == p) e->by_seq[p->seq] = NULL;
  if (p->fd >= 0) {
    // close() alone leaves the epoll set only when no other descriptor shares the socket, and a
    // child that Node forks (nft, notify hooks, exec checks) holds a copy of every descriptor until
    // it execs: the set would go on reporting events for this probe after it is freed.
    epoll_ctl(e->epfd, EPOLL_CTL_DEL, p->fd, NULL);
    struct linger lg = {1, 0};
    setsockopt(p->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(p->fd);
  }
  free(p->buf);
  pthread_mutex_lock(&e->mu);
  spec_unref(p->spec);
  pthread_mutex_unlock(&e->mu);
  free(p);
}

static void finish_errno(engine_t* e, probe_t* p, int err) {
  emit(e, p, RES_ERRNO, err);
  probe_end(e, p);
}

static void ping_start(engine_t* e, probe_t* p);

static void probe_start(engine_t* e, spec_t* s, int32_t token, int32_t gen) {
  probe_t* p = calloc(1, sizeof *p);
  if (p == NULL) abort();
  p->spec = s;
  p->token = token;
  p->gen = gen;
  p->fd = -1;
  p->seq = -1;
  // The clock starts at this probe's own connect(), not at the start of a burst: on a slow CPU the
  // last of a thousand starts could otherwise be timed out before its SYN left.
  p->deadline = now_ns() + s->timeout_ns;
  list_insert(e, p);
  if (s->kind == KIND_PING) {
    ping_start(e, p);
    return;
  }
  p->fd = socket(s->dst.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (p->fd < 0) {
    finish_errno(e, p, errno);
    return;
  }
  // Before connect(): the SYN carries the mark (routing, nft meta mark), as keepalived sets it.
  if (s->mark != 0 && setsockopt(p->fd, SOL_SOCKET, SO_MARK, &s->mark, sizeof s->mark) != 0) {
    finish_errno(e, p, errno);
    return;
  }
  if (s->src_len > 0) {
    int one = 1;
    if (s->src.ss_family == AF_INET && s->src_port == 0) setsockopt(p->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    // A fixed port is shared by every check that names it (several real servers, a retry): each is
    // reset at its end (SO_LINGER 0, no TIME_WAIT), and SO_REUSEADDR lets the others bind meanwhile.
    if (s->src_port != 0) setsockopt(p->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(p->fd, (struct sockaddr*)&s->src, s->src_len) != 0) {
      finish_errno(e, p, errno);
      return;
    }
  }
  if (connect(p->fd, (struct sockaddr*)&s->dst, s->dst_len) != 0 && errno != EINPROGRESS) {
    finish_errno(e, p, errno);
    return;
  }
  p->state = ST_CONNECTING;
  struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = p};
  if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, p->fd, &ev) != 0) finish_errno(e, p, errno);
}

static int parse_status(const char* b, size_t n) {
  // "HTTP/1.0 200" or "HTTP/1.1 200", then a space or the end of the line.
  if (n < 12 || memcmp(b, "HTTP/1.", 7) != 0 || (b[7] != '0' && b[7] != '1') || b[8] != ' ') return -1;
  for (int i = 9; i < 12; i++)
    if (b[i] < '0' || b[i] > '9') return -1;
  if (n > 12 && b[12] != ' ' && b[12] != '\r') return -1;
  return (b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0');
}

// The JavaScript reader also rejects a head whose Content-Length is not a number; the fast path
// only claims heads where every Content-Length value is plain digits, and leaves the rest to it.
static int lengths_plain(const char* b, size_t n) {
  const char* end = b + n;
  for (const char* line = memchr(b, '\n', n); line != NULL && line + 1 < end; line = memchr(line + 1, '\n', (size_t)(end - line - 1))) {
    const char* s = line + 1;
    const char* eol = memchr(s, '\r', (size_t)(end - s));
    if (eol == NULL) eol = end;
    while (s < eol && (*s == ' ' || *s == '\t')) s++;
    if ((size_t)(eol - s) < 15 || strncasecmp(s, "content-length", 14) != 0) continue;
    const char* c = s + 14;
    while (c < eol && (*c == ' ' || *c == '\t')) c++;
    if (c == eol || *c != ':') continue;
    c++;
    while (c < eol && (*c == ' ' || *c == '\t')) c++;
    const char* v = eol;
    while (v > c && (v[-1] == ' ' || v[-1] == '\t')) v--;
    if (v == c) return 0;
    for (; c < v; c++)
      if (*c < '0' || *c > '9') return 0;
  }
  return 1;
}

// What JavaScript's String.prototype.trim removes, among the bytes the reader decodes as latin1.
static int js_space(char c) {
  unsigned char u = (unsigned char)c;
  return u == ' ' || (u >= '\t' && u <= '\r') || u == 0xA0;
}

// Trims [*s, *e) as the JavaScript reader's trim() does.
static void js_trim(const char** s, const char** e) {
  while (*s < *e && js_space(**s)) (*s)++;
  while (*e > *s && js_space((*e)[-1])) (*e)--;
}

// Walks the header lines of a head b[0..n) as the JavaScript reader splits it (on CRLF, after the
// status line): returns 1 with the next line's name and value, trimmed as it trims them; 0 at the end.
// *at is the cursor (start at 0).
static int next_header(const char* b, size_t n, size_t* at, const char** k, size_t* klen, const char** v, size_t* vlen) {
  const char* end = b + n;
  for (;;) {
    const char* sep = memmem(b + *at, n - *at, "\r\n", 2);
    if (sep == NULL) return 0;
    const char* s = sep + 2;
    const char* eol = memmem(s, (size_t)(end - s), "\r\n", 2);
    if (eol == NULL) eol = end;
    *at = (size_t)(eol - b);
    const char* colon = memchr(s, ':', (size_t)(eol - s));
    if (colon == NULL || colon == s) continue;
    const char* ke = colon;
    js_trim(&s, &ke);
    const char* vs = colon + 1;
    const char* ve = eol;
    js_trim(&vs, &ve);
    *k = s;
    *klen = (size_t)(ke - s);
    *v = vs;
    *vlen = (size_t)(ve - vs);
    return 1;
  }
}

// Whether a Transfer-Encoding value lists "chunked" as one of its comma-separated codings.
static int lists_chunked(const char* v, size_t n) {
  size_t i = 0;
  while (i <= n) {
    size_t j = i;
    while (j < n && v[j] != ',') j++;
    const char* a = v + i;
    const char* z = v + j;
    js_trim(&a, &z);
    if (z - a == 7 && strncasecmp(a, "chunked", 7) == 0) return 1;
    i = j + 1;
  }
  return 0;
}

// How the JavaScript reader will find the end of this body, header by header in its order: a
// Content-Length (digits only, or the reader calls the response bad) unless chunked was already
// named; chunked from any Transfer-Encoding that lists it; else the close. 1xx, 204 and 304 carry none.
// Returns 0 when the reader will call the head bad.
static int body_framing(probe_t* p, size_t head, int status) {
  p->body_at = head + 4;
  p->chunk_at = p->body_at;
  p->body_mode = BODY_EOF;
  size_t at = 0, klen, vlen;
  const char *k, *v;
  while (next_header(p->buf, head, &at, &k, &klen, &v, &vlen)) {
    if (klen == 14 && strncasecmp(k, "content-length", 14) == 0 && p->body_mode != BODY_CHUNKED) {
      if (vlen == 0) return 0;
      size_t len = 0;
      for (size_t i = 0; i < vlen; i++) {
        if (v[i] < '0' || v[i] > '9') return 0;
        if (len <= BODY_LIMIT) len = len * 10 + (size_t)(v[i] - '0');
      }
      if (len > BODY_LIMIT - 64) return 0;
      p->body_mode = BODY_LENGTH;
      p->body_length = len;
    } else if (klen == 17 && strncasecmp(k, "transfer-encoding", 17) == 0 && lists_chunked(v, vlen)) {
      p->body_mode = BODY_CHUNKED;
    }
  }
  if (status == 204 || status == 304 || (status >= 100 && status < 200)) {
    p->body_mode = BODY_LENGTH;
    p->body_length = 0;
  }
  return 1;
}

// Whether the bytes so far settle the check for the JavaScript reader: the body is whole (or its last
// chunk came), or the reader will call it bad (past its limit, a chunk size that is not hex).
static int body_settled(probe_t* p) {
  size_t got = p->len - p->body_at;
  if (got > BODY_LIMIT) return 1;
  if (p->body_mode == BODY_LENGTH) return got >= p->body_length;
  if (p->body_mode == BODY_EOF) return 0;
  for (;;) {
    const char* at = p->buf + p->chunk_at;
    const char* end = p->buf + p->len;
    const char* eol = memmem(at, (size_t)(end - at), "\r\n", 2);
    if (eol == NULL) return 0;
    const char* se = memchr(at, ';', (size_t)(eol - at));
    if (se == NULL) se = eol;
    js_trim(&at, &se);
    if (at == se) return 1;
    size_t size = 0;
    for (const char* c = at; c < se; c++) {
      int d = (*c >= '0' && *c <= '9') ? *c - '0' : (*c >= 'a' && *c <= 'f') ? *c - 'a' + 10 : (*c >= 'A' && *c <= 'F') ? *c - 'A' + 10 : -1;
      if (d < 0) return 1;
      // A chunk larger than the limit: the reader waits for it until the body passes the limit.
      if (size <= BODY_LIMIT) size = size * 16 + (size_t)d;
    }
    if (size == 0) return 1;
    size_t start = (size_t)(eol + 2 - p->buf);
    if (p->len < start + size + 2) return 0;
    p->chunk_at = start + size + 2;
  }
}

static int accepted(const spec_t* s, int status) {
  for (int i = 0; i < s->nranges; i++)
    if (status >= s->ranges[2 * i] && status <= s->ranges[2 * i + 1]) return 1;
  return 0;
}

// Reads what has arrived onto p->buf: 1 when bytes came, 0 when the probe ended (the peer closed: RES_EOF
// with the bytes so far; or an error), -1 when there is nothing more to read now.
static int recv_more(engine_t* e, probe_t* p) {
  if (p->cap - p->len < 4096) p->buf = grow(p->buf, &p->cap, p->len + 4096 > 16384 ? p->len + 4096 : 16384, 1);
  ssize_t r = recv(p->fd, p->buf + p->len, p->cap - p->len, 0);
  if (r < 0) {
    if (errno == EAGAIN || errno == EINTR) return -1;
    finish_errno(e, p, errno);
    return 0;
  }
  if (r == 0) {
    emit_bytes(e, p, RES_EOF);
    probe_end(e, p);
    return 0;
  }
  p->len += (size_t)r;
  return 1;
}

static void smtp_readable(engine_t* e, probe_t* p);

static void on_readable(engine_t* e, probe_t* p) {
  if (p->spec->kind == KIND_SMTP) {
    smtp_readable(e, p);
    return;
  }
  for (;;) {
    size_t from = p->len >= 3 ? p->len - 3 : 0;
    if (recv_more(e, p) <= 0) return;
    if (p->body_at > 0) {
      if (body_settled(p)) {
        emit_bytes(e, p, RES_HEAD);
        probe_end(e, p);
        return;
      }
      continue;
    }
    void* end = memmem(p->buf + from, p->len - from, "\r\n\r\n", 4);
    if (end != NULL) {
      int status = parse_status(p->buf, (size_t)((char*)end - p->buf));
      size_t head = (size_t)((char*)end - p->buf);
      if (p->spec->kind == KIND_HTTP_BODY && status >= 0 && accepted(p->spec, status)) {
        // The status is fine; the body decides, so read on until it is whole (JavaScript judges it).
        if (body_framing(p, head, status) && !body_settled(p)) continue;
        emit_bytes(e, p, RES_HEAD);
      } else if (status >= 0 && accepted(p->spec, status) && lengths_plain(p->buf, head)) {
        emit(e, p, RES_OK, status);
      } else {
        emit_bytes(e, p, RES_HEAD);
      }
      probe_end(e, p);
      return;
    }
    if (p->len > HEAD_LIMIT) {
      emit_bytes(e, p, RES_HEAD);
      probe_end(e, p);
      return;
    }
  }
}

static int smtp_advance(engine_t* e, probe_t* p);

static void on_writable(engine_t* e, probe_t* p) {
  spec_t* s = p->spec;
  size_t to = s->kind == KIND_SMTP ? p->send_to : s->request_len;
  while (p->sent < to) {
    ssize_t w = send(p->fd, s->request + p->sent, to - p->sent, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      finish_errno(e, p, errno);
      return;
    }
    p->sent += (size_t)w;
  }
  p->state = ST_READING;
  struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = p};
  if (epoll_ctl(e->epfd, EPOLL_CTL_MOD, p->fd, &ev) != 0) {
    finish_errno(e, p, errno);
    return;
  }
  // SMTP: replies that came while the command waited to go out (a pipelining server) are judged now.
  if (s->kind == KIND_SMTP) smtp_advance(e, p);
}

// Sends the SMTP request up to send_to; 1 while the probe goes on, 0 when it ended (an error).
static int smtp_send(engine_t* e, probe_t* p) {
  while (p->sent < p->send_to) {
    ssize_t w = send(p->fd, p->spec->request + p->sent, p->send_to - p->sent, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) {
        finish_errno(e, p, errno);
        return 0;
      }
      // The send buffer is full: the rest goes when the socket is writable (on_writable).
      p->state = ST_SENDING;
      struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = p};
      if (epoll_ctl(e->epfd, EPOLL_CTL_MOD, p->fd, &ev) != 0) {
        finish_errno(e, p, errno);
        return 0;
      }
      return 1;
    }
    p->sent += (size_t)w;
  }
  return 1;
}

// Judges the whole replies that have arrived, in order, sending HELO / QUIT as each step passes;
// 0 when the probe ended (its transcript handed to JavaScript), 1 while it goes on.
static int smtp_advance(engine_t* e, probe_t* p) {
  while (p->state == ST_READING) {
    int code = 0;
    size_t used = 0;
    int r = smtp_scan_reply(p->buf + p->scan_at, p->len - p->scan_at, &code, &used);
    if (r == SMTP_MORE) break;
    if (r == SMTP_GARBAGE || p->smtp_step == 2 || code != (p->smtp_step == 0 ? 220 : 250)) {
      emit_bytes(e, p, RES_HEAD);
      probe_end(e, p);
      return 0;
    }
    p->scan_at += used;
    p->smtp_step++;
    p->send_to = p->smtp_step == 1 ? p->spec->helo_len : p->spec->request_len;
    if (!smtp_send(e, p)) return 0;
  }
  if (p->len - p->scan_at > SMTP_REPLY_LIMIT) {
    emit_bytes(e, p, RES_HEAD);
    probe_end(e, p);
    return 0;
  }
  return 1;
}

static void smtp_readable(engine_t* e, probe_t* p) {
  while (p->state == ST_READING) {
    if (recv_more(e, p) <= 0 || !smtp_advance(e, p)) return;
  }
}

static void on_event(engine_t* e, probe_t* p, uint32_t events) {
  if (p->state == ST_CONNECTING) {
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
      finish_errno(e, p, err);
      return;
    }
    if (!(events & EPOLLOUT)) return;
    if (p->spec->kind == KIND_TCP) {
      emit(e, p, RES_OK, 0);
      probe_end(e, p);
      return;
    }
    if (p->spec->kind == KIND_SMTP) {
      // The server speaks first: wait for its banner.
      p->state = ST_READING;
      struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = p};
      if (epoll_ctl(e->epfd, EPOLL_CTL_MOD, p->fd, &ev) != 0) finish_errno(e, p, errno);
      return;
    }
    p->state = ST_SENDING;
  }
  if (p->state == ST_SENDING) {
    on_writable(e, p);
    return;
  }
  on_readable(e, p);
}

// ——— ping ———

static void ping_start(engine_t* e, probe_t* p) {
  spec_t* s = p->spec;
  int f = s->dst.ss_family == AF_INET6;
  if (e->by_seq == NULL && (e->by_seq = calloc(65536, sizeof *e->by_seq)) == NULL) abort();
  int tries = 0;
  while (e->by_seq[e->next_seq] != NULL && tries < 65536) {
    e->next_seq++;
    tries++;
  }
  if (tries == 65536) {  // 65,536 echoes in flight: no sequence number left to tell them apart
    finish_errno(e, p, ENOBUFS);
    return;
  }
  p->seq = e->next_seq++;
  e->by_seq[p->seq] = p;
  uint8_t pkt[ICMP_ECHO_LEN];
  icmp_echo(pkt, f ? 6 : 4, e->icmp_id[f], (uint16_t)p->seq);
  struct iovec iov = {pkt, sizeof pkt};
  struct msghdr msg = {.msg_name = &s->dst, .msg_namelen = s->dst_len, .msg_iov = &iov, .msg_iovlen = 1};
  // bindto: the socket is shared, so the source address goes with each echo (IP_PKTINFO).
  union {
    char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
    struct cmsghdr align;
  } ctl;
  if (s->src_len > 0) {
    memset(&ctl, 0, sizeof ctl);
    msg.msg_control = ctl.buf;
    struct cmsghdr* c = (struct cmsghdr*)ctl.buf;
    if (f) {
      struct in6_pktinfo pi = {.ipi6_addr = ((struct sockaddr_in6*)&s->src)->sin6_addr, .ipi6_ifindex = 0};
      c->cmsg_level = IPPROTO_IPV6;
      c->cmsg_type = IPV6_PKTINFO;
      c->cmsg_len = CMSG_LEN(sizeof pi);
      memcpy(CMSG_DATA(c), &pi, sizeof pi);
      msg.msg_controllen = CMSG_SPACE(sizeof pi);
    } else {
      struct in_pktinfo pi = {.ipi_ifindex = 0, .ipi_spec_dst = ((struct sockaddr_in*)&s->src)->sin_addr};
      c->cmsg_level = IPPROTO_IP;
      c->cmsg_type = IP_PKTINFO;
      c->cmsg_len = CMSG_LEN(sizeof pi);
      memcpy(CMSG_DATA(c), &pi, sizeof pi);
      msg.msg_controllen = CMSG_SPACE(sizeof pi);
    }
  }
  if (sendmsg(e->icmp_fd[f], &msg, 0) < 0) finish_errno(e, p, errno);
}

static int same_host(const struct sockaddr_storage* a, const struct sockaddr_storage* b) {
  if (a->ss_family != b->ss_family) return 0;
  if (a->ss_family == AF_INET6) return memcmp(&((const struct sockaddr_in6*)a)->sin6_addr, &((const struct sockaddr_in6*)b)->sin6_addr, 16) == 0;
  return memcmp(&((const struct sockaddr_in*)a)->sin_addr, &((const struct sockaddr_in*)b)->sin_addr, 4) == 0;
}

static int quotes_host(const uint8_t* q, const struct sockaddr_storage* dst) {
  if (dst->ss_family == AF_INET6) return memcmp(q, &((const struct sockaddr_in6*)dst)->sin6_addr, 16) == 0;
  return memcmp(q, &((const struct sockaddr_in*)dst)->sin_addr, 4) == 0;
}

// Reads what the ICMP socket of family f holds (at most a bounded number of datagrams per turn, so
// a flood of foreign ICMP cannot keep the other sockets waiting; epoll reports the rest again).
static void icmp_readable(engine_t* e, int f) {
  uint8_t buf[1500];
  struct sockaddr_storage from;
  for (int i = 0; i < 4096; i++) {
    socklen_t fl = sizeof from;
    ssize_t n = recvfrom(e->icmp_fd[f], buf, sizeof buf, 0, (struct sockaddr*)&from, &fl);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN, or a ping socket's pending ICMP error (the timeout decides that probe)
    }
    icmp_read_t r = icmp_read(buf, (size_t)n, f ? 6 : 4, !f && e->icmp_raw[f]);
    if (r.kind == ICMP_NONE || (e->icmp_raw[f] && r.id != e->icmp_id[f]) || e->by_seq == NULL) continue;
    probe_t* p = e->by_seq[r.seq];
    if (p == NULL || (p->spec->dst.ss_family == AF_INET6) != f) continue;
    if (r.kind == ICMP_REPLY ? !same_host(&from, &p->spec->dst) : !quotes_host(r.quoted_dst, &p->spec->dst)) continue;
    if (r.kind == ICMP_REPLY) emit(e, p, RES_OK, 0);
    else emit(e, p, RES_ERRNO, r.err);
    probe_end(e, p);
  }
}

// Opens the ICMP socket of family f (with mu held). Returns 0, or the errno of the last attempt.
static int open_icmp(engine_t* e, int f) {
  if (e->icmp_fd[f] >= 0) return 0;
  int af = f ? AF_INET6 : AF_INET;
  int proto = f ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
  int raw = 1;
  int fd = socket(af, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
  if (fd < 0 && (errno == EPERM || errno == EACCES)) {
    raw = 0;
    fd = socket(af, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
  }
  if (fd < 0) return errno;
  if (raw && !f) {
    // Only echo replies and the errors that can quote an echo request reach this socket.
    struct icmp_filter flt = {~((1U << ICMP_ECHOREPLY) | (1U << ICMP_DEST_UNREACH) | (1U << ICMP_TIME_EXCEEDED))};
    setsockopt(fd, SOL_RAW, ICMP_FILTER, &flt, sizeof flt);
  } else if (raw) {
    struct icmp6_filter flt;
    ICMP6_FILTER_SETBLOCKALL(&flt);
    ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &flt);
    ICMP6_FILTER_SETPASS(ICMP6_DST_UNREACH, &flt);
    ICMP6_FILTER_SETPASS(ICMP6_TIME_EXCEEDED, &flt);
    setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &flt, sizeof flt);
  }
  // 10,000 echoes in one second arrive in bursts: room for them while the thread is busy.
  int size = 4 << 20;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &e->icmp_fd[f]};
  if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
    int err = errno;
    close(fd);
    return err;
  }
  static unsigned engines;
  // A raw socket sees every echo reply of the host: the id tells ours apart (ping(8) uses its pid too).
  e->icmp_id[f] = (uint16_t)((unsigned)getpid() * 31U + __atomic_fetch_add(&engines, 1, __ATOMIC_RELAXED));
  e->icmp_raw[f] = raw;
  e->icmp_fd[f] = fd;
  return 0;
}

// ——— the thread ———

// Starts at most this many checks per loop iteration, so a burst (the event loop catching up after a
// stall) never keeps answers that already arrived waiting behind a thousand connect() calls.
#define STARTS_PER_TURN 128

// Returns whether submissions are left for the next iteration.
static int take_submissions(engine_t* e) {
  pthread_mutex_lock(&e->mu);
  e->woken = 0;
  size_t n = e->nsub < STARTS_PER_TURN * 3 ? e->nsub : STARTS_PER_TURN * 3;
  int32_t* sub = malloc((n > 0 ? n : 1) * sizeof *sub);
  if (sub == NULL) abort();
  if (n > 0) {
    memcpy(sub, e->sub, n * sizeof *sub);
    memmove(e->sub, e->sub + n, (e->nsub - n) * sizeof *sub);
    e->nsub -= n;
  }
  int left = e->nsub > 0;
  // Pin each probe's spec while mu is held; removeSpec may run as soon as it is released.
  spec_t** pinned = n > 0 ? malloc((n / 3) * sizeof *pinned) : NULL;
  for (size_t i = 0; i + 2 < n; i += 3) {
    int id = sub[i];
    spec_t* s = id >= 0 && id < e->nspecs ? e->specs[id] : NULL;
    if (s != NULL) s->refs++;
    pinned[i / 3] = s;
  }
  pthread_mutex_unlock(&e->mu);
  for (size_t i = 0; i + 2 < n; i += 3) {
    spec_t* s = pinned[i / 3];
    if (s != NULL) probe_start(e, s, sub[i + 1], sub[i + 2]);
  }
  free(pinned);
  free(sub);
  return left;
}

static int wait_ms(int64_t at, int64_t now) {
  int64_t left = at - now;
  return left <= 0 ? 0 : (int)((left + 999999) / 1000000);
}

static void* engine_main(void* arg) {
  engine_t* e = arg;
  pthread_setname_np(pthread_self(), "lvsd-probe");
  struct epoll_event evs[MAX_EVENTS];
  int64_t last_flush = 0;
  int backlog = 0;
  for (;;) {
    int64_t now = now_ns();
    int timeout = backlog ? 0 : -1;
    if (e->head != NULL && !backlog) timeout = wait_ms(e->head->deadline, now);
    if (e->local.n > 0) {
      int t = wait_ms(last_flush + FLUSH_NS, now);
      if (timeout < 0 || t < timeout) timeout = t;
    }
    // Readiness that arrived before this instant is in what epoll_wait returns now; a deadline is
    // judged against it, not against the time after the events were handled (which, on a slow CPU,
    // can be long enough for answers to arrive unseen and be called timeouts).
    int64_t polled_at = now_ns();
    int n = epoll_wait(e->epfd, evs, MAX_EVENTS, timeout);
    if (n < 0 && errno != EINTR) break;
    int woken = 0;
    for (int i = 0; i < n; i++) {
      if (evs[i].data.ptr == NULL) {
        uint64_t v;
        if (read(e->evfd, &v, sizeof v) < 0) { /* already drained */ }
        woken = 1;
        continue;
      }
      if (evs[i].data.ptr == &e->icmp_fd[0] || evs[i].data.ptr == &e->icmp_fd[1]) {
        icmp_readable(e, evs[i].data.ptr == &e->icmp_fd[1]);
        continue;
      }
      on_event(e, evs[i].data.ptr, evs[i].events);
    }
    // New checks after the answers of this round, so their connects never delay reading those.
    if (woken || backlog) backlog = take_submissions(e);
    pthread_mutex_lock(&e->mu);
    int stop = e->stopping;
    pthread_mutex_unlock(&e->mu);
    if (stop) break;
    now = now_ns();
    if (n < MAX_EVENTS) {
      while (e->head != NULL && e->head->deadline <= polled_at) {
        probe_t* p = e->head;
        emit(e, p, RES_TIMEOUT, 0);
        probe_end(e, p);
      }
    }
    if (e->local.n > 0 && now - last_flush >= FLUSH_NS) {
      flush(e);
      last_flush = now;
    }
  }
  while (e->head != NULL) probe_end(e, e->head);
  return NULL;
}

// ——— the JavaScript side ———

static void deliver(napi_env env, napi_value js_cb, void* context, void* data) {
  engine_t* e = context;
  if (env == NULL) return;
  pthread_mutex_lock(&e->mu);
  batch_t b = e->out;
  memset(&e->out, 0, sizeof e->out);
  e->call_pending = 0;
  pthread_mutex_unlock(&e->mu);
  napi_value ab, arr, bodies, argv[2], undef;
  void* mem;
  if (napi_create_arraybuffer(env, b.n * sizeof(int32_t), &mem, &ab) == napi_ok &&
      napi_create_typedarray(env, napi_int32_array, b.n, ab, 0, &arr) == napi_ok &&
      napi_create_array_with_length(env, b.nbodies, &bodies) == napi_ok) {
    memcpy(mem, b.rec, b.n * sizeof(int32_t));
    for (size_t i = 0; i < b.nbodies; i++) {
      napi_value buf;
      void* copy;
      napi_create_buffer_copy(env, b.bodies[i].len, b.bodies[i].len > 0 ? b.bodies[i].data : "", &copy, &buf);
      napi_set_element(env, bodies, (uint32_t)i, buf);
    }
    argv[0] = arr;
    argv[1] = bodies;
    napi_get_undefined(env, &undef);
    napi_call_function(env, undef, js_cb, 2, argv, NULL);
  }
  for (size_t i = 0; i < b.nbodies; i++) free(b.bodies[i].data);
  free(b.bodies);
  free(b.rec);
}

static int get_args(napi_env env, napi_callback_info info, size_t n, napi_value* argv) {
  size_t argc = n;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < n) {
    napi_throw_type_error(env, NULL, "missing arguments");
    return 0;
  }
  return 1;
}

// The n arguments of a call whose first is the engine; NULL (with a JavaScript error thrown) if not.
static engine_t* engine_args(napi_env env, napi_callback_info info, size_t n, napi_value* argv) {
  engine_t* e = NULL;
  if (!get_args(env, info, n, argv)) return NULL;
  if (napi_get_value_external(env, argv[0], (void**)&e) != napi_ok || e == NULL) {
    napi_throw_type_error(env, NULL, "not a probe engine");
    return NULL;
  }
  return e;
}

static void wake(engine_t* e) {  // with mu held
  if (e->woken) return;
  e->woken = 1;
  uint64_t one = 1;
  if (write(e->evfd, &one, sizeof one) < 0) { /* the counter is already non-zero */ }
}

static void stop_engine(engine_t* e) {
  pthread_mutex_lock(&e->mu);
  if (e->stopping) {
    pthread_mutex_unlock(&e->mu);
    return;
  }
  e->stopping = 1;
  e->woken = 0;
  wake(e);
  pthread_mutex_unlock(&e->mu);
  pthread_join(e->thread, NULL);
  napi_release_threadsafe_function(e->tsfn, napi_tsfn_abort);
  close(e->epfd);
  close(e->evfd);
  for (int f = 0; f < 2; f++)
    if (e->icmp_fd[f] >= 0) close(e->icmp_fd[f]);
  free(e->by_seq);
  e->by_seq = NULL;
  for (int i = 0; i < e->nspecs; i++)
    if (e->specs[i] != NULL) spec_unref(e->specs[i]);
  e->nspecs = 0;
}

static void cleanup_hook(void* arg);

static void finalize_engine(napi_env env, void* data, void* hint) {
  engine_t* e = data;
  // An engine collected without close() must not leave a hook that would stop it again at exit.
  napi_remove_env_cleanup_hook(env, cleanup_hook, e);
  stop_engine(e);
  free(e->specs);
  free(e->free_ids);
  free(e->sub);
  for (size_t i = 0; i < e->out.nbodies; i++) free(e->out.bodies[i].data);
  free(e->out.bodies);
  free(e->out.rec);
  free(e->local.rec);
  free(e->local.bodies);
  pthread_mutex_destroy(&e->mu);
  free(e);
}

static void cleanup_hook(void* arg) { stop_engine(arg); }

static napi_value engine_open(napi_env env, napi_callback_info info) {
  napi_value argv[1], name, handle;
  if (!get_args(env, info, 1, argv)) return NULL;
  engine_t* e = calloc(1, sizeof *e);
  if (e == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  pthread_mutex_init(&e->mu, NULL);
  e->icmp_fd[0] = e->icmp_fd[1] = -1;
  e->epfd = epoll_create1(EPOLL_CLOEXEC);
  e->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
  if (e->epfd < 0 || e->evfd < 0 || epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->evfd, &ev) != 0) {
    napi_throw_error(env, NULL, strerror(errno));
    return NULL;
  }
  CHECK(napi_create_string_utf8(env, "lvsd-probe-engine", NAPI_AUTO_LENGTH, &name));
  CHECK(napi_create_threadsafe_function(env, argv[0], NULL, name, 0, 1, NULL, NULL, e, deliver, &e->tsfn));
  // Idle, the engine must not keep the process alive; the monitor's timer does while checks run.
  CHECK(napi_unref_threadsafe_function(env, e->tsfn));
  if (pthread_create(&e->thread, NULL, engine_main, e) != 0) {
    napi_throw_error(env, NULL, "cannot start the probe engine thread");
    return NULL;
  }
  napi_add_env_cleanup_hook(env, cleanup_hook, e);
  CHECK(napi_create_external(env, e, finalize_engine, NULL, &handle));
  return handle;
}

static napi_value engine_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  engine_t* e = engine_args(env, info, 1, argv);
  if (e == NULL) return NULL;
  napi_remove_env_cleanup_hook(env, cleanup_hook, e);
  stop_engine(e);
  return NULL;
}

static int to_sockaddr(const char* host, int port, struct sockaddr_storage* ss, socklen_t* len) {
  memset(ss, 0, sizeof *ss);
  struct sockaddr_in* a4 = (struct sockaddr_in*)ss;
  struct sockaddr_in6* a6 = (struct sockaddr_in6*)ss;
  if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    *len = sizeof *a4;
    return 1;
  }
  if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)port);
    *len = sizeof *a6;
    return 1;
  }
  return 0;
}

static int get_string(napi_env env, napi_value v, char* out, size_t cap) {
  size_t n;
  return napi_get_value_string_utf8(env, v, out, cap, &n) == napi_ok && n < cap - 1;
}

// addSpec(engine, kind, host, port, bindTo|null, request|null, ranges|null, timeoutMs, bindPort, mark) → id
static napi_value add_spec(napi_env env, napi_callback_info info) {
  napi_value argv[10], result;
  engine_t* e = engine_args(env, info, 10, argv);
  if (e == NULL) return NULL;
  int32_t kind = 0, port = 0, timeout_ms = 0, bind_port = 0;
  uint32_t mark = 0;
  napi_get_value_int32(env, argv[1], &kind);
  napi_get_value_int32(env, argv[3], &port);
  napi_get_value_int32(env, argv[7], &timeout_ms);
  napi_get_value_int32(env, argv[8], &bind_port);
  napi_get_value_uint32(env, argv[9], &mark);
  if (bind_port < 0 || bind_port > 65535) {
    napi_throw_range_error(env, NULL, "bindPort: not a port 0..65535");
    return NULL;
  }
  spec_t* s = calloc(1, sizeof *s);
  if (s == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  s->kind = kind == KIND_HTTP || kind == KIND_HTTP_BODY || kind == KIND_PING || kind == KIND_SMTP ? kind : KIND_TCP;
  s->refs = 1;
  s->timeout_ns = (int64_t)timeout_ms * 1000000LL;
  char host[64];
  napi_valuetype t;
  if (!get_string(env, argv[2], host, sizeof host) || !to_sockaddr(host, port, &s->dst, &s->dst_len)) {
    free(s);
    napi_throw_type_error(env, NULL, "host: not an IP address");
    return NULL;
  }
  napi_typeof(env, argv[4], &t);
  if (t == napi_string) {
    if (!get_string(env, argv[4], host, sizeof host) || !to_sockaddr(host, 0, &s->src, &s->src_len) || s->src.ss_family != s->dst.ss_family) {
      free(s);
      napi_throw_type_error(env, NULL, "bindTo: not an IP address of the target's family");
      return NULL;
    }
  }
  if (bind_port != 0) {
    if (s->src_len == 0) {
      // No bindto: any address of the target's family, this port.
      s->src.ss_family = s->dst.ss_family;
      s->src_len = s->dst_len;
    }
    if (s->src.ss_family == AF_INET6) ((struct sockaddr_in6*)&s->src)->sin6_port = htons((uint16_t)bind_port);
    else ((struct sockaddr_in*)&s->src)->sin_port = htons((uint16_t)bind_port);
    s->src_port = bind_port;
  }
  s->mark = mark;
  bool is_buf = false;
  napi_is_buffer(env, argv[5], &is_buf);
  if (is_buf) {
    void* data;
    size_t len;
    napi_get_buffer_info(env, argv[5], &data, &len);
    s->request = malloc(len > 0 ? len : 1);
    memcpy(s->request, data, len);
    s->request_len = len;
    const char* eol = len > 0 ? memmem(s->request, len, "\r\n", 2) : NULL;
    s->helo_len = eol == NULL ? len : (size_t)(eol - s->request) + 2;
  }
  if (s->kind == KIND_SMTP && s->request_len == 0) {
    free(s->request);
    free(s);
    napi_throw_type_error(env, NULL, "request: an SMTP check needs its HELO and QUIT lines");
    return NULL;
  }
  bool is_ta = false;
  napi_is_typedarray(env, argv[6], &is_ta);
  if (is_ta) {
    napi_typedarray_type tt;
    size_t len;
    void* data;
    napi_get_typedarray_info(env, argv[6], &tt, &len, &data, NULL, NULL);
    if (tt == napi_int32_array && len >= 2) {
      s->nranges = (int)(len / 2);
      s->ranges = malloc(s->nranges * 2 * sizeof(int32_t));
      memcpy(s->ranges, data, s->nranges * 2 * sizeof(int32_t));
    }
  }
  pthread_mutex_lock(&e->mu);
  if (s->kind == KIND_PING) {
    int err = open_icmp(e, s->dst.ss_family == AF_INET6);
    if (err != 0) {
      pthread_mutex_unlock(&e->mu);
      free(s->request);
      free(s->ranges);
      free(s);
      char msg[200];
      snprintf(msg, sizeof msg, "cannot open an ICMP socket: %s (ping checks need CAP_NET_RAW, or a net.ipv4.ping_group_range that holds lvsd's group)", strerror(err));
      napi_throw_error(env, "EICMPSOCKET", msg);
      return NULL;
    }
  }
  int id;
  if (e->nfree > 0) {
    id = e->free_ids[--e->nfree];
  } else {
    size_t cap = (size_t)e->nspecs;
    spec_t** grown = realloc(e->specs, (cap + 1) * sizeof *grown);
    if (grown == NULL) abort();
    e->specs = grown;
    id = e->nspecs++;
  }
  s->id = id;
  e->specs[id] = s;
  pthread_mutex_unlock(&e->mu);
  napi_create_int32(env, id, &result);
  return result;
}

static napi_value remove_spec(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  engine_t* e = engine_args(env, info, 2, argv);
  if (e == NULL) return NULL;
  int32_t id = -1;
  napi_get_value_int32(env, argv[1], &id);
  pthread_mutex_lock(&e->mu);
  if (id >= 0 && id < e->nspecs && e->specs[id] != NULL) {
    spec_unref(e->specs[id]);
    e->specs[id] = NULL;
    size_t capfree = (size_t)e->capfree;
    e->free_ids = grow(e->free_ids, &capfree, (size_t)e->nfree + 1, sizeof(int));
    e->capfree = (int)capfree;
    e->free_ids[e->nfree++] = id;
  }
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

// start(engine, Int32Array [spec, token, gen]…, count)
static napi_value start(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  engine_t* e = engine_args(env, info, 3, argv);
  if (e == NULL) return NULL;
  napi_typedarray_type tt;
  size_t len;
  void* data;
  int32_t count = 0;
  if (napi_get_typedarray_info(env, argv[1], &tt, &len, &data, NULL, NULL) != napi_ok || tt != napi_int32_array) {
    napi_throw_type_error(env, NULL, "expected an Int32Array");
    return NULL;
  }
  napi_get_value_int32(env, argv[2], &count);
  if (count < 0 || (size_t)count * 3 > len) {
    napi_throw_range_error(env, NULL, "count exceeds the array");
    return NULL;
  }
  pthread_mutex_lock(&e->mu);
  if (!e->stopping && count > 0) {
    e->sub = grow(e->sub, &e->capsub, e->nsub + (size_t)count * 3, sizeof(int32_t));
    memcpy(e->sub + e->nsub, data, (size_t)count * 3 * sizeof(int32_t));
    e->nsub += (size_t)count * 3;
    wake(e);
  }
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

// icmpEcho(family, id, seq) → Buffer: the echo request a ping check sends (for tests).
static napi_value js_icmp_echo(napi_env env, napi_callback_info info) {
  napi_value argv[3], out;
  if (!get_args(env, info, 3, argv)) return NULL;
  int32_t family = 4, id = 0, seq = 0;
  napi_get_value_int32(env, argv[0], &family);
  napi_get_value_int32(env, argv[1], &id);
  napi_get_value_int32(env, argv[2], &seq);
  uint8_t pkt[ICMP_ECHO_LEN];
  icmp_echo(pkt, family, (uint16_t)id, (uint16_t)seq);
  void* copy;
  CHECK(napi_create_buffer_copy(env, sizeof pkt, pkt, &copy, &out));
  return out;
}

// A JavaScript array of n int32s (the test helpers' answers).
static napi_value int32_array(napi_env env, const int32_t* v, uint32_t n) {
  napi_value out;
  if (napi_create_array_with_length(env, n, &out) != napi_ok) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    napi_value x;
    napi_create_int32(env, v[i], &x);
    napi_set_element(env, out, i, x);
  }
  return out;
}

// icmpRead(buf, family, ipHeader) → [kind, id, seq, errno, offset of the quoted destination or -1]
static napi_value js_icmp_read(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!get_args(env, info, 3, argv)) return NULL;
  void* data;
  size_t len;
  int32_t family = 4;
  bool ip_header = false;
  if (napi_get_buffer_info(env, argv[0], &data, &len) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a Buffer");
    return NULL;
  }
  napi_get_value_int32(env, argv[1], &family);
  napi_get_value_bool(env, argv[2], &ip_header);
  icmp_read_t r = icmp_read(data, len, family, ip_header);
  int32_t v[5] = {r.kind, r.id, r.seq, r.err, r.quoted_dst == NULL ? -1 : (int32_t)(r.quoted_dst - (const uint8_t*)data)};
  return int32_array(env, v, 5);
}

// smtpScan(buf) → [SMTP_MORE 0 | SMTP_REPLY 1 | SMTP_GARBAGE -1, code, consumed] (for tests).
static napi_value js_smtp_scan(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  void* data;
  size_t len;
  if (napi_get_buffer_info(env, argv[0], &data, &len) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a Buffer");
    return NULL;
  }
  int code = 0;
  size_t used = 0;
  int r = smtp_scan_reply(data, len, &code, &used);
  int32_t v[3] = {r, r == SMTP_REPLY ? code : 0, r == SMTP_REPLY ? (int32_t)used : 0};
  return int32_array(env, v, 3);
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"open", NULL, engine_open, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, engine_close, NULL, NULL, NULL, napi_default, NULL},
      {"addSpec", NULL, add_spec, NULL, NULL, NULL, napi_default, NULL},
      {"removeSpec", NULL, remove_spec, NULL, NULL, NULL, napi_default, NULL},
      {"start", NULL, start, NULL, NULL, NULL, napi_default, NULL},
      {"icmpEcho", NULL, js_icmp_echo, NULL, NULL, NULL, napi_default, NULL},
      {"icmpRead", NULL, js_icmp_read, NULL, NULL, NULL, napi_default, NULL},
      {"smtpScan", NULL, js_smtp_scan, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
