// lvsd's native relay for the userspace dataplane: one epoll thread connects to the real server that
// JavaScript chose and copies the bytes both ways, so a relayed connection costs JavaScript one accept
// and one batched report. JavaScript keeps every decision: which real server, the next one after a
// refusal, the PROXY header, when to give up.
//
//   open(onEvents)                                   → relay
//   adopt(relay, fd, token, host, port, head|null, connectTimeoutMs, idleTimeoutMs) → slot (≥ 0) or -errno
//       takes a duplicate of fd (the accepted client; JavaScript closes its own handle) and connects to
//       host:port; head (a PROXY header) is sent to the real server before any client byte
//   retry(relay, slot, token, host, port, head|null)  after a REFUSED event: the next real server
//   drop(relay, slot, token)                          closes the connection (no real server left, shutdown)
//   count(relay)                                      → connections held
//   close(relay)
//
// Events reach onEvents(Float64Array) in batches, five numbers each [token, kind, a, b, c]; a
// connection that goes well costs one (its end), since every crossing wakes the event loop:
//   EV_REFUSED    the connect failed (a = errno; ETIMEDOUT after connectTimeoutMs): the client waits,
//                 untouched, for retry() or drop()
//   EV_CLOSED     the connection is over; a = bytes from the client, b = bytes from the real server,
//                 c = why (CLOSE_DONE both sides ended, CLOSE_RESET a reset or error, CLOSE_IDLE, CLOSE_DROP)
//
// The copy: level-triggered epoll; a read of up to 64 KiB into one shared buffer is written straight to
// the other side, and only what the other side did not take is kept (per direction; that side then stops
// being read until it drains: backpressure). An EOF becomes a shutdown(SHUT_WR) of the other side once
// its pending bytes are out (half-close); both EOFs close both. A reset or an error on one side resets
// the other (SO_LINGER 0), so a client learns that its server went away as it would without a proxy.
// Why not splice(2): HTTP-sized messages cost two splices and a pipe (two more descriptors) per
// direction against one read and one write, and an idle connection would hold two pipes.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

enum { EV_REFUSED = 1, EV_CLOSED = 2 };
enum { CLOSE_DONE = 0, CLOSE_RESET = 1, CLOSE_IDLE = 2, CLOSE_DROP = 3 };
enum { ST_CONNECTING = 0, ST_RELAY = 1, ST_WAITING = 2, ST_CLOSED = 3 };
enum { CMD_ADOPT = 0, CMD_RETRY = 1, CMD_DROP = 2 };

#define READ_SIZE (64 * 1024)
#define MAX_EVENTS 256
#define REC 5
// Connect deadlines are checked this often (a walk over the connections still connecting), idle
// ones every IDLE_SWEEPS of those (a walk over all the others): 10,000 idle connections cost the
// thread ~0.6 ms of CPU a second walked every 100 ms.
#define SWEEP_MS 100
#define IDLE_SWEEPS 10

struct conn;

typedef struct {
  int fd;
  uint32_t mask;  // the events epoll watches for now
  int up;         // 0 the client, 1 the real server
  int hup;        // epoll said hang-up: with nothing to watch for, the side leaves the epoll set
  int out_of_set;
  struct conn* c;
} end_t;

// Bytes read from one side that the other has not taken yet.
typedef struct {
  char* buf;
  uint32_t len, off;
  int eof;   // the source sent FIN
  int shut;  // the FIN was passed on
} dir_t;

typedef struct conn {
  end_t cl, up;
  dir_t c2u, u2c;
  double token;
  int32_t slot;
  int state;
  int32_t connect_ms, idle_ms;
  int64_t started, last_active;
  double bytes_c, bytes_u;
  struct conn *prev, *next;  // in r->connecting or r->relaying (or neither while JavaScript decides)
  struct conn** list;
  struct conn* free_next;    // closed in this round, freed after it
} conn_t;

typedef struct {
  int op;
  int32_t slot;
  double token;
  struct sockaddr_storage addr;
  socklen_t addrlen;
  char* head;
  uint32_t headlen;
} cmd_t;

typedef struct {
  pthread_t thread;
  pthread_mutex_t mu;
  int epfd, evfd;
  int stopping;
  int started;
  napi_threadsafe_function tsfn;
  // Guarded by mu.
  conn_t** slots;
  int32_t nslots;
  int32_t* free_slots;
  int32_t nfree;
  cmd_t* cmds;
  size_t ncmds, capcmds;
  int woken;
  double* out;
  size_t nout, capout;
  int call_pending;
  int32_t count;
  // The relay thread only.
  conn_t* connecting;
  conn_t* relaying;
  conn_t* to_free;
  double* local;
  size_t nlocal, caplocal;
  int64_t now;
  char rbuf[READ_SIZE];
} relay_t;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

// ——— events to JavaScript ———

static void emit(relay_t* r, double token, int kind, double a, double b, double c) {
  r->local = grow(r->local, &r->caplocal, r->nlocal + REC, sizeof(double));
  double* x = r->local + r->nlocal;
  x[0] = token;
  x[1] = kind;
  x[2] = a;
  x[3] = b;
  x[4] = c;
  r->nlocal += REC;
}

static void flush_events(relay_t* r) {
  if (r->nlocal == 0) return;
  pthread_mutex_lock(&r->mu);
  r->out = grow(r->out, &r->capout, r->nout + r->nlocal, sizeof(double));
  memcpy(r->out + r->nout, r->local, r->nlocal * sizeof(double));
  r->nout += r->nlocal;
  r->nlocal = 0;
  int call = !r->call_pending;
  r->call_pending = 1;
  pthread_mutex_unlock(&r->mu);
  if (call) napi_call_threadsafe_function(r->tsfn, NULL, napi_tsfn_nonblocking);
}

// ——— connections ———

static void unlink_conn(relay_t* r, conn_t* c) {
  (void)r;
  if (c->list == NULL) return;
  if (c->prev != NULL) c->prev->next = c->next;
  else *c->list = c->next;
  if (c->next != NULL) c->next->prev = c->prev;
  c->prev = c->next = NULL;
  c->list = NULL;
}

static void link_conn(relay_t* r, conn_t* c, conn_t** list) {
  unlink_conn(r, c);
  c->next = *list;
  if (*list != NULL) (*list)->prev = c;
  *list = c;
  c->list = list;
}

// A hang-up is reported whatever the mask, level-triggered: a side that has one and nothing to be
// watched for leaves the set, or the thread would spin on it.
static void watch(relay_t* r, end_t* e, uint32_t mask) {
  if (e->fd < 0) return;
  if (mask == 0 && e->hup) {
    if (!e->out_of_set) epoll_ctl(r->epfd, EPOLL_CTL_DEL, e->fd, NULL);
    e->out_of_set = 1;
    e->mask = 0;
    return;
  }
  if (e->mask == mask && !e->out_of_set) return;
  struct epoll_event ev = {.events = mask, .data.ptr = e};
  epoll_ctl(r->epfd, e->out_of_set ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, e->fd, &ev);
  e->out_of_set = 0;
  e->mask = mask;
}

// What each side must be watched for, from the state of both directions.
static void rewatch(relay_t* r, conn_t* c) {
  if (c->state != ST_RELAY) return;
  watch(r, &c->cl, (!c->c2u.eof && c->c2u.len == 0 ? EPOLLIN : 0) | (c->u2c.len > 0 ? EPOLLOUT : 0));
  watch(r, &c->up, (!c->u2c.eof && c->u2c.len == 0 ? EPOLLIN : 0) | (c->c2u.len > 0 ? EPOLLOUT : 0));
}

static void close_fd(relay_t* r, end_t* e, int reset) {
  if (e->fd < 0) return;
  if (reset) {
    struct linger l = {1, 0};
    setsockopt(e->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  }
  // close() alone leaves the epoll set only when no other descriptor shares the socket.
  if (!e->out_of_set) epoll_ctl(r->epfd, EPOLL_CTL_DEL, e->fd, NULL);
  close(e->fd);
  e->fd = -1;
  e->mask = 0;
  e->hup = 0;
  e->out_of_set = 0;
}

static void conn_close(relay_t* r, conn_t* c, int why) {
  if (c->state == ST_CLOSED) return;
  int reset = why == CLOSE_RESET;
  close_fd(r, &c->cl, reset);
  close_fd(r, &c->up, reset);
  c->state = ST_CLOSED;
  free(c->c2u.buf);
  free(c->u2c.buf);
  c->c2u.buf = c->u2c.buf = NULL;
  unlink_conn(r, c);
  emit(r, c->token, EV_CLOSED, c->bytes_c, c->bytes_u, why);
  pthread_mutex_lock(&r->mu);
  r->slots[c->slot] = NULL;
  r->free_slots[r->nfree++] = c->slot;
  r->count--;
  pthread_mutex_unlock(&r->mu);
  // Other events of this round may still point at it.
  c->free_next = r->to_free;
  r->to_free = c;
}

static void refused(relay_t* r, conn_t* c, int err) {
  close_fd(r, &c->up, 0);
  unlink_conn(r, c);
  c->state = ST_WAITING;
  free(c->c2u.buf);  // the PROXY header meant for that server
  c->c2u.buf = NULL;
  c->c2u.len = c->c2u.off = 0;
  emit(r, c->token, EV_REFUSED, err, 0, 0);
}

static void start_connect(relay_t* r, conn_t* c, const struct sockaddr_storage* addr, socklen_t len, char* head, uint32_t headlen) {
  c->c2u.buf = head;
  c->c2u.len = headlen;
  c->c2u.off = 0;
  c->state = ST_CONNECTING;
  c->started = r->now;
  link_conn(r, c, &r->connecting);
  int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    refused(r, c, errno);
    return;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c->up.fd = fd;
  c->up.mask = EPOLLOUT;
  struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = &c->up};
  epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev);
  if (connect(fd, (const struct sockaddr*)addr, len) != 0 && errno != EINPROGRESS) refused(r, c, errno);
  // Connected or not, the EPOLLOUT that follows settles it.
}

static void connected(relay_t* r, conn_t* c) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(c->up.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) {
    refused(r, c, err);
    return;
  }
  c->state = ST_RELAY;
  c->last_active = r->now;
  link_conn(r, c, &r->relaying);
  c->up.mask = EPOLLOUT;  // as registered for the connect
  rewatch(r, c);
}

// Writes what is pending from d to end dst; 0 on success (all or part), -1 on an error.
static int flush_dir(dir_t* d, end_t* dst) {
  while (d->len > 0) {
    ssize_t w = write(dst->fd, d->buf + d->off, d->len);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN ? 0 : -1;
    }
    d->off += (uint32_t)w;
    d->len -= (uint32_t)w;
  }
  free(d->buf);
  d->buf = NULL;
  d->off = 0;
  return 0;
}

static int pass_fin(dir_t* d, end_t* dst) {
  if (!d->eof || d->shut || d->len > 0) return 0;
  d->shut = 1;
  return shutdown(dst->fd, SHUT_WR) != 0 && errno != ENOTCONN ? -1 : 0;
}

// Reads from src into the other side. Returns -1 when the connection must be reset.
static int pump(relay_t* r, conn_t* c, end_t* src) {
  dir_t* d = src->up ? &c->u2c : &c->c2u;
  end_t* dst = src->up ? &c->cl : &c->up;
  if (d->eof || d->len > 0) return 0;
  ssize_t n = read(src->fd, r->rbuf, READ_SIZE);
  if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
  if (n == 0) {
    d->eof = 1;
    return pass_fin(d, dst);
  }
  c->last_active = r->now;
  if (src->up) c->bytes_u += (double)n;
  else c->bytes_c += (double)n;
  ssize_t w = write(dst->fd, r->rbuf, (size_t)n);
  if (w < 0) {
    if (errno != EAGAIN) return -1;
    w = 0;
  }
  if (w < n) {
    d->len = (uint32_t)(n - w);
    d->off = 0;
    d->buf = malloc(d->len);
    if (d->buf == NULL) return -1;
    memcpy(d->buf, r->rbuf + w, d->len);
  }
  return 0;
}

static void on_event(relay_t* r, end_t* e, uint32_t events) {
  conn_t* c = e->c;
  if (c->state == ST_CLOSED || e->fd < 0) return;
  if (c->state == ST_CONNECTING) {
    if (e->up) connected(r, c);
    else if (events & (EPOLLERR | EPOLLHUP)) conn_close(r, c, CLOSE_RESET);  // the client left meanwhile
    return;
  }
  if (c->state == ST_WAITING) {
    if (events & (EPOLLERR | EPOLLHUP)) conn_close(r, c, CLOSE_RESET);
    return;
  }
  if (events & EPOLLHUP) e->hup = 1;
  dir_t* out = e->up ? &c->c2u : &c->u2c;  // what waits to be written to e
  if (events & EPOLLOUT) {
    if (flush_dir(out, e) != 0 || pass_fin(out, e) != 0) {
      conn_close(r, c, CLOSE_RESET);
      return;
    }
    if (out->len == 0) c->last_active = r->now;
  }
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
    if (pump(r, c, e) != 0) {
      conn_close(r, c, CLOSE_RESET);
      return;
    }
  }
  if (c->c2u.shut && c->u2c.shut) {
    conn_close(r, c, CLOSE_DONE);
    return;
  }
  // A side that reports an error or a hang-up with nothing left to read is gone.
  if ((events & EPOLLERR) || ((events & EPOLLHUP) && (e->up ? c->u2c.eof : c->c2u.eof))) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(e->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0 || (events & EPOLLERR)) {
      conn_close(r, c, CLOSE_RESET);
      return;
    }
  }
  rewatch(r, c);
}

static void sweep(relay_t* r, int idle) {
  for (conn_t *c = r->connecting, *next; c != NULL; c = next) {
    next = c->next;
    if (r->now - c->started >= c->connect_ms) refused(r, c, ETIMEDOUT);
  }
  if (!idle) return;
  for (conn_t *c = r->relaying, *next; c != NULL; c = next) {
    next = c->next;
    if (c->idle_ms > 0 && r->now - c->last_active >= c->idle_ms) conn_close(r, c, CLOSE_IDLE);
  }
}

static void run_commands(relay_t* r) {
  uint64_t v;
  while (read(r->evfd, &v, sizeof v) > 0) {
  }
  pthread_mutex_lock(&r->mu);
  cmd_t* cmds = r->cmds;
  size_t n = r->ncmds;
  r->cmds = NULL;
  r->ncmds = r->capcmds = 0;
  r->woken = 0;
  pthread_mutex_unlock(&r->mu);
  for (size_t i = 0; i < n; i++) {
    cmd_t* k = &cmds[i];
    pthread_mutex_lock(&r->mu);
    conn_t* c = k->slot >= 0 && k->slot < r->nslots ? r->slots[k->slot] : NULL;
    pthread_mutex_unlock(&r->mu);
    if (c == NULL || c->token != k->token || c->state == ST_CLOSED) {
      free(k->head);
      continue;
    }
    if (k->op == CMD_ADOPT) {
      // Not read before a real server is connected; errors and hang-ups are reported regardless.
      struct epoll_event ev = {.events = 0, .data.ptr = &c->cl};
      epoll_ctl(r->epfd, EPOLL_CTL_ADD, c->cl.fd, &ev);
      start_connect(r, c, &k->addr, k->addrlen, k->head, k->headlen);
    } else if (k->op == CMD_RETRY && c->state == ST_WAITING) {
      start_connect(r, c, &k->addr, k->addrlen, k->head, k->headlen);
    } else if (k->op == CMD_DROP) {
      free(k->head);
      conn_close(r, c, CLOSE_DROP);
    } else {
      free(k->head);
    }
  }
  free(cmds);
}

static void* relay_main(void* arg) {
  relay_t* r = arg;
  struct epoll_event evs[MAX_EVENTS];
  r->now = now_ms();
  int64_t next_sweep = r->now + SWEEP_MS;
  int sweeps = 0;
  for (;;) {
    int timeout = (int)(next_sweep - r->now);
    int n = epoll_wait(r->epfd, evs, MAX_EVENTS, timeout < 0 ? 0 : timeout);
    r->now = now_ms();
    for (int i = 0; i < n; i++) {
      if (evs[i].data.ptr == NULL) run_commands(r);
      else on_event(r, evs[i].data.ptr, evs[i].events);
    }
    if (r->now >= next_sweep) {
      sweep(r, ++sweeps % IDLE_SWEEPS == 0);
      next_sweep = r->now + SWEEP_MS;
    }
    while (r->to_free != NULL) {
      conn_t* c = r->to_free;
      r->to_free = c->free_next;
      free(c);
    }
    flush_events(r);
    pthread_mutex_lock(&r->mu);
    int stop = r->stopping;
    pthread_mutex_unlock(&r->mu);
    if (stop) break;
  }
  return NULL;
}

// ——— JavaScript side ———

static void deliver(napi_env env, napi_value js_cb, void* context, void* data) {
  relay_t* r = context;
  if (env == NULL) return;
  pthread_mutex_lock(&r->mu);
  double* out = r->out;
  size_t n = r->nout;
  r->out = NULL;
  r->nout = r->capout = 0;
  r->call_pending = 0;
  pthread_mutex_unlock(&r->mu);
  napi_value ab, arr, undef;
  void* mem;
  if (napi_create_arraybuffer(env, n * sizeof(double), &mem, &ab) == napi_ok &&
      napi_create_typedarray(env, napi_float64_array, n, ab, 0, &arr) == napi_ok) {
    if (n > 0) memcpy(mem, out, n * sizeof(double));
    napi_get_undefined(env, &undef);
    napi_call_function(env, undef, js_cb, 1, &arr, NULL);
  }
  free(out);
}

static void stop_relay(relay_t* r) {
  if (!r->started) return;
  r->started = 0;
  pthread_mutex_lock(&r->mu);
  r->stopping = 1;
  pthread_mutex_unlock(&r->mu);
  uint64_t one = 1;
  if (write(r->evfd, &one, sizeof one) < 0) {
  }
  pthread_join(r->thread, NULL);
  while (r->connecting != NULL) conn_close(r, r->connecting, CLOSE_DROP);
  while (r->relaying != NULL) conn_close(r, r->relaying, CLOSE_DROP);
  while (r->to_free != NULL) {
    conn_t* c = r->to_free;
    r->to_free = c->free_next;
    free(c);
  }
  for (size_t i = 0; i < r->ncmds; i++) free(r->cmds[i].head);
  // Adopted but never started: their client descriptors are still open.
  for (int32_t i = 0; i < r->nslots; i++) {
    conn_t* c = r->slots[i];
    if (c != NULL && c->state != ST_CLOSED) {
      if (c->cl.fd >= 0) close(c->cl.fd);
      free(c);
    }
  }
  napi_release_threadsafe_function(r->tsfn, napi_tsfn_abort);
  close(r->epfd);
  close(r->evfd);
}

static void cleanup_hook(void* arg) { stop_relay(arg); }

static int get_args(napi_env env, napi_callback_info info, size_t n, napi_value* argv) {
  size_t argc = n;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < n) {
    napi_throw_type_error(env, NULL, "missing arguments");
    return 0;
  }
  return 1;
}

static relay_t* relay_args(napi_env env, napi_callback_info info, size_t n, napi_value* argv) {
  relay_t* r = NULL;
  if (!get_args(env, info, n, argv)) return NULL;
  if (napi_get_value_external(env, argv[0], (void**)&r) != napi_ok || r == NULL || !r->started) {
    napi_throw_type_error(env, NULL, "not an open relay");
    return NULL;
  }
  return r;
}

static napi_value int_value(napi_env env, int32_t v) {
  napi_value x;
  napi_create_int32(env, v, &x);
  return x;
}

static napi_value relay_open(napi_env env, napi_callback_info info) {
  napi_value argv[1], name, handle;
  if (!get_args(env, info, 1, argv)) return NULL;
  relay_t* r = calloc(1, sizeof *r);
  if (r == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  pthread_mutex_init(&r->mu, NULL);
  r->epfd = epoll_create1(EPOLL_CLOEXEC);
  r->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
  if (r->epfd < 0 || r->evfd < 0 || epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->evfd, &ev) != 0) {
    napi_throw_error(env, NULL, strerror(errno));
    return NULL;
  }
  napi_create_string_utf8(env, "lvsd-relay", NAPI_AUTO_LENGTH, &name);
  if (napi_create_threadsafe_function(env, argv[0], NULL, name, 0, 1, NULL, NULL, r, deliver, &r->tsfn) != napi_ok) {
    napi_throw_error(env, NULL, "cannot create the relay's callback");
    return NULL;
  }
  // The listening sockets keep the process alive, not the relay.
  napi_unref_threadsafe_function(env, r->tsfn);
  r->started = 1;
  if (pthread_create(&r->thread, NULL, relay_main, r) != 0) {
    r->started = 0;
    napi_throw_error(env, NULL, "cannot start the relay thread");
    return NULL;
  }
  napi_add_env_cleanup_hook(env, cleanup_hook, r);
  napi_create_external(env, r, NULL, NULL, &handle);
  return handle;
}

static napi_value relay_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  relay_t* r = relay_args(env, info, 1, argv);
  if (r == NULL) return NULL;
  napi_remove_env_cleanup_hook(env, cleanup_hook, r);
  stop_relay(r);
  return NULL;
}

static int to_sockaddr(napi_env env, napi_value host, int32_t port, struct sockaddr_storage* ss, socklen_t* len) {
  char s[64];
  size_t n;
  if (napi_get_value_string_utf8(env, host, s, sizeof s, &n) != napi_ok || n >= sizeof s - 1) return 0;
  memset(ss, 0, sizeof *ss);
  struct sockaddr_in* a4 = (struct sockaddr_in*)ss;
  struct sockaddr_in6* a6 = (struct sockaddr_in6*)ss;
  if (inet_pton(AF_INET, s, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    *len = sizeof *a4;
    return 1;
  }
  if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)port);
    *len = sizeof *a6;
    return 1;
  }
  return 0;
}

// A copy of the Buffer (or NULL for null/undefined).
static int get_head(napi_env env, napi_value v, char** out, uint32_t* len) {
  *out = NULL;
  *len = 0;
  bool is_buf = false;
  napi_is_buffer(env, v, &is_buf);
  if (!is_buf) return 1;
  void* data;
  size_t n;
  if (napi_get_buffer_info(env, v, &data, &n) != napi_ok) return 0;
  if (n == 0) return 1;
  *out = malloc(n);
  if (*out == NULL) return 0;
  memcpy(*out, data, n);
  *len = (uint32_t)n;
  return 1;
}

static void push(relay_t* r, cmd_t* k) {
  pthread_mutex_lock(&r->mu);
  r->cmds = grow(r->cmds, &r->capcmds, r->ncmds + 1, sizeof *r->cmds);
  r->cmds[r->ncmds++] = *k;
  int wake = !r->woken;
  r->woken = 1;
  pthread_mutex_unlock(&r->mu);
  uint64_t one = 1;
  if (wake && write(r->evfd, &one, sizeof one) < 0) {
  }
}

static napi_value relay_adopt(napi_env env, napi_callback_info info) {
  napi_value argv[8];
  relay_t* r = relay_args(env, info, 8, argv);
  if (r == NULL) return NULL;
  int32_t fd = -1, port = 0, connect_ms = 3000, idle_ms = 0;
  double token = 0;
  napi_get_value_int32(env, argv[1], &fd);
  napi_get_value_double(env, argv[2], &token);
  napi_get_value_int32(env, argv[4], &port);
  napi_get_value_int32(env, argv[6], &connect_ms);
  napi_get_value_int32(env, argv[7], &idle_ms);
  cmd_t k = {.op = CMD_ADOPT, .token = token};
  if (!to_sockaddr(env, argv[3], port, &k.addr, &k.addrlen)) {
    napi_throw_type_error(env, NULL, "not an IP address");
    return NULL;
  }
  if (!get_head(env, argv[5], &k.head, &k.headlen)) return int_value(env, -ENOMEM);
  int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  conn_t* c = dup_fd < 0 ? NULL : calloc(1, sizeof *c);
  if (c == NULL) {
    int err = dup_fd < 0 ? errno : ENOMEM;
    if (dup_fd >= 0) close(dup_fd);
    free(k.head);
    return int_value(env, -err);
  }
  int one = 1;
  setsockopt(dup_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c->cl.fd = dup_fd;
  c->cl.c = c;
  c->up.fd = -1;
  c->up.up = 1;
  c->up.c = c;
  c->token = token;
  c->connect_ms = connect_ms;
  c->idle_ms = idle_ms;
  c->state = ST_WAITING;
  pthread_mutex_lock(&r->mu);
  if (r->nfree == 0) {
    int32_t n = r->nslots == 0 ? 256 : r->nslots * 2;
    conn_t** s = realloc(r->slots, (size_t)n * sizeof *s);
    int32_t* f = realloc(r->free_slots, (size_t)n * sizeof *f);
    if (s == NULL || f == NULL) abort();
    r->slots = s;
    r->free_slots = f;
    for (int32_t i = n - 1; i >= r->nslots; i--) {
      s[i] = NULL;
      f[r->nfree++] = i;
    }
    r->nslots = n;
  }
  c->slot = r->free_slots[--r->nfree];
  r->slots[c->slot] = c;
  r->count++;
  pthread_mutex_unlock(&r->mu);
  k.slot = c->slot;
  push(r, &k);
  return int_value(env, c->slot);
}

static napi_value relay_retry(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  relay_t* r = relay_args(env, info, 6, argv);
  if (r == NULL) return NULL;
  int32_t port = 0;
  cmd_t k = {.op = CMD_RETRY};
  napi_get_value_int32(env, argv[1], &k.slot);
  napi_get_value_double(env, argv[2], &k.token);
  napi_get_value_int32(env, argv[4], &port);
  if (!to_sockaddr(env, argv[3], port, &k.addr, &k.addrlen)) {
    napi_throw_type_error(env, NULL, "not an IP address");
    return NULL;
  }
  if (!get_head(env, argv[5], &k.head, &k.headlen)) k.head = NULL;
  push(r, &k);
  return NULL;
}

static napi_value relay_drop(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  relay_t* r = relay_args(env, info, 3, argv);
  if (r == NULL) return NULL;
  cmd_t k = {.op = CMD_DROP};
  napi_get_value_int32(env, argv[1], &k.slot);
  napi_get_value_double(env, argv[2], &k.token);
  push(r, &k);
  return NULL;
}

static napi_value relay_count(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  relay_t* r = relay_args(env, info, 1, argv);
  if (r == NULL) return NULL;
  pthread_mutex_lock(&r->mu);
  int32_t n = r->count;
  pthread_mutex_unlock(&r->mu);
  return int_value(env, n);
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"open", NULL, relay_open, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, relay_close, NULL, NULL, NULL, napi_default, NULL},
      {"adopt", NULL, relay_adopt, NULL, NULL, NULL, napi_default, NULL},
      {"retry", NULL, relay_retry, NULL, NULL, NULL, napi_default, NULL},
      {"drop", NULL, relay_drop, NULL, NULL, NULL, napi_default, NULL},
      {"count", NULL, relay_count, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
