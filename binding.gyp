{
  "targets": [
    {
      "target_name": "lvsd_net",
      "include_dirs": ["daemon/native"],
      "sources": ["daemon/net/native/vrrp_net.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
    },
    {
      "target_name": "lvsd_probe",
      "include_dirs": ["daemon/native"],
      "sources": ["daemon/health/native/probe_engine.c", "daemon/health/native/icmp_codec.c", "daemon/health/native/smtp_scan.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"],
      "libraries": ["-lpthread"]
    },
    {
      "target_name": "lvsd_relay",
      "include_dirs": ["daemon/native"],
      "sources": ["daemon/dataplane/userspace/native/relay.c", "daemon/dataplane/userspace/native/accept.c", "daemon/dataplane/userspace/native/pick.c", "daemon/dataplane/userspace/native/proxy_header.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"],
      "libraries": ["-lpthread"]
    },
    {
      "target_name": "lvsd_ipvs",
      "include_dirs": ["daemon/native"],
      "sources": ["daemon/ipvs/native/ipvs_dump.c", "daemon/ipvs/native/ipvs_lines.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
    }
  ]
}
