// The services of the native relay: the relay thread accepts on each service's listening socket,
// picks a real server with the service's scheduler and builds the PROXY header, so a new connection
// costs JavaScript nothing. JavaScript owns the configuration and sends it whole on each change:
//
//   service(relay) → svc
//   servers(relay, svc, nids, hosts, ports, weights, mode, proxy, connectMs, idleMs, mhSlots|null)
//       the pool in order (a server keeps its counters across changes by its nid); weight 0 drains: no new
//       connection picks it, established ones run on; a server left out is gone for new connections and
//       freed once its last connection ends
//   listen(relay, svc, fd) → 0 or -errno   accepts on a duplicate of fd (bound; listen(2) is called here)
//   unlisten(relay, svc, fd)                stops accepting (fd: the caller's descriptor); connections run on
//   closeService(relay, svc, drop)          the end of svc (drop: its connections too); svc is gone after
//   counts(relay, svc) → Float64Array       [nid, active, conns, inBytes, outBytes, refused] per server
//
// The schedulers are in pick.c, the PROXY header in proxy_header.c.
#include "relay.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>

// Connections taken per readiness of a listening socket before the thread turns to the others. A
// connection left in the accept queue waits a whole round (its client's request with it), and on a
// loaded machine a round is long. 64 (was 8), with a connect done within connect() relayed at once
// (relay.c): a new connection's p99 at 64 clients went from above HAProxy's in 8 of 10 rounds to below
// it in 11 of 17 (#19; either change alone did not move it). Another process's thread is not starved by
// a bigger batch: each arrival wakes an idle waiter (EPOLLEXCLUSIVE).
#define ACCEPT_BATCH 64

// ——— accepting ———

static void pause_listener(relay_t* r, service_t* s) {
  if (s->paused || s->lend.fd < 0) return;
  epoll_ctl(r->epfd, EPOLL_CTL_DEL, s->lend.fd, NULL);
  s->refs++;  // held until resumed
  s->paused = 1;
  s->paused_next = r->paused;
  r->paused = s;
}

static void add_listener(relay_t* r, service_t* s) {
  // EPOLLEXCLUSIVE: with helper processes on the same socket, one relay thread wakes per connection.
  // Measured: 1,000 connections opened at once split ~60/40 between two processes with it, ~78/22
  // without (every thread woken, the least busy one takes the lot).
  struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = &s->lend};
  epoll_ctl(r->epfd, EPOLL_CTL_ADD, s->lend.fd, &ev);
}

// Called by the sweep: listeners paused by an error (out of descriptors) try again.
void resume_listeners(relay_t* r) {
  while (r->paused != NULL) {
    service_t* s = r->paused;
    r->paused = s->paused_next;
    s->paused = 0;
    if (s->lend.fd >= 0) add_listener(r, s);
    service_release(r, s);  // the hold taken by the pause
  }
}

void accept_ready(relay_t* r, service_t* s) {
  for (int i = 0; i < ACCEPT_BATCH && s->lend.fd >= 0; i++) {
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    int fd = accept4(s->lend.fd, (struct sockaddr*)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // EMFILE, ENFILE, ENOBUFS...: level-triggered, the socket would wake the thread at once again.
      if (errno != EAGAIN) pause_listener(r, s);
      return;
    }
    conn_t* c = calloc(1, sizeof *c);
    if (c == NULL) {
      close(fd);
      return;
    }
    c->cl.fd = fd;  // TCP_NODELAY comes from the listening socket (Linux copies it to accepted ones)
    c->cl.c = c;
    c->up.fd = -1;
    c->up.up = 1;
    c->up.c = c;
    c->svc = s;
    s->refs++;
    c->connect_ms = s->connect_ms;
    c->idle_ms = s->idle_ms;
    __atomic_add_fetch(&r->count, 1, __ATOMIC_RELAXED);
    if (s->mode == PICK_SH || s->mode == PICK_MH) text_of(&peer, 0, c->src, sizeof c->src);
    if (s->proxy != 0) {
      struct sockaddr_storage local;
      socklen_t llen = sizeof local;
      if (getsockname(fd, (struct sockaddr*)&local, &llen) == 0) build_head(c, s->proxy, &peer, &local);
    }
    // Not in the epoll set before a real server is connected (connected() adds it with what it must be
    // watched for): one epoll_ctl per connection less than adding it idle and modifying it then. A client
    // that leaves meanwhile is seen once the relay starts; the connect timeout bounds the wait.
    c->cl.out_of_set = 1;
    start_connect(r, c);
  }
}

// ——— services ———

void server_release(server_t* srv) {
  if (--srv->refs == 0 && srv->removed) free(srv);
}

// Freed after the round (free_services): later events of the round may still point at its listener.
void service_release(relay_t* r, service_t* s) {
  if (--s->refs > 0 || !s->closed || s->lend.fd >= 0) return;
  s->paused_next = r->svc_to_free;
  r->svc_to_free = s;
}

void free_services(relay_t* r) {
  while (r->svc_to_free != NULL) {
    service_t* s = r->svc_to_free;
    r->svc_to_free = s->paused_next;
    for (int32_t i = 0; i < s->nservers; i++) free(s->servers[i]);
    free(s->servers);
    free(s->mh);
    free(s);
  }
}

static void stop_listening(relay_t* r, service_t* s) {
  if (s->lend.fd < 0) return;
  if (!s->paused) epoll_ctl(r->epfd, EPOLL_CTL_DEL, s->lend.fd, NULL);
  close(s->lend.fd);
  s->lend.fd = -1;
}

static void set_servers(relay_t* r, service_t* s, cmd_t* k) {
  server_t** next = k->servers;
  for (int32_t j = 0; j < s->nservers; j++) s->servers[j]->kept = 0;
  for (int32_t i = 0; i < k->nservers; i++) {
    for (int32_t j = 0; j < s->nservers; j++) {
      server_t* old = s->servers[j];
      if (old->kept || old->nid != next[i]->nid) continue;
      old->addr = next[i]->addr;
      old->addrlen = next[i]->addrlen;
      old->weight = next[i]->weight;
      old->kept = 1;
      free(next[i]);
      next[i] = old;
      break;
    }
  }
  pthread_mutex_lock(&r->mu);
  server_t** gone = s->servers;
  int32_t ngone = s->nservers;
  s->servers = next;
  s->nservers = k->nservers;
  free(s->mh);
  s->mh = k->mh;
  s->nmh = k->nmh;
  pthread_mutex_unlock(&r->mu);
  // Left out: no new connection picks it; it is freed with its last connection (drain).
  for (int32_t j = 0; j < ngone; j++) {
    if (gone[j]->kept) continue;
    gone[j]->removed = 1;
    if (gone[j]->refs == 0) free(gone[j]);
  }
  free(gone);
  if (s->mode != k->mode) {  // a new scheduler starts afresh, as a new picker does in JavaScript
    s->rr_next = s->lc_rot = 0;
    for (int32_t i = 0; i < s->nservers; i++) s->servers[i]->credit = 0;
  }
  s->mode = k->mode;
  s->proxy = k->proxy;
  s->connect_ms = k->connect_ms;
  s->idle_ms = k->idle_ms;
}

void run_service_command(relay_t* r, cmd_t* k) {
  service_t* s = k->svc;
  switch (k->op) {
    case CMD_SERVERS:
      set_servers(r, s, k);
      break;
    case CMD_LISTEN:
      stop_listening(r, s);
      s->lend.fd = k->fd;
      if (!s->paused) add_listener(r, s);
      break;
    case CMD_UNLISTEN:
      stop_listening(r, s);
      break;
    default:  // CMD_CLOSE
      stop_listening(r, s);
      s->closed = 1;
      s->refs++;
      if (k->drop) drop_service_conns(r, s);
      service_release(r, s);
  }
}

// ——— JavaScript side ———

static service_t* service_arg(napi_env env, napi_value v) {
  service_t* s = NULL;
  if (napi_get_value_external(env, v, (void**)&s) != napi_ok || s == NULL) napi_throw_type_error(env, NULL, "not a service");
  return s;
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

static napi_value svc_open(napi_env env, napi_callback_info info) {
  napi_value argv[1], out;
  if (!get_args(env, info, 1, argv)) return NULL;
  relay_t* r = relay_arg(env, argv[0]);
  if (r == NULL) return NULL;
  service_t* s = calloc(1, sizeof *s);
  if (s == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  s->lend.fd = -1;
  s->r = r;
  s->connect_ms = 3000;
  pthread_mutex_lock(&r->mu);
  s->id = ++r->next_service;
  pthread_mutex_unlock(&r->mu);
  napi_create_external(env, s, NULL, NULL, &out);
  return out;
}

static napi_value svc_id(napi_env env, napi_callback_info info) {
  napi_value argv[1], out;
  if (!get_args(env, info, 1, argv)) return NULL;
  service_t* s = service_arg(env, argv[0]);
  if (s == NULL) return NULL;
  napi_create_int32(env, s->id, &out);
  return out;
}

static int32_t int_at(napi_env env, napi_value arr, uint32_t i) {
  napi_value v;
  int32_t x = 0;
  if (napi_get_element(env, arr, i, &v) == napi_ok) napi_get_value_int32(env, v, &x);
  return x;
}

static napi_value svc_servers(napi_env env, napi_callback_info info) {
  napi_value argv[11];
  if (!get_args(env, info, 11, argv)) return NULL;
  relay_t* r = relay_arg(env, argv[0]);
  service_t* s = r == NULL ? NULL : service_arg(env, argv[1]);
  if (s == NULL) return NULL;
  uint32_t n = 0;
  napi_get_array_length(env, argv[2], &n);
  cmd_t k = {.op = CMD_SERVERS, .svc = s, .fd = -1, .nservers = (int32_t)n};
  napi_get_value_int32(env, argv[6], &k.mode);
  napi_get_value_int32(env, argv[7], &k.proxy);
  napi_get_value_int32(env, argv[8], &k.connect_ms);
  napi_get_value_int32(env, argv[9], &k.idle_ms);
  k.servers = calloc(n + 1, sizeof *k.servers);
  if (k.servers == NULL) abort();
  for (uint32_t i = 0; i < n; i++) {
    server_t* b = calloc(1, sizeof *b);
    napi_value nid, host;
    if (b == NULL) abort();
    k.servers[i] = b;
    napi_get_element(env, argv[2], i, &nid);
    napi_get_value_double(env, nid, &b->nid);
    napi_get_element(env, argv[3], i, &host);
    b->weight = int_at(env, argv[5], i);
    if (!to_sockaddr(env, host, int_at(env, argv[4], i), &b->addr, &b->addrlen)) {
      for (uint32_t j = 0; j <= i; j++) free(k.servers[j]);
      free(k.servers);
      napi_throw_type_error(env, NULL, "a real server's address is not an IP address");
      return NULL;
    }
  }
  bool is_arr = false;
  napi_is_typedarray(env, argv[10], &is_arr);
  if (is_arr) {
    napi_typedarray_type t;
    size_t len;
    void* data;
    napi_get_typedarray_info(env, argv[10], &t, &len, &data, NULL, NULL);
    if (t == napi_int32_array && len > 0) {
      k.mh = malloc(len * sizeof *k.mh);
      if (k.mh == NULL) abort();
      memcpy(k.mh, data, len * sizeof *k.mh);
      k.nmh = (int32_t)len;
    }
  }
  push(r, &k);
  return NULL;
}

static napi_value svc_listen(napi_env env, napi_callback_info info) {
  napi_value argv[3], out;
  if (!get_args(env, info, 3, argv)) return NULL;
  relay_t* r = relay_arg(env, argv[0]);
  service_t* s = r == NULL ? NULL : service_arg(env, argv[1]);
  if (s == NULL) return NULL;
  int32_t fd = -1, rc = 0;
  napi_get_value_int32(env, argv[2], &fd);
  // libuv keeps a bind's EADDRINUSE for its own listen (uv_tcp_bind returns 0): a socket left unbound
  // would be given an ephemeral port on every address by listen(2).
  struct sockaddr_storage a;
  socklen_t alen = sizeof a;
  if (getsockname(fd, (struct sockaddr*)&a, &alen) != 0) rc = -errno;
  else if (port_of(&a) == 0) rc = -EADDRINUSE;
  int dup_fd = -1;
  if (rc == 0 && (dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
    rc = -errno;
  }
  // TCP_NODELAY here, not on each accepted socket: Linux gives it to every socket accept(2) returns (one
  // setsockopt per connection saved).
  int one = 1;
  if (rc == 0 && (setsockopt(dup_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
                  fcntl(dup_fd, F_SETFL, fcntl(dup_fd, F_GETFL) | O_NONBLOCK) != 0 || listen(dup_fd, 4096) != 0)) {
    rc = -errno;
    close(dup_fd);
  }
  if (rc == 0) {
    cmd_t k = {.op = CMD_LISTEN, .svc = s, .fd = dup_fd};
    push(r, &k);
  }
  napi_create_int32(env, rc, &out);
  return out;
}

static napi_value svc_command(napi_env env, napi_callback_info info, int op) {
  napi_value argv[3];
  size_t need = op == CMD_CLOSE ? 3 : 2;
  if (!get_args(env, info, need, argv)) return NULL;
  relay_t* r = relay_arg(env, argv[0]);
  service_t* s = r == NULL ? NULL : service_arg(env, argv[1]);
  if (s == NULL) return NULL;
  cmd_t k = {.op = op, .svc = s, .fd = -1};
  bool drop = false;
  if (op == CMD_CLOSE) napi_get_value_bool(env, argv[2], &drop);
  k.drop = drop;
  push(r, &k);
  return NULL;
}

// unlisten(relay, svc, fd): fd is the caller's own descriptor of the listening socket. shutdown(2) takes
// the socket out of LISTEN at once, so the address is free to bind again when this returns, as it is
// after libuv's close; the thread closes its duplicate when it gets to the command.
static napi_value svc_unlisten(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  int32_t fd = -1;
  if (!get_args(env, info, 3, argv)) return NULL;
  napi_get_value_int32(env, argv[2], &fd);
  if (fd >= 0) shutdown(fd, SHUT_RD);
  return svc_command(env, info, CMD_UNLISTEN);
}
static napi_value svc_close(napi_env env, napi_callback_info info) { return svc_command(env, info, CMD_CLOSE); }

// The counters are doubles written by the relay thread alone: an aligned 8-byte read never tears on
// the targets Node runs on; mu keeps the records from being freed while they are read.
static napi_value svc_counts(napi_env env, napi_callback_info info) {
  napi_value argv[2], ab, arr;
  if (!get_args(env, info, 2, argv)) return NULL;
  relay_t* r = relay_arg(env, argv[0]);
  service_t* s = r == NULL ? NULL : service_arg(env, argv[1]);
  if (s == NULL) return NULL;
  pthread_mutex_lock(&r->mu);
  size_t n = (size_t)s->nservers * 6;
  double* out;
  if (napi_create_arraybuffer(env, n * sizeof(double), (void**)&out, &ab) == napi_ok) {
    for (int32_t i = 0; i < s->nservers; i++) {
      server_t* b = s->servers[i];
      double* x = out + i * 6;
      x[0] = b->nid;
      x[1] = b->active;
      x[2] = b->conns;
      x[3] = b->in_bytes;
      x[4] = b->out_bytes;
      x[5] = b->refused;
    }
  }
  pthread_mutex_unlock(&r->mu);
  napi_create_typedarray(env, napi_float64_array, n, ab, 0, &arr);
  return arr;
}

void define_service_api(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"service", NULL, svc_open, NULL, NULL, NULL, napi_default, NULL},
      {"serviceId", NULL, svc_id, NULL, NULL, NULL, napi_default, NULL},
      {"servers", NULL, svc_servers, NULL, NULL, NULL, napi_default, NULL},
      {"listen", NULL, svc_listen, NULL, NULL, NULL, napi_default, NULL},
      {"unlisten", NULL, svc_unlisten, NULL, NULL, NULL, napi_default, NULL},
      {"closeService", NULL, svc_close, NULL, NULL, NULL, napi_default, NULL},
      {"counts", NULL, svc_counts, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
}
