// Shared by lvsd's N-API addons (binding.gyp gives every target this folder as an include directory).
#ifndef LVSD_NAPI_CHECK_H
#define LVSD_NAPI_CHECK_H
#include <node_api.h>

// An N-API call that fails throws in JavaScript and leaves the calling function (which returns napi_value).
#define CHECK(call)                                                \
  do {                                                             \
    if ((call) != napi_ok) {                                       \
      napi_throw_error(env, NULL, "N-API call failed: " #call);   \
      return NULL;                                                 \
    }                                                              \
  } while (0)

#endif
