// lvsd_ipvs's two halves (ipvs_dump.c: the table read; ipvs_lines.c: each service as one line, and the compare).
#ifndef LVSD_IPVS_H
#define LVSD_IPVS_H
#include <node_api.h>

#include "napi_check.h"

#define NLA_TYPE_MASK_ 0x3fff

/** fingerprints(buf): one line per service of a dumpTable buffer, joined by "\n". */
napi_value Fingerprints(napi_env env, napi_callback_info info);
/** match(buf, lines): for each service, the index of the first equal desired line, -1 for none. */
napi_value Match(napi_env env, napi_callback_info info);

#endif
