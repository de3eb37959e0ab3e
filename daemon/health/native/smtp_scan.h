// SMTP replies for the probe engine's SMTP checks: where the next whole reply ends and its code, by
// the grammar of checkers/smtp-reply.ts (readReply), so the engine sends HELO and QUIT at the moments
// the JavaScript checker would. Pure: the engine keeps the bytes and hands the whole transcript to
// JavaScript, which judges it with the same reader, so verdicts cannot differ.
#ifndef LVSD_SMTP_SCAN_H
#define LVSD_SMTP_SCAN_H
#include <stddef.h>

enum { SMTP_MORE = 0, SMTP_REPLY = 1, SMTP_GARBAGE = -1 };

// Looks at b[0..n): SMTP_REPLY with *code and *consumed (bytes up to the end of its last line),
// SMTP_MORE when the last line has not arrived, SMTP_GARBAGE where readReply throws.
int smtp_scan_reply(const char* b, size_t n, int* code, size_t* consumed);

#endif
