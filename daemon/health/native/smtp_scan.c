// See smtp_scan.h. Each line ends at '\n' with one '\r' before it dropped; it must be three digits
// (the first 2..5), then the end, a space (the reply's last line) or '-' (more lines follow), and its
// text may hold no other '\r' (readReply's /^([2-5][0-9]{2})([ -]|$)(.*)$/ on the latin1 line: '.'
// does not match '\r'). Every line of one reply has the same code.
#include "smtp_scan.h"
#include <string.h>

int smtp_scan_reply(const char* b, size_t n, int* code, size_t* consumed) {
  size_t at = 0;
  int first = -1;
  for (;;) {
    const char* nl = memchr(b + at, '\n', n - at);
    if (nl == NULL) return SMTP_MORE;
    size_t end = (size_t)(nl - b);
    size_t len = end - at;
    if (len > 0 && b[at + len - 1] == '\r') len--;
    const char* l = b + at;
    at = end + 1;
    if (len < 3 || l[0] < '2' || l[0] > '5' || l[1] < '0' || l[1] > '9' || l[2] < '0' || l[2] > '9') return SMTP_GARBAGE;
    if (len > 3 && l[3] != ' ' && l[3] != '-') return SMTP_GARBAGE;
    if (len > 4 && memchr(l + 4, '\r', len - 4) != NULL) return SMTP_GARBAGE;
    int c = (l[0] - '0') * 100 + (l[1] - '0') * 10 + (l[2] - '0');
    if (first >= 0 && c != first) return SMTP_GARBAGE;
    first = c;
    if (len == 3 || l[3] == ' ') {
      *code = c;
      *consumed = at;
      return SMTP_REPLY;
    }
  }
}
