// lvsd's small N-API addon: the socket calls Node cannot make.
//   - raw IP sockets (VRRP, protocol 112) with recvmsg() that reports destination, hop limit and
//     interface (IP_PKTINFO / IPV6_RECVPKTINFO / IPV6_RECVHOPLIMIT), and sendmsg() with a chosen
//     source address and interface;
//   - a classic BPF socket filter (SO_ATTACH_FILTER takes a pointer, which JavaScript cannot build);
//   - AF_PACKET datagram sockets for gratuitous ARP;
//   - readiness through libuv's uv_poll on the calling thread's loop (works in worker_threads);
//   - one datagram to an AF_UNIX socket (systemd's $NOTIFY_SOCKET: Node has no unix datagram sockets).
// Everything else (socket options, packet layouts) is decided in TypeScript.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>
#include <uv.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/un.h>
#include <stddef.h>
#include <linux/if_packet.h>
#include <linux/filter.h>
#include <pthread.h>
#include <sched.h>
#include <dirent.h>

#include "napi_check.h"

static napi_value throw_errno(napi_env env, const char* what) {
  char msg[256];
  int e = errno;
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(e));
  napi_value err, code, text;
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &text);
  napi_create_error(env, NULL, text, &err);
  napi_create_int32(env, e, &code);
  napi_set_named_property(env, err, "errno", code);
  napi_throw(env, err);
  return NULL;
}

static int get_args(napi_env env, napi_callback_info info, size_t n, napi_value* argv) {
  size_t argc = n;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < n) {
    napi_throw_type_error(env, NULL, "missing arguments");
    return 0;
  }
  return 1;
}

static int32_t arg_i32(napi_env env, napi_value v) {
  int32_t x = 0;
  napi_get_value_int32(env, v, &x);
  return x;
}

static napi_value num(napi_env env, double x) {
  napi_value v;
  napi_create_double(env, x, &v);
  return v;
}

static int arg_buf(napi_env env, napi_value v, void** data, size_t* len) {
  bool is;
  napi_is_buffer(env, v, &is);
  if (!is) {
    napi_throw_type_error(env, NULL, "expected a Buffer");
    return 0;
  }
  napi_get_buffer_info(env, v, data, len);
  return 1;
}

static napi_value make_buf(napi_env env, const void* data, size_t len) {
  napi_value b;
  void* copy;
  napi_create_buffer_copy(env, len, data, &copy, &b);
  return b;
}

// openRaw(family 4|6, protocol) → fd, non-blocking, with the ancillary data we need switched on.
static napi_value open_raw(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  int family = arg_i32(env, argv[0]) == 6 ? AF_INET6 : AF_INET;
  int fd = socket(family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, arg_i32(env, argv[1]));
  if (fd < 0) return throw_errno(env, "socket(SOCK_RAW)");
  int one = 1;
  int ok = family == AF_INET
               ? setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one)
               : (setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one) |
                  setsockopt(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof one));
  if (ok != 0) {
    close(fd);
    return throw_errno(env, "setsockopt(PKTINFO)");
  }
  return num(env, fd);
}

// openPacket(ethertype) → fd: AF_PACKET/SOCK_DGRAM, the kernel builds the Ethernet header.
static napi_value open_packet(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, htons((uint16_t)arg_i32(env, argv[0])));
  if (fd < 0) return throw_errno(env, "socket(AF_PACKET)");
  return num(env, fd);
}

// setsockopt(fd, level, name, Buffer | int)
static napi_value set_opt(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  if (!get_args(env, info, 4, argv)) return NULL;
  int fd = arg_i32(env, argv[0]), level = arg_i32(env, argv[1]), name = arg_i32(env, argv[2]);
  napi_valuetype t;
  napi_typeof(env, argv[3], &t);
  int rc;
  if (t == napi_number) {
    int v = arg_i32(env, argv[3]);
    rc = setsockopt(fd, level, name, &v, sizeof v);
  } else {
    void* data;
    size_t len;
    if (!arg_buf(env, argv[3], &data, &len)) return NULL;
    rc = setsockopt(fd, level, name, data, (socklen_t)len);
  }
  if (rc != 0) return throw_errno(env, "setsockopt");
  return NULL;
}

// attachFilter(fd, program): program is struct sock_filter[] as bytes (8 each), built in TypeScript.
static napi_value attach_filter(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  int fd = arg_i32(env, argv[0]);
  void* data;
  size_t len;
  if (!arg_buf(env, argv[1], &data, &len)) return NULL;
  if (len == 0 || len % sizeof(struct sock_filter) != 0 || len / sizeof(struct sock_filter) > BPF_MAXINSNS) {
    napi_throw_range_error(env, NULL, "attachFilter: the program must be 1..4096 instructions of 8 bytes");
    return NULL;
  }
  struct sock_fprog prog = {(unsigned short)(len / sizeof(struct sock_filter)), (struct sock_filter*)data};
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) != 0) return throw_errno(env, "setsockopt(SO_ATTACH_FILTER)");
  return NULL;
}

// recv(fd) → null (nothing waiting) | { data, src, dst, ttl, ifindex }. ttl is -1 when not reported
// (IPv4: read it from the IP header, which is part of data).
static napi_value recv_msg(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  int fd = arg_i32(env, argv[0]);
  unsigned char buf[65536];
  union {
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
  } from;
  char cbuf[256];
  struct iovec iov = {buf, sizeof buf};
  struct msghdr msg = {&from, sizeof from, &iov, 1, cbuf, sizeof cbuf, 0};
  ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      napi_value nul;
      napi_get_null(env, &nul);
      return nul;
    }
    return throw_errno(env, "recvmsg");
  }
  int ttl = -1, ifindex = 0;
  const void* dst = NULL;
  size_t alen = 4;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      struct in_pktinfo* pi = (struct in_pktinfo*)CMSG_DATA(c);
      ifindex = pi->ipi_ifindex;
      dst = &pi->ipi_addr;
    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
      struct in6_pktinfo* pi = (struct in6_pktinfo*)CMSG_DATA(c);
      ifindex = (int)pi->ipi6_ifindex;
      dst = &pi->ipi6_addr;
      alen = 16;
    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT) {
      memcpy(&ttl, CMSG_DATA(c), sizeof ttl);
    }
  }
  napi_value out;
  CHECK(napi_create_object(env, &out));
  napi_set_named_property(env, out, "data", make_buf(env, buf, (size_t)n));
  if (from.v4.sin_family == AF_INET6) {
    napi_set_named_property(env, out, "src", make_buf(env, &from.v6.sin6_addr, 16));
    alen = 16;
  } else {
    napi_set_named_property(env, out, "src", make_buf(env, &from.v4.sin_addr, 4));
  }
  if (dst != NULL) napi_set_named_property(env, out, "dst", make_buf(env, dst, alen));
  napi_set_named_property(env, out, "ttl", num(env, ttl));
  napi_set_named_property(env, out, "ifindex", num(env, ifindex));
  napi_set_named_property(env, out, "truncated", num(env, (msg.msg_flags & MSG_TRUNC) ? 1 : 0));
  return out;
}

// send(fd, data, dst, src | null, ifindex) → bytes sent. src and ifindex go in a PKTINFO control
// message, so one socket can speak for several instances and interfaces.
static napi_value send_msg(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  if (!get_args(env, info, 5, argv)) return NULL;
  int fd = arg_i32(env, argv[0]);
  void *data, *dst, *src = NULL;
  size_t len, dlen, slen = 0;
  if (!arg_buf(env, argv[1], &data, &len) || !arg_buf(env, argv[2], &dst, &dlen)) return NULL;
  napi_valuetype t;
  napi_typeof(env, argv[3], &t);
  if (t != napi_null && t != napi_undefined && !arg_buf(env, argv[3], &src, &slen)) return NULL;
  int ifindex = arg_i32(env, argv[4]);
  union {
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
  } to;
  memset(&to, 0, sizeof to);
  char cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
  memset(cbuf, 0, sizeof cbuf);
  struct iovec iov = {data, len};
  struct msghdr msg = {&to, 0, &iov, 1, cbuf, 0, 0};
  struct cmsghdr* c = (struct cmsghdr*)cbuf;
  if (dlen == 4) {
    to.v4.sin_family = AF_INET;
    memcpy(&to.v4.sin_addr, dst, 4);
    msg.msg_namelen = sizeof to.v4;
    if (src != NULL || ifindex > 0) {
      struct in_pktinfo pi;
      memset(&pi, 0, sizeof pi);
      pi.ipi_ifindex = ifindex;
      if (src != NULL && slen == 4) memcpy(&pi.ipi_spec_dst, src, 4);
      c->cmsg_level = IPPROTO_IP;
      c->cmsg_type = IP_PKTINFO;
      c->cmsg_len = CMSG_LEN(sizeof pi);
      memcpy(CMSG_DATA(c), &pi, sizeof pi);
      msg.msg_controllen = CMSG_SPACE(sizeof pi);
    }
  } else if (dlen == 16) {
    to.v6.sin6_family = AF_INET6;
    memcpy(&to.v6.sin6_addr, dst, 16);
    to.v6.sin6_scope_id = (uint32_t)ifindex;
    msg.msg_namelen = sizeof to.v6;
    struct in6_pktinfo pi;
    memset(&pi, 0, sizeof pi);
    pi.ipi6_ifindex = (unsigned)ifindex;
    if (src != NULL && slen == 16) memcpy(&pi.ipi6_addr, src, 16);
    c->cmsg_level = IPPROTO_IPV6;
    c->cmsg_type = IPV6_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof pi);
    memcpy(CMSG_DATA(c), &pi, sizeof pi);
    msg.msg_controllen = CMSG_SPACE(sizeof pi);
  } else {
    napi_throw_type_error(env, NULL, "destination must be 4 or 16 bytes");
    return NULL;
  }
  if (msg.msg_controllen == 0) msg.msg_control = NULL;
  ssize_t n = sendmsg(fd, &msg, MSG_DONTWAIT);
  if (n < 0) return throw_errno(env, "sendmsg");
  return num(env, (double)n);
}

// sendPacket(fd, ifindex, ethertype, dstMac(6), payload) → bytes sent
static napi_value send_packet(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  if (!get_args(env, info, 5, argv)) return NULL;
  int fd = arg_i32(env, argv[0]);
  void *mac, *data;
  size_t mlen, len;
  if (!arg_buf(env, argv[3], &mac, &mlen) || !arg_buf(env, argv[4], &data, &len)) return NULL;
  struct sockaddr_ll sll;
  memset(&sll, 0, sizeof sll);
  sll.sll_family = AF_PACKET;
  sll.sll_ifindex = arg_i32(env, argv[1]);
  sll.sll_protocol = htons((uint16_t)arg_i32(env, argv[2]));
  sll.sll_halen = (unsigned char)(mlen > 8 ? 8 : mlen);
  memcpy(sll.sll_addr, mac, sll.sll_halen);
  ssize_t n = sendto(fd, data, len, MSG_DONTWAIT, (struct sockaddr*)&sll, sizeof sll);
  if (n < 0) return throw_errno(env, "sendto(AF_PACKET)");
  return num(env, (double)n);
}

static napi_value close_fd(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  if (close(arg_i32(env, argv[0])) != 0) return throw_errno(env, "close");
  return NULL;
}

// hwaddr(ifname) → Buffer(6): the interface's MAC, the sender address of our GARPs.
static napi_value hwaddr(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  size_t l;
  napi_get_value_string_utf8(env, argv[0], ifr.ifr_name, IFNAMSIZ, &l);
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket");
  int rc = ioctl(fd, SIOCGIFHWADDR, &ifr);
  close(fd);
  if (rc != 0) return throw_errno(env, "ioctl(SIOCGIFHWADDR)");
  return make_buf(env, ifr.ifr_hwaddr.sa_data, 6);
}

// setRealtime(priority) → true when the calling thread now runs SCHED_RR at that priority (1..99),
// like keepalived's vrrp_rt_priority. Called from the VRRP worker so only that thread is real-time.
static napi_value set_realtime(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  struct sched_param sp;
  memset(&sp, 0, sizeof sp);
  sp.sched_priority = arg_i32(env, argv[0]);
  int rc = pthread_setschedparam(pthread_self(), SCHED_RR, &sp);
  if (rc != 0) {
    errno = rc;
    return throw_errno(env, "pthread_setschedparam(SCHED_RR)");
  }
  napi_value t;
  napi_get_boolean(env, true, &t);
  return t;
}

// setRealtimeProcess(priority) → how many threads of this process now run SCHED_RR at that priority.
// Every existing thread (/proc/self/task: the main thread and V8's GC and platform helpers) is set;
// threads created later inherit the policy from their creator. Used by the VRRP engine process, whose
// GC helpers must not wait behind normal-priority work the way a worker thread's shared ones did.
static napi_value set_realtime_process(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  struct sched_param sp;
  memset(&sp, 0, sizeof sp);
  sp.sched_priority = arg_i32(env, argv[0]);
  DIR *d = opendir("/proc/self/task");
  if (d == NULL) return throw_errno(env, "opendir(/proc/self/task)");
  int set = 0, failed = 0, err = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    if (sched_setscheduler((pid_t)atoi(e->d_name), SCHED_RR, &sp) == 0) set++;
    else if (errno != ESRCH) {
      failed++;
      err = errno;
    }
  }
  closedir(d);
  if (failed > 0) {
    errno = err;
    return throw_errno(env, "sched_setscheduler(SCHED_RR)");
  }
  napi_value n;
  napi_create_int32(env, set, &n);
  return n;
}

// sendUnixDatagram(sunPath, data) → bytes sent. sunPath holds sun_path's bytes as the address is to
// be given: a path (NUL-terminated) or an abstract name (leading NUL); TypeScript builds it. Never
// blocks: a receiver that does not read gets EAGAIN, not a stalled event loop.
static napi_value send_unix_datagram(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  void *path, *data;
  size_t plen, len;
  if (!arg_buf(env, argv[0], &path, &plen) || !arg_buf(env, argv[1], &data, &len)) return NULL;
  struct sockaddr_un sun;
  memset(&sun, 0, sizeof sun);
  if (plen == 0 || plen > sizeof sun.sun_path) {
    napi_throw_range_error(env, NULL, "unix socket address must be 1..108 bytes");
    return NULL;
  }
  sun.sun_family = AF_UNIX;
  memcpy(sun.sun_path, path, plen);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket(AF_UNIX)");
  ssize_t n = sendto(fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr*)&sun, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen));
  int e = errno;
  close(fd);
  errno = e;
  if (n < 0) return throw_errno(env, "sendto(AF_UNIX)");
  return num(env, (double)n);
}

// ---- readiness: uv_poll on this thread's loop ----
typedef struct {
  uv_poll_t poll;
  napi_env env;
  napi_ref cb;
  napi_ref recv;
  napi_async_context ctx;
  int closing;
} watcher_t;

static void on_closed(uv_handle_t* h) { free(h->data); }

static void stop_watcher(watcher_t* w) {
  if (w->closing) return;
  w->closing = 1;
  uv_poll_stop(&w->poll);
  napi_delete_reference(w->env, w->cb);
  napi_delete_reference(w->env, w->recv);
  napi_async_destroy(w->env, w->ctx);
  uv_close((uv_handle_t*)&w->poll, on_closed);
}

static void cleanup_hook(void* arg) { stop_watcher((watcher_t*)arg); }

static void on_readable(uv_poll_t* p, int status, int events) {
  (void)events;
  watcher_t* w = (watcher_t*)p->data;
  if (w->closing) return;
  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value cb, recv, arg, result;
  napi_get_reference_value(env, w->cb, &cb);
  napi_get_reference_value(env, w->recv, &recv);
  napi_create_int32(env, status, &arg);
  napi_make_callback(env, w->ctx, recv, cb, 1, &arg, &result);
  napi_close_handle_scope(env, scope);
}

static void finalize_watcher(napi_env env, void* data, void* hint) {
  (void)env;
  (void)data;
  (void)hint;
}

// watch(fd, callback) → handle; callback(status) runs whenever fd is readable.
static napi_value watch(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  uv_loop_t* loop;
  CHECK(napi_get_uv_event_loop(env, &loop));
  watcher_t* w = calloc(1, sizeof *w);
  w->env = env;
  if (uv_poll_init(loop, &w->poll, arg_i32(env, argv[0])) != 0) {
    free(w);
    napi_throw_error(env, NULL, "uv_poll_init failed");
    return NULL;
  }
  w->poll.data = w;
  napi_value recv, name, handle;
  CHECK(napi_create_object(env, &recv));
  CHECK(napi_create_reference(env, argv[1], 1, &w->cb));
  CHECK(napi_create_reference(env, recv, 1, &w->recv));
  CHECK(napi_create_string_utf8(env, "lvsd-raw-socket", NAPI_AUTO_LENGTH, &name));
  CHECK(napi_async_init(env, recv, name, &w->ctx));
  uv_poll_start(&w->poll, UV_READABLE, on_readable);
  napi_add_env_cleanup_hook(env, cleanup_hook, w);
  CHECK(napi_create_external(env, w, finalize_watcher, NULL, &handle));
  return handle;
}

static napi_value unwatch(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  watcher_t* w;
  CHECK(napi_get_value_external(env, argv[0], (void**)&w));
  if (!w->closing) {
    napi_remove_env_cleanup_hook(env, cleanup_hook, w);
    stop_watcher(w);
  }
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"openRaw", NULL, open_raw, NULL, NULL, NULL, napi_default, NULL},
      {"openPacket", NULL, open_packet, NULL, NULL, NULL, napi_default, NULL},
      {"setsockopt", NULL, set_opt, NULL, NULL, NULL, napi_default, NULL},
      {"attachFilter", NULL, attach_filter, NULL, NULL, NULL, napi_default, NULL},
      {"recv", NULL, recv_msg, NULL, NULL, NULL, napi_default, NULL},
      {"send", NULL, send_msg, NULL, NULL, NULL, napi_default, NULL},
      {"sendPacket", NULL, send_packet, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, close_fd, NULL, NULL, NULL, napi_default, NULL},
      {"hwaddr", NULL, hwaddr, NULL, NULL, NULL, napi_default, NULL},
      {"watch", NULL, watch, NULL, NULL, NULL, napi_default, NULL},
      {"unwatch", NULL, unwatch, NULL, NULL, NULL, napi_default, NULL},
      {"setRealtime", NULL, set_realtime, NULL, NULL, NULL, napi_default, NULL},
      {"setRealtimeProcess", NULL, set_realtime_process, NULL, NULL, NULL, napi_default, NULL},
      {"sendUnixDatagram", NULL, send_unix_datagram, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
