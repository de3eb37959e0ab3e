// lvsd's native relay for the userspace dataplane: one epoll thread per process accepts on the
// services' listening sockets, picks the real server (accept.c: the schedulers of schedulers.ts, run
// here on tables JavaScript refreshes when weights or the pool change), connects, writes the PROXY
// header and copies the bytes both ways. A connection costs JavaScript nothing; it hears in batches of
// refusals (to log them) and connections that found no real server, and reads per-real-server counters
// when it observes.
//
//   open(onEvents) → relay        close(relay)        count(relay) → connections held
//   and the services' calls (accept.c).
//
// Events reach onEvents(Float64Array) in batches, four numbers each [kind, service, a, b]:
//   EV_REFUSED    a real server did not take a connection (a = its nid, b = errno; ETIMEDOUT after the
//                 connect timeout); the thread has already tried the next one
//   EV_NOREAL     a new connection found no real server (a = how many refused it): it was closed
//
// The copy: level-triggered epoll; a read of up to 64 KiB into one shared buffer is written straight to
// the other side, and only what the other side did not take is kept (per direction; that side then stops
// being read until it drains: backpressure). An EOF becomes a shutdown(SHUT_WR) of the other side once
// its pending bytes are out (half-close); both EOFs close both. A reset or an error on one side resets
// the other (SO_LINGER 0), so a client learns that its server went away as it would without a proxy.
// recv/send, not read/write: the same socket calls without the VFS layer on the way (fdget_pos,
// vfs_read/vfs_write, the iov_iter set-up), ~2 % of the relay thread's CPU on a keepalive request in a
// profile and 1–3 % of the four calls on loopback; MSG_NOSIGNAL keeps a peer's reset from raising SIGPIPE.
// Why not splice(2): HTTP-sized messages cost two splices and a pipe (two more descriptors) per
// direction against one read and one write, and an idle connection would hold two pipes.
#include "relay.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#define MAX_EVENTS 256
// Connect deadlines are checked this often (a walk over the connections still connecting), idle
// ones every IDLE_SWEEPS of those (a walk over all the others): 10,000 idle connections cost the
// thread ~0.6 ms of CPU a second walked every 100 ms.
#define SWEEP_MS 100
#define IDLE_SWEEPS 10

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void* grow(void* p, size_t* cap, size_t need, size_t elem) {
  if (need <= *cap) return p;
  size_t c = *cap == 0 ? 64 : *cap;
  while (c < need) c *= 2;
  void* q = realloc(p, c * elem);
  if (q == NULL) abort();
  *cap = c;
  return q;
}

// ——— events to JavaScript ———

void emit(relay_t* r, int kind, double svc, double a, double b) {
  r->local = grow(r->local, &r->caplocal, r->nlocal + REC, sizeof(double));
  double* x = r->local + r->nlocal;
  x[0] = kind;
  x[1] = svc;
  x[2] = a;
  x[3] = b;
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

static void unlink_conn(conn_t* c) {
  if (c->list == NULL) return;
  if (c->prev != NULL) c->prev->next = c->next;
  else *c->list = c->next;
  if (c->next != NULL) c->next->prev = c->prev;
  c->prev = c->next = NULL;
  c->list = NULL;
}

static void link_conn(conn_t* c, conn_t** list) {
  unlink_conn(c);
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
// EPOLLRDHUP with EPOLLIN: an event that says the peer's FIN is in lets the thread read on to the EOF in
// the same round instead of the next one (see on_event).
static void rewatch(relay_t* r, conn_t* c) {
  if (c->state != ST_RELAY) return;
  watch(r, &c->cl, (!c->c2u.eof && c->c2u.len == 0 ? EPOLLIN | EPOLLRDHUP : 0) | (c->u2c.len > 0 ? EPOLLOUT : 0));
  watch(r, &c->up, (!c->u2c.eof && c->u2c.len == 0 ? EPOLLIN | EPOLLRDHUP : 0) | (c->c2u.len > 0 ? EPOLLOUT : 0));
}

static void close_fd(relay_t* r, end_t* e, int reset) {
  if (e->fd < 0) return;
  if (reset) {
    struct linger l = {1, 0};
    setsockopt(e->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  }
  // No EPOLL_CTL_DEL first: a connection's descriptors are never duplicated, so close(2) takes them out
  // of the epoll set itself (two syscalls per connection saved).
  close(e->fd);
  e->fd = -1;
  e->mask = 0;
  e->hup = 0;
  e->out_of_set = 0;
}

// The connection no longer counts on its real server (refused, or over).
static void leave_server(conn_t* c, int refused) {
  server_t* s = c->srv;
  if (s == NULL) return;
  c->srv = NULL;
  s->active--;
  if (refused) {
    s->conns--;
    s->refused++;
  }
  server_release(s);
}

void conn_close(relay_t* r, conn_t* c, int why) {
  if (c->state == ST_CLOSED) return;
  int reset = why == CLOSE_RESET;
  close_fd(r, &c->cl, reset);
  close_fd(r, &c->up, reset);
  c->state = ST_CLOSED;
  free(c->c2u.buf);
  free(c->u2c.buf);
  free(c->tried);
  c->c2u.buf = c->u2c.buf = NULL;
  c->tried = NULL;
  unlink_conn(c);
  leave_server(c, 0);
  service_release(r, c->svc);
  c->svc = NULL;
  __atomic_sub_fetch(&r->count, 1, __ATOMIC_RELAXED);
  // Other events of this round may still point at it.
  c->free_next = r->to_free;
  r->to_free = c;
}

// The real server did not take the connection: the next one the scheduler gives, never one tried.
static void refused(relay_t* r, conn_t* c, int err) {
  close_fd(r, &c->up, 0);
  unlink_conn(c);
  free(c->c2u.buf);  // the PROXY header meant for that server
  c->c2u.buf = NULL;
  c->c2u.len = c->c2u.off = 0;
  server_t* s = c->srv;
  if (s != NULL) {
    emit(r, EV_REFUSED, c->svc->id, s->nid, err);
    c->tried = realloc(c->tried, (size_t)(c->ntried + 1) * sizeof *c->tried);
    if (c->tried == NULL) abort();
    c->tried[c->ntried++] = s->nid;
    leave_server(c, 1);
  }
  if (c->svc->closed) {
    conn_close(r, c, CLOSE_DROP);
    return;
  }
  start_connect(r, c);
}

static void connected(relay_t* r, conn_t* c, uint32_t events);

// Picks the real server for c and connects to it; with none left the client is closed.
void start_connect(relay_t* r, conn_t* c) {
  server_t* s = pick(c->svc, c);
  if (s == NULL) {
    emit(r, EV_NOREAL, c->svc->id, c->ntried, 0);
    conn_close(r, c, CLOSE_DROP);
    return;
  }
  // Counted as made now, taken back if refused.
  c->srv = s;
  s->refs++;
  s->active++;
  s->conns++;
  c->state = ST_CONNECTING;
  c->started = r->now;
  link_conn(c, &r->connecting);
  if (c->headlen > 0) {
    c->c2u.buf = malloc(c->headlen);
    if (c->c2u.buf == NULL) abort();
    memcpy(c->c2u.buf, c->head, c->headlen);
    c->c2u.len = c->headlen;
    c->c2u.off = 0;
  }
  int fd = socket(s->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    refused(r, c, errno);
    return;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c->up.fd = fd;
  c->up.mask = EPOLLOUT;
  c->up.out_of_set = 0;
  struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = &c->up};
  epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev);
  if (connect(fd, (const struct sockaddr*)&s->addr, s->addrlen) != 0 && errno != EINPROGRESS) {
    refused(r, c, errno);
    return;
  }
  // A real server on this host, or a veth away in another namespace, has usually answered by the time
  // connect() returns: its SYN is handled in the softirq of its own transmit, and the socket's backlog (the
  // SYN-ACK) before connect() releases the socket. A zero-length send tells which without side effects
  // (EAGAIN while the SYN is out, 0 once connected, the connect's error when refused), so such a connection
  // is relayed in this round instead of the next. A real server across a wire costs this one call and
  // waits for its EPOLLOUT as before.
  if (send(fd, NULL, 0, MSG_NOSIGNAL) == 0) connected(r, c, 0);
  else if (errno != EAGAIN) refused(r, c, errno);
}

// Writes what is pending from d to end dst; 0 on success (all or part), -1 on an error.
static int flush_dir(dir_t* d, end_t* dst) {
  while (d->len > 0) {
    ssize_t w = send(dst->fd, d->buf + d->off, d->len, MSG_NOSIGNAL);
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

// other: the opposite direction. When it is already passed on, the connection closes right after this
// and close(2) sends the FIN itself (both sides read to their EOF, so nothing unread turns it into a
// reset): one shutdown(2) per connection saved.
static int pass_fin(dir_t* d, end_t* dst, const dir_t* other) {
  if (!d->eof || d->shut || d->len > 0) return 0;
  d->shut = 1;
  if (other->shut) return 0;
  return shutdown(dst->fd, SHUT_WR) != 0 && errno != ENOTCONN ? -1 : 0;
}

// Reads from src into the other side. Returns -1 when the connection must be reset.
static int pump(relay_t* r, conn_t* c, end_t* src) {
  dir_t* d = src->up ? &c->u2c : &c->c2u;
  end_t* dst = src->up ? &c->cl : &c->up;
  if (d->eof || d->len > 0) return 0;
  ssize_t n = recv(src->fd, r->rbuf, READ_SIZE, 0);
  if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
  if (n == 0) {
    d->eof = 1;
    return pass_fin(d, dst, src->up ? &c->c2u : &c->u2c);
  }
  c->last_active = r->now;
  // Counted as they pass, so /metrics sees a long transfer grow (JavaScript reads them under mu).
  if (src->up) c->srv->out_bytes += (double)n;
  else c->srv->in_bytes += (double)n;
  ssize_t w = send(dst->fd, r->rbuf, (size_t)n, MSG_NOSIGNAL);
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

// The connect settled (the EPOLLOUT registered for it). Without an error or a hang-up in the events
// the socket is connected: no SO_ERROR read on the common path. The real server is writable now and a
// client that speaks first has usually sent its request already: the PROXY header is written and the
// client read at once, not a round of epoll_wait later (the read is one the relay makes anyway; it
// finds nothing only for a protocol whose server speaks first).
static void connected(relay_t* r, conn_t* c, uint32_t events) {
  if (events & (EPOLLERR | EPOLLHUP)) {
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->up.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
      refused(r, c, err);
      return;
    }
  }
  c->state = ST_RELAY;
  c->last_active = r->now;
  link_conn(c, &r->relaying);
  c->up.mask = EPOLLOUT;  // as registered for the connect
  if (flush_dir(&c->c2u, &c->up) != 0 || (c->c2u.len == 0 && pump(r, c, &c->cl) != 0)) {
    conn_close(r, c, CLOSE_RESET);
    return;
  }
  rewatch(r, c);  // the client joins the epoll set here (accept left it out)
}

static void on_event(relay_t* r, end_t* e, uint32_t events) {
  conn_t* c = e->c;
  if (c->state == ST_CLOSED || e->fd < 0) return;
  // Only the real server's side is in the set while connecting.
  if (c->state == ST_CONNECTING) {
    if (e->up) connected(r, c, events);
    return;
  }
  if (events & EPOLLHUP) e->hup = 1;
  dir_t* out = e->up ? &c->c2u : &c->u2c;  // what waits to be written to e
  if (events & EPOLLOUT) {
    if (flush_dir(out, e) != 0 || pass_fin(out, e, e->up ? &c->u2c : &c->c2u) != 0) {
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
    // The peer's FIN was in when the event was taken: read on to the EOF now (a read the next round
    // would make anyway), so a connection that ends is passed on and closed a round sooner.
    dir_t* in = e->up ? &c->u2c : &c->c2u;
    if ((events & EPOLLRDHUP) && !in->eof && in->len == 0 && pump(r, c, e) != 0) {
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
  for (size_t i = 0; i < n; i++) run_service_command(r, &cmds[i]);
  free(cmds);
}

// Ends every connection of s (CMD_CLOSE with drop).
void drop_service_conns(relay_t* r, service_t* s) {
  conn_t** lists[] = {&r->connecting, &r->relaying};
  for (int i = 0; i < 2; i++) {
    for (conn_t *c = *lists[i], *next; c != NULL; c = next) {
      next = c->next;
      if (c->svc == s) conn_close(r, c, CLOSE_DROP);
    }
  }
}

static void* relay_main(void* arg) {
  relay_t* r = arg;
  struct epoll_event evs[MAX_EVENTS];
  service_t* ready[MAX_EVENTS];
  r->now = now_ms();
  int64_t next_sweep = r->now + SWEEP_MS;
  int sweeps = 0;
  for (;;) {
    int timeout = (int)(next_sweep - r->now);
    int n = epoll_wait(r->epfd, evs, MAX_EVENTS, timeout < 0 ? 0 : timeout);
    r->now = now_ms();
    // New connections after the round's relaying: the requests already under way (whose clients wait)
    // go first, and what is accepted now is connected and read in the same round.
    int nready = 0;
    for (int i = 0; i < n; i++) {
      end_t* e = evs[i].data.ptr;
      if (e == NULL) run_commands(r);
      else if (e->c == NULL) ready[nready++] = (service_t*)e;  // lend is the service's first member
      else on_event(r, e, evs[i].events);
    }
    for (int i = 0; i < nready; i++) accept_ready(r, ready[i]);
    if (r->now >= next_sweep) {
      sweep(r, ++sweeps % IDLE_SWEEPS == 0);
      resume_listeners(r);
      next_sweep = r->now + SWEEP_MS;
    }
    while (r->to_free != NULL) {
      conn_t* c = r->to_free;
      r->to_free = c->free_next;
      free(c);
    }
    free_services(r);
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
  free_services(r);
  // Commands never run: their descriptors and tables.
  for (size_t i = 0; i < r->ncmds; i++) {
    cmd_t* k = &r->cmds[i];
    if (k->fd >= 0) close(k->fd);
    for (int32_t j = 0; j < k->nservers; j++) free(k->servers[j]);
    free(k->servers);
    free(k->mh);
  }
  napi_release_threadsafe_function(r->tsfn, napi_tsfn_abort);
  close(r->epfd);
  close(r->evfd);
}

static void cleanup_hook(void* arg) { stop_relay(arg); }

int get_args(napi_env env, napi_callback_info info, size_t n, napi_value* argv) {
  size_t argc = n;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < n) {
    napi_throw_type_error(env, NULL, "missing arguments");
    return 0;
  }
  return 1;
}

relay_t* relay_arg(napi_env env, napi_value v) {
  relay_t* r = NULL;
  if (napi_get_value_external(env, v, (void**)&r) != napi_ok || r == NULL || !r->started) {
    napi_throw_type_error(env, NULL, "not an open relay");
    return NULL;
  }
  return r;
}

void push(relay_t* r, cmd_t* k) {
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
  // The listening handles keep the process alive, not the relay.
  napi_unref_threadsafe_function(env, r->tsfn);
  r->started = 1;
  if (pthread_create(&r->thread, NULL, relay_main, r) != 0) {
    r->started = 0;
    napi_throw_error(env, NULL, "cannot start the relay thread");
    return NULL;
  }
  pthread_setname_np(r->thread, "lvsd-relay");  // seen in top -H, perf
  napi_add_env_cleanup_hook(env, cleanup_hook, r);
  napi_create_external(env, r, NULL, NULL, &handle);
  return handle;
}

static napi_value relay_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  relay_t* r = relay_arg(env, argv[0]);
  if (r == NULL) return NULL;
  napi_remove_env_cleanup_hook(env, cleanup_hook, r);
  stop_relay(r);
  return NULL;
}

static napi_value relay_count(napi_env env, napi_callback_info info) {
  napi_value argv[1], x;
  if (!get_args(env, info, 1, argv)) return NULL;
  relay_t* r = relay_arg(env, argv[0]);
  if (r == NULL) return NULL;
  napi_create_int32(env, __atomic_load_n(&r->count, __ATOMIC_RELAXED), &x);
  return x;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"open", NULL, relay_open, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, relay_close, NULL, NULL, NULL, napi_default, NULL},
      {"count", NULL, relay_count, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  define_service_api(env, exports);
  return exports;
}
