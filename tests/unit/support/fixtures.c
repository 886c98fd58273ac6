/* fixtures.c - see fixtures.h. */
#include "fixtures.h"

#include "support.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------- policy ---------- */

const char *plugin_policy_(policy_opts o) {
  static char bufs[4][8192];
  static unsigned next;
  char *buf = bufs[next++ % 4];
  char evictor[1024] = "", plugin[4096] = "", vmsafety[1024] = "";
  if (o.evictor_args)
    snprintf(evictor, sizeof evictor, "    args: %s\n", o.evictor_args);
  if (o.args)
    snprintf(plugin, sizeof plugin, "    args: %s\n", o.args);
  if (o.vmsafety)
    snprintf(vmsafety, sizeof vmsafety, "  - name: VMSafety\n    args: %s\n", o.vmsafety);
  int n = snprintf(buf, sizeof bufs[0],
                   "apiVersion: descheduler/v1alpha2\n"
                   "kind: DeschedulerPolicy\n"
                   "%s"
                   "profiles:\n"
                   "- name: p\n"
                   "  pluginConfig:\n"
                   "  - name: DefaultEvictor\n"
                   "%s"
                   "%s"
                   "  - name: %s\n"
                   "%s"
                   "  plugins:\n"
                   "    %s:\n"
                   "      enabled: [%s]\n",
                   o.top ? o.top : "", evictor, vmsafety, o.plugin, plugin,
                   o.point ? o.point : "deschedule", o.plugin);
  if (n < 0 || (size_t)n >= sizeof bufs[0] || strlen(evictor) + 1 >= sizeof evictor ||
      strlen(plugin) + 1 >= sizeof plugin || strlen(vmsafety) + 1 >= sizeof vmsafety)
    fail_msg("policy text too long");
  return buf;
}

/* ---------- cluster ---------- */

static char cluster_buf[1 << 17];
static size_t cluster_len;
static int cluster_items;
static const char *cap_cpu, *cap_memory, *cap_pods;

static void vput(const char *fmt, va_list ap) {
  size_t room = sizeof cluster_buf - cluster_len;
  int n = vsnprintf(cluster_buf + cluster_len, room, fmt, ap);
  if (n < 0 || (size_t)n + 3 > room) /* keep room for "]}" */
    fail_msg("cluster text longer than %zu bytes", sizeof cluster_buf);
  cluster_len += (size_t)n;
}

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vput(fmt, ap);
  va_end(ap);
}

/* n bytes of s as a JSON string */
static void put_str(const char *s, size_t n) {
  put("\"");
  for (size_t i = 0; i < n; i++)
    put(s[i] == '"' || s[i] == '\\' ? "\\%c" : "%c", s[i]);
  put("\"");
}

/* Writes each item of a comma-separated list with one(), between open and close. */
static void put_each(const char *list, const char *open, const char *close,
                     void (*one)(const char *item, size_t len)) {
  put("%s", open);
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    one(p, len);
    p += len;
    if (*p == ',' && *++p)
      put(",");
  }
  put("%s", close);
}

/* "k=v" in s[0..len) as two JSON strings with `between` between them ("k": no value, "") */
static void put_kv(const char *s, size_t len, const char *between) {
  size_t key = strcspn(s, "=");
  if (key > len)
    key = len;
  size_t value = key + (key < len);
  put_str(s, key);
  put("%s", between);
  put_str(s + value, len - value);
}

/* "k=v" as an object member */
static void put_member(const char *kv, size_t len) {
  put_kv(kv, len, ":");
}

/* "key=value:Effect" as a taint */
static void put_taint(const char *t, size_t len) {
  size_t colon = len;
  while (colon > 0 && t[colon - 1] != ':')
    colon--;
  if (!colon)
    fail_msg("taint \"%.*s\" has no :Effect", (int)len, t);
  put("{\"key\":");
  put_kv(t, colon - 1, ",\"value\":");
  put(",\"effect\":");
  put_str(t + colon, len - colon);
  put("}");
}

/* "Kind/name" as an owner reference */
static void put_owner(const char *o, size_t len) {
  size_t slash = strcspn(o, "/");
  if (slash >= len)
    fail_msg("owner \"%.*s\" is not Kind/name", (int)len, o);
  put("{\"kind\":");
  put_str(o, slash);
  put(",\"name\":");
  put_str(o + slash + 1, len - slash - 1);
  put(",\"uid\":\"uid-%.*s\"}", (int)(len - slash - 1), o + slash + 1);
}

/* "k=v,k2=v2" as a JSON object */
static void put_map(const char *kv) {
  put_each(kv, "{", "}", put_member);
}

static void item_begin(void) {
  if (cluster_items++)
    put(",");
}

void cluster_begin(void) {
  cluster_len = 0;
  cluster_items = 0;
  cluster_capacity("8", "8Gi", "110");
  put("{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[");
}

const char *cluster_end(void) {
  memcpy(cluster_buf + cluster_len, "]}", 3); /* not kept: more items may follow */
  return cluster_buf;
}

void cluster_capacity(const char *cpu, const char *memory, const char *pods) {
  cap_cpu = cpu;
  cap_memory = memory;
  cap_pods = pods;
}

void cluster_item(const char *fmt, ...) {
  item_begin();
  va_list ap;
  va_start(ap, fmt);
  vput(fmt, ap);
  va_end(ap);
}

void cluster_node_(const char *name, node_opts o) {
  item_begin();
  put("{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":");
  put_str(name, strlen(name));
  if (o.labels) {
    put(",\"labels\":");
    put_map(o.labels);
  }
  if (o.meta)
    put(",%s", o.meta);
  put("},\"spec\":{");
  if (o.unschedulable)
    put("\"unschedulable\":true%s", o.taints ? "," : "");
  if (o.taints) {
    put("\"taints\":");
    put_each(o.taints, "[", "]", put_taint);
  }
  put("},\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"%s\",\"pods\":\"%s\"}",
      o.cpu ? o.cpu : cap_cpu, o.memory ? o.memory : cap_memory, o.pods ? o.pods : cap_pods);
  if (o.ready)
    put(",\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]", o.ready);
  put("}}");
}

/* a container status: name, restartCount if any, state if any */
static void put_status(const char *name, int restarts, const char *state) {
  put("[{\"name\":\"%s\"", name);
  if (restarts)
    put(",\"restartCount\":%d", restarts);
  if (state)
    put(",\"state\":%s", state);
  put("}]");
}

void cluster_pod_(const char *name, const char *node, pod_opts o) {
  const char *ns = o.ns ? o.ns : "ns";
  item_begin();
  put("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":");
  put_str(name, strlen(name));
  put(",\"namespace\":");
  put_str(ns, strlen(ns));
  if (!o.uid)
    put(",\"uid\":\"uid-%s-%s\"", ns, name);
  else if (*o.uid)
    put(",\"uid\":\"%s\"", o.uid);
  if (o.labels) {
    put(",\"labels\":");
    put_map(o.labels);
  }
  if (o.annotations) {
    put(",\"annotations\":");
    put_map(o.annotations);
  }
  const char *owner = o.owner ? o.owner : "ReplicaSet/rs";
  if (*owner) {
    put(",\"ownerReferences\":");
    put_each(owner, "[", "]", put_owner);
  }
  if (o.created)
    put(",\"creationTimestamp\":\"%s\"", o.created);
  if (o.deleted)
    put(",\"deletionTimestamp\":\"%s\"", o.deleted);
  if (o.meta)
    put(",%s", o.meta);

  put("},\"spec\":{");
  if (node) {
    put("\"nodeName\":");
    put_str(node, strlen(node));
    put(",");
  }
  if (o.priority)
    put("\"priority\":%s,", o.priority);
  if (o.node_selector) {
    put("\"nodeSelector\":");
    put_map(o.node_selector);
    put(",");
  }
  if (o.containers) {
    put("\"containers\":%s", o.containers);
  } else {
    put("\"containers\":[{\"name\":\"c\"");
    if (o.image)
      put(",\"image\":\"%s\"", o.image);
    if (o.cpu || o.memory)
      put(",\"resources\":{\"requests\":{%s%s%s%s%s%s%s}}", o.cpu ? "\"cpu\":\"" : "",
          o.cpu ? o.cpu : "", o.cpu ? "\"" : "", o.cpu && o.memory ? "," : "",
          o.memory ? "\"memory\":\"" : "", o.memory ? o.memory : "", o.memory ? "\"" : "");
    put("}]");
  }
  if (o.spec)
    put(",%s", o.spec);

  put("},\"status\":{\"phase\":\"%s\"", o.phase ? o.phase : "Running");
  if (o.reason)
    put(",\"reason\":\"%s\"", o.reason);
  if (o.state || o.restarts) {
    put(",\"containerStatuses\":");
    put_status("c", o.restarts, o.state);
  }
  if (o.init_state || o.init_restarts) {
    put(",\"initContainerStatuses\":");
    put_status("i", o.init_restarts, o.init_state);
  }
  if (o.status)
    put(",%s", o.status);
  put("}}");
}
