// The benchmark's real servers: one epoll process listening on N TCP ports (BASE..BASE+N-1) that
// answers any request with a minimal HTTP 200 and closes, or with `smtp` speaks the three steps of
// keepalived's SMTP_CHECK: a 220 banner on connect, 250 to HELO, 221 to QUIT and close. In C, not Node: under QEMU TCG a Node
// server spent ~0.5 guest cores on 60 connections/s, CPU the two checkers being compared need.
// bench/health-scale.ts compiles it (cc) into dist/bench/ on first use.
//   health-targets ADDRESS BASE N [smtp]
// stdin:  "kill PORT" (close that port's listening socket: new connections are refused),
//         "revive" (listen again on every killed port), "stats", "quit"
// stdout: {"ready":N} {"killed":PORT,"t":ms-since-epoch} {"revived":true}
//         {"connections":accepted,"cpuUs":user+system,"rss":bytes}
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

// bench/targets-binary.ts (TARGET_BODY) knows this body: the digest checks compare its md5.
static const char RESPONSE[] = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n";
static const char SMTP_BANNER[] = "220 lvsd-bench ESMTP\r\n";
static const char SMTP_HELO[] = "250 lvsd-bench\r\n";
static const char SMTP_QUIT[] = "221 bye\r\n";
static int smtp;
static int epfd;
static int base, count;
static struct in_addr addr;
static int* listeners;  // by port - base; -1 when killed
static unsigned long long connections;
// epoll data: a listener is tagged with its index, a connection with its fd, stdin with STDIN_TAG.
#define LISTENER_TAG (1ULL << 40)
#define STDIN_TAG (1ULL << 41)

static void die(const char* what) {
  fprintf(stderr, "health-targets: %s: %s\n", what, strerror(errno));
  exit(1);
}

static int open_listener(int i) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(base + i)), .sin_addr = addr};
  if (bind(fd, (struct sockaddr*)&sa, sizeof sa) != 0) die("bind");
  if (listen(fd, 4096) != 0) die("listen");
  struct epoll_event ev = {.events = EPOLLIN, .data.u64 = LISTENER_TAG | (uint64_t)i};
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl");
  return fd;
}

static long long now_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void on_accept(int i) {
  for (;;) {
    int c = accept4(listeners[i], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) return;  // EAGAIN, or a connection reset while queued
    connections++;
    if (smtp && write(c, SMTP_BANNER, sizeof SMTP_BANNER - 1) < 0) {
      close(c);
      continue;
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = (uint64_t)c};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, c, &ev) != 0) close(c);
  }
}

static void on_conn(int c) {
  char buf[4096];
  ssize_t r = read(c, buf, sizeof buf);
  if (r < 0 && errno == EAGAIN) return;
  if (smtp && r > 0) {
    // One command per read: the checker waits for each reply before it sends the next.
    int quit = r >= 4 && strncasecmp(buf, "QUIT", 4) == 0;
    if (write(c, quit ? SMTP_QUIT : SMTP_HELO, quit ? sizeof SMTP_QUIT - 1 : sizeof SMTP_HELO - 1) < 0 || quit) close(c);
    return;
  }
  // A request (any bytes): answer and close. EOF or an error (a TCP check's reset): just close.
  if (r > 0 && write(c, RESPONSE, sizeof RESPONSE - 1) < 0) { /* the peer is gone */ }
  close(c);
}

static void on_command(char* line) {
  int port;
  if (sscanf(line, "kill %d", &port) == 1) {
    int i = port - base;
    if (i >= 0 && i < count && listeners[i] >= 0) {
      close(listeners[i]);
      listeners[i] = -1;
      printf("{\"killed\":%d,\"t\":%lld}\n", port, now_ms());
    }
  } else if (strncmp(line, "revive", 6) == 0) {
    for (int i = 0; i < count; i++)
      if (listeners[i] < 0) listeners[i] = open_listener(i);
    printf("{\"revived\":true}\n");
  } else if (strncmp(line, "stats", 5) == 0) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long long us = (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
    printf("{\"connections\":%llu,\"cpuUs\":%lld,\"rss\":%ld}\n", connections, us, ru.ru_maxrss * 1024L);
  } else if (strncmp(line, "quit", 4) == 0) {
    exit(0);
  }
  fflush(stdout);
}

static void on_stdin(void) {
  static char acc[4096];
  static size_t len;
  ssize_t r = read(0, acc + len, sizeof acc - 1 - len);
  if (r <= 0) exit(0);  // the bench went away
  len += (size_t)r;
  char* nl;
  while ((nl = memchr(acc, '\n', len)) != NULL) {
    *nl = 0;
    on_command(acc);
    size_t used = (size_t)(nl - acc) + 1;
    memmove(acc, nl + 1, len - used);
    len -= used;
  }
  if (len == sizeof acc - 1) len = 0;
}

int main(int argc, char** argv) {
  if ((argc != 4 && argc != 5) || inet_pton(AF_INET, argv[1], &addr) != 1 || (argc == 5 && strcmp(argv[4], "smtp") != 0)) {
    fprintf(stderr, "usage: health-targets IPV4-ADDRESS BASE N [smtp]\n");
    return 2;
  }
  smtp = argc == 5;
  base = atoi(argv[2]);
  count = atoi(argv[3]);
  struct rlimit rl = {.rlim_cur = 65536, .rlim_max = 65536};
  setrlimit(RLIMIT_NOFILE, &rl);
  epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) die("epoll_create1");
  listeners = calloc((size_t)count, sizeof *listeners);
  for (int i = 0; i < count; i++) listeners[i] = open_listener(i);
  struct epoll_event sev = {.events = EPOLLIN, .data.u64 = STDIN_TAG};
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &sev) != 0) die("epoll_ctl(stdin)");
  printf("{\"ready\":%d}\n", count);
  fflush(stdout);
  struct epoll_event evs[256];
  for (;;) {
    int n = epoll_wait(epfd, evs, 256, -1);
    if (n < 0 && errno != EINTR) die("epoll_wait");
    for (int k = 0; k < n; k++) {
      uint64_t tag = evs[k].data.u64;
      if (tag == STDIN_TAG) on_stdin();
      else if (tag & LISTENER_TAG) {
        int i = (int)(tag & 0xffffffff);
        if (listeners[i] >= 0) on_accept(i);
      } else on_conn((int)tag);
    }
  }
}
