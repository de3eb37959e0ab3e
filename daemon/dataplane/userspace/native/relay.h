// What relay.c (the thread, the copy loop), accept.c (listening sockets, services), pick.c (the
// schedulers) and proxy_header.c share. Everything here belongs to the relay thread unless a field
// says "guarded by mu".
#ifndef LVSD_RELAY_H
#define LVSD_RELAY_H
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

enum { EV_REFUSED = 1, EV_NOREAL = 2 };
enum { CLOSE_DONE = 0, CLOSE_RESET = 1, CLOSE_IDLE = 2, CLOSE_DROP = 3 };
enum { ST_CONNECTING = 0, ST_RELAY = 1, ST_CLOSED = 3 };
enum { CMD_SERVERS = 0, CMD_LISTEN = 1, CMD_UNLISTEN = 2, CMD_CLOSE = 3 };
// The schedulers (schedulers.ts) the thread runs itself.
enum { PICK_RR = 0, PICK_WRR = 1, PICK_LC = 2, PICK_WLC = 3, PICK_SH = 4, PICK_MH = 5, PICK_FO = 6 };

#define READ_SIZE (64 * 1024)
#define REC 4
#define HEAD_MAX 112

struct conn;
struct service;

typedef struct {
  int fd;
  uint32_t mask;  // the events epoll watches for now
  int up;         // 0 the client, 1 the real server
  int hup;        // epoll said hang-up: with nothing to watch for, the side leaves the epoll set
  int out_of_set;
  struct conn* c;  // NULL: the listening socket of a service
} end_t;

// Bytes read from one side that the other has not taken yet.
typedef struct {
  char* buf;
  uint32_t len, off;
  int eof;   // the source sent FIN
  int shut;  // the FIN was passed on
} dir_t;

// One real server of a service. The counters are written by the relay thread only and read by
// JavaScript (under mu, which keeps the record alive); a removed server lives on while it has
// connections (drain), then is freed.
typedef struct server {
  double nid;  // JavaScript's number for it
  struct sockaddr_storage addr;
  socklen_t addrlen;
  int32_t weight;
  int removed;
  int kept;  // set_servers' mark
  int32_t refs;  // connections on it
  double active, conns, in_bytes, out_bytes, refused;
  double credit;  // smooth wrr
} server_t;

typedef struct service {
  end_t lend;  // the listening socket (fd -1 when none)
  struct relay* r;
  int32_t id;
  int mode, proxy;
  int32_t connect_ms, idle_ms;
  server_t** servers;  // pool order; the array is replaced under mu
  int32_t nservers;
  int32_t* mh;  // Maglev slots → index into servers
  int32_t nmh;
  uint32_t rr_next, lc_rot;
  int closed;
  int32_t refs;  // connections
  int paused;    // out of the epoll set after an accept error (EMFILE...) until the next sweep
  struct service* paused_next;  // in r->paused, then r->svc_to_free
} service_t;

typedef struct conn {
  end_t cl, up;
  dir_t c2u, u2c;
  int state;
  int32_t connect_ms, idle_ms;
  int64_t started, last_active;
  service_t* svc;
  server_t* srv;
  char src[64];    // the client's address as text (hashing schedulers)
  double* tried;   // nids refused so far
  int32_t ntried;
  char head[HEAD_MAX];  // the PROXY header, sent before any client byte
  uint32_t headlen;
  struct conn *prev, *next;  // in r->connecting or r->relaying
  struct conn** list;
  struct conn* free_next;    // closed in this round, freed after it
} conn_t;

typedef struct {
  int op;
  service_t* svc;
  int fd;
  server_t** servers;  // CMD_SERVERS: new records (matched to the old ones by nid)
  int32_t nservers;
  int32_t* mh;
  int32_t nmh;
  int mode, proxy;
  int32_t connect_ms, idle_ms;
  int drop;  // CMD_CLOSE: end its connections too
} cmd_t;

typedef struct relay {
  pthread_t thread;
  pthread_mutex_t mu;
  int epfd, evfd;
  int stopping;
  int started;
  napi_threadsafe_function tsfn;
  // Guarded by mu.
  cmd_t* cmds;
  size_t ncmds, capcmds;
  int woken;
  double* out;
  size_t nout, capout;
  int call_pending;
  int32_t count;  // atomic
  int32_t next_service;
  // The relay thread only.
  conn_t* connecting;
  conn_t* relaying;
  conn_t* to_free;
  service_t* paused;
  service_t* svc_to_free;
  double* local;
  size_t nlocal, caplocal;
  int64_t now;
  char rbuf[READ_SIZE];
} relay_t;

// relay.c
void* grow(void* p, size_t* cap, size_t need, size_t elem);
void emit(relay_t* r, int kind, double svc, double a, double b);
void start_connect(relay_t* r, conn_t* c);
void conn_close(relay_t* r, conn_t* c, int why);
void push(relay_t* r, cmd_t* k);
relay_t* relay_arg(napi_env env, napi_value v);
int get_args(napi_env env, napi_callback_info info, size_t n, napi_value* argv);
void drop_service_conns(relay_t* r, service_t* s);

// pick.c
server_t* pick(service_t* s, conn_t* c);

// proxy_header.c
void build_head(conn_t* c, int version, const struct sockaddr_storage* src, const struct sockaddr_storage* dst);
uint16_t port_of(const struct sockaddr_storage* a);
void text_of(const struct sockaddr_storage* a, int plain_v4, char* out, size_t len);

// accept.c
void accept_ready(relay_t* r, service_t* s);
void run_service_command(relay_t* r, cmd_t* k);
void server_release(server_t* srv);
void resume_listeners(relay_t* r);
void service_release(relay_t* r, service_t* s);
void free_services(relay_t* r);
void define_service_api(napi_env env, napi_value exports);

#endif
