{
  "targets": [
    {
      "target_name": "lvsd_net",
      "sources": ["daemon/net/native/vrrp_net.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
    }
  ]
}
