// The schedulers of the native relay: schedulers.ts's, step for step (rr, smooth wrr, lc/wlc with the
// rotating tie-break, sh over weighted slots, mh over the Maglev table JavaScript builds, fo), with the
// same "never one already tried" rule for the retry after a refusal. Their state is per process, as it
// is in JavaScript. Run by the relay thread only.
#include "relay.h"

static int tried(const conn_t* c, double nid) {
  for (int32_t i = 0; i < c->ntried; i++)
    if (c->tried[i] == nid) return 1;
  return 0;
}

static int usable(const conn_t* c, const server_t* b) { return b->weight > 0 && !tried(c, b->nid); }

// FNV-1a over the source address text (schedulers.ts hashSource).
static uint32_t hash_source(const char* s) {
  uint32_t h = 0x811c9dc5u;
  for (; *s != 0; s++) {
    h ^= (uint8_t)*s;
    h *= 0x01000193u;
  }
  return h;
}

server_t* pick(service_t* s, conn_t* c) {
  int32_t n = s->nservers;
  server_t** v = s->servers;
  if (n == 0) return NULL;
  server_t* best = NULL;
  switch (s->mode) {
    case PICK_RR:
      for (int32_t i = 0; i < n; i++) {
        server_t* b = v[(s->rr_next + (uint32_t)i) % (uint32_t)n];
        if (usable(c, b)) {
          s->rr_next = (s->rr_next + (uint32_t)i + 1) % (uint32_t)n;
          return b;
        }
      }
      return NULL;
    case PICK_WRR: {
      double total = 0;
      for (int32_t i = 0; i < n; i++) {
        server_t* b = v[i];
        if (!usable(c, b)) continue;
        b->credit += b->weight;
        total += b->weight;
        if (best == NULL || b->credit > best->credit) best = b;
      }
      if (best != NULL) best->credit -= total;
      return best;
    }
    case PICK_LC:
    case PICK_WLC: {
      double best_load = 0;
      s->lc_rot = (s->lc_rot + 1) % (uint32_t)n;
      for (int32_t i = 0; i < n; i++) {
        server_t* b = v[(s->lc_rot + (uint32_t)i) % (uint32_t)n];
        if (!usable(c, b)) continue;
        double load = s->mode == PICK_WLC ? b->active / b->weight : b->active;
        if (best == NULL || load < best_load) {
          best = b;
          best_load = load;
        }
      }
      return best;
    }
    case PICK_SH: {
      uint64_t total = 0;
      for (int32_t i = 0; i < n; i++)
        if (v[i]->weight > 0) total += (uint64_t)v[i]->weight;
      if (total == 0) return NULL;
      uint64_t slot = hash_source(c->src) % total;
      int32_t start = 0;
      for (int32_t i = 0; i < n; i++) {
        if (v[i]->weight <= 0) continue;
        if (slot < (uint64_t)v[i]->weight) {
          start = i;
          break;
        }
        slot -= (uint64_t)v[i]->weight;
      }
      for (int32_t i = 0; i < n; i++)
        if (usable(c, v[(start + i) % n])) return v[(start + i) % n];
      return NULL;
    }
    case PICK_MH: {
      if (s->nmh == 0) return NULL;
      int32_t start = (int32_t)(hash_source(c->src) % (uint32_t)s->nmh), last = -1;
      for (int32_t i = 0; i < s->nmh; i++) {
        int32_t idx = s->mh[(start + i) % s->nmh];
        if (idx == last) continue;  // a run of one server: it was refused already
        last = idx;
        if (idx >= 0 && idx < n && usable(c, v[idx])) return v[idx];
        if (c->ntried == 0) return NULL;
      }
      return NULL;
    }
    default:  // PICK_FO: the highest weight; ties keep list order
      for (int32_t i = 0; i < n; i++)
        if (usable(c, v[i]) && (best == NULL || v[i]->weight > best->weight)) best = v[i];
      return best;
  }
}

