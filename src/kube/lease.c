/* lease.c - see lease.h. */
#include "lease.h"

#include "../obs/log.h"
#include "../doc/doc.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int64_t lease_monotonic_ns(void) {
  struct timespec ts;
#ifdef CLOCK_BOOTTIME
  clock_gettime(CLOCK_BOOTTIME, &ts);
#else
  clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void random_uuid(char *buf, size_t cap) {
  unsigned char b[16] = {0};
  int fd = open("/dev/urandom", O_RDONLY);
  if (fd >= 0) {
    if (read(fd, b, sizeof b) != (ssize_t)sizeof b)
      memset(b, 0, sizeof b);
    close(fd);
  }
  b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
  b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
  snprintf(buf, cap, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
           b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
           b[15]);
}

void lease_init(lease_elector *le, kube_client *c, const char *ns, const char *name,
                int64_t lease_duration_ns, int64_t renew_deadline_ns, int64_t retry_period_ns) {
  memset(le, 0, sizeof *le);
  le->client = c;
  snprintf(le->ns, sizeof le->ns, "%s", ns);
  snprintf(le->name, sizeof le->name, "%s", name);
  char host[256] = "unknown", uuid[40];
  gethostname(host, sizeof host - 1);
  random_uuid(uuid, sizeof uuid);
  snprintf(le->identity, sizeof le->identity, "%s_%s", host, uuid);
  le->lease_duration_s = lease_duration_ns / 1000000000LL;
  if (le->lease_duration_s < 1)
    le->lease_duration_s = 1;
  le->renew_deadline_ns = renew_deadline_ns;
  le->retry_period_ns = retry_period_ns;
  LOGF(3, "Assigned unique lease holder id: %s", le->identity);
}

static void lease_path(const lease_elector *le, strbuf *sb, bool item) {
  sb_printf(sb, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", le->ns);
  if (item)
    sb_printf(sb, "/%s", le->name);
}

/* The Lease body for holder (may be ""), keeping acquireTime and transitions when given. */
static void lease_body(const lease_elector *le, strbuf *sb, const char *rv, const char *holder,
                       int64_t duration, const char *acquire, long transitions) {
  char now[64];
  time_format_micro_now(now, sizeof now);
  sb_append(sb, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":");
  sb_append_json_str(sb, le->name);
  sb_append(sb, ",\"namespace\":");
  sb_append_json_str(sb, le->ns);
  if (rv) {
    sb_append(sb, ",\"resourceVersion\":");
    sb_append_json_str(sb, rv);
  }
  sb_append(sb, "},\"spec\":{\"holderIdentity\":");
  sb_append_json_str(sb, holder);
  sb_printf(sb, ",\"leaseDurationSeconds\":%lld,\"acquireTime\":\"%s\",\"renewTime\":\"%s\","
                "\"leaseTransitions\":%ld}}",
            (long long)duration, acquire ? acquire : now, now, transitions);
}

static int send(lease_elector *le, const char *method, bool item, const char *body, long *status,
                dserr *err) {
  strbuf path = {0};
  lease_path(le, &path, item);
  kube_response r = {0};
  int rc = kube_request(le->client, method, sb_str(&path), NULL, body, &r, err);
  if (rc == 0) {
    *status = r.status;
    if (r.status >= 300 && r.status != 409) {
      char msg[512], reason[128];
      kube_status_text(&r, msg, sizeof msg, reason, sizeof reason);
      rc = dserr_set(err, "%s %s: HTTP %ld: %s", method, sb_str(&path), r.status, msg);
    }
  }
  kube_response_free(&r);
  sb_free(&path);
  return rc;
}

/* Creates (POST) or replaces (PUT, with rv) the lease naming us as holder. 1 when written,
 * 0 on a conflict (another replica wrote first), -1 with err. */
static int claim(lease_elector *le, const char *rv, const char *acquire, long transitions,
                 dserr *err) {
  strbuf body = {0};
  lease_body(le, &body, rv, le->identity, le->lease_duration_s, acquire, transitions);
  long status = 0;
  /* the others start counting leaseDuration when they see this write, which is after now */
  int64_t sent = lease_monotonic_ns();
  int rc = send(le, rv ? "PUT" : "POST", rv != NULL, sb_str(&body), &status, err);
  sb_free(&body);
  if (rc < 0)
    return -1;
  if (status == 409)
    return 0;
  __atomic_store_n(&le->last_renewed, sent, __ATOMIC_RELEASE);
  __atomic_store_n(&le->leading, true, __ATOMIC_RELEASE);
  return 1;
}

int lease_try(lease_elector *le, dserr *err) {
  strbuf path = {0};
  lease_path(le, &path, true);
  kube_response r = {0};
  int rc = kube_request(le->client, "GET", sb_str(&path), NULL, NULL, &r, err);
  sb_free(&path);
  if (rc < 0)
    return -1;
  long status = r.status;
  if (status == 404) {
    kube_response_free(&r);
    return claim(le, NULL, NULL, 0, err);
  }
  if (status != 200) {
    char msg[512], reason[128];
    kube_status_text(&r, msg, sizeof msg, reason, sizeof reason);
    kube_response_free(&r);
    return dserr_set(err, "GET lease %s/%s: HTTP %ld: %s", le->ns, le->name, status, msg);
  }
  arena *a = arena_new(8192);
  doc_node *root;
  if (doc_parse_json(a, "lease", r.body, r.len, &root, err) < 0) {
    kube_response_free(&r);
    arena_free(a);
    return -1;
  }
  kube_response_free(&r);
  const doc_node *spec = doc_get(root, "spec");
  const char *holder = doc_str(doc_get(spec, "holderIdentity"));
  const char *renew = doc_str(doc_get(spec, "renewTime"));
  const char *acquire = doc_str(doc_get(spec, "acquireTime"));
  const char *rv = doc_str(doc_path(root, "metadata", "resourceVersion", NULL));
  const doc_node *dur = doc_get(spec, "leaseDurationSeconds");
  const doc_node *tr = doc_get(spec, "leaseTransitions");
  int64_t duration_s = dur && dur->type == DOC_INT ? dur->v.i : le->lease_duration_s;
  long transitions = tr && tr->type == DOC_INT ? (long)tr->v.i : 0;
  holder = holder ? holder : "";
  int64_t now = lease_monotonic_ns();
  if (strcmp(holder, le->observed_holder) || strcmp(renew ? renew : "", le->observed_renew)) {
    if (*holder && strcmp(holder, le->identity) && strcmp(holder, le->observed_holder))
      LOGF(1, "New leader elected: %s", holder);
    snprintf(le->observed_holder, sizeof le->observed_holder, "%s", holder);
    snprintf(le->observed_renew, sizeof le->observed_renew, "%s", renew ? renew : "");
    le->observed_at = now;
  }
  bool mine = strcmp(holder, le->identity) == 0;
  if (*holder && !mine && now - le->observed_at < duration_s * 1000000000LL) {
    arena_free(a);
    __atomic_store_n(&le->leading, false, __ATOMIC_RELEASE);
    return 0;
  }
  /* a replace without a resourceVersion would not be a compare-and-swap */
  rc = rv ? claim(le, rv, mine ? acquire : NULL, mine ? transitions : transitions + 1, err)
          : dserr_set(err, "lease %s/%s has no resourceVersion", le->ns, le->name);
  arena_free(a);
  return rc;
}

void lease_release(lease_elector *le) {
  if (!__atomic_load_n(&le->leading, __ATOMIC_ACQUIRE))
    return;
  strbuf path = {0};
  lease_path(le, &path, true);
  kube_response r = {0};
  dserr err;
  if (kube_request(le->client, "GET", sb_str(&path), NULL, NULL, &r, &err) == 0 && r.status == 200) {
    arena *a = arena_new(8192);
    doc_node *root;
    if (doc_parse_json(a, "lease", r.body, r.len, &root, &err) == 0) {
      const char *rv = doc_str(doc_path(root, "metadata", "resourceVersion", NULL));
      const char *holder = doc_str(doc_path(root, "spec", "holderIdentity", NULL));
      if (holder && !strcmp(holder, le->identity)) {
        strbuf body = {0};
        lease_body(le, &body, rv, "", 1, NULL, 0);
        long status;
        if (send(le, "PUT", true, sb_str(&body), &status, &err) < 0)
          LOGE(NULL, "Failed to release the leader lease", err.msg);
        sb_free(&body);
      }
    }
    arena_free(a);
  }
  kube_response_free(&r);
  sb_free(&path);
  __atomic_store_n(&le->leading, false, __ATOMIC_RELEASE);
}

bool lease_held(const lease_elector *le) {
  return __atomic_load_n(&le->leading, __ATOMIC_ACQUIRE) &&
         lease_monotonic_ns() - __atomic_load_n(&le->last_renewed, __ATOMIC_ACQUIRE) <
             le->renew_deadline_ns;
}
