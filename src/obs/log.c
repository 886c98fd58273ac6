/* log.c - klog text and JSON line writer; see log.h. */
#include "log.h"

#include "../util/strbuf.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int g_verbosity;
static log_format g_format = LOG_TEXT;
static FILE *g_stream;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

void log_set_verbosity(int v) { g_verbosity = v; }
int log_verbosity(void) { return g_verbosity; }
void log_set_format(log_format f) { g_format = f; }
void log_set_stream(FILE *f) { g_stream = f; }

static bool g_muted;
void log_mute(bool on) { g_muted = on; }

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static void append_value(strbuf *sb, const log_field *f, int json) {
  switch (f->type) {
  case LF_STR:
    if (json)
      sb_append_json_str(sb, f->v.s ? f->v.s : "");
    else
      sb_append_go_quoted(sb, f->v.s ? f->v.s : "");
    break;
  case LF_INT: sb_append_int(sb, f->v.i); break;
  case LF_UINT: sb_printf(sb, "%llu", f->v.u); break;
  case LF_FLOAT: sb_append_json_double(sb, f->v.f); break;
  case LF_BOOL: sb_append(sb, f->v.b ? "true" : "false"); break;
  case LF_JSON: sb_append(sb, f->v.s ? f->v.s : "null"); break;
  }
}

/* v in decimal at o, padded on the left with pad to at least width characters; returns the end */
static char *put_uint(char *o, unsigned long v, int width, char pad) {
  char d[24];
  int n = 0;
  do {
    d[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (int i = n; i < width; i++)
    *o++ = pad;
  while (n)
    *o++ = d[--n];
  return o;
}

static void text_header(strbuf *sb, char sev, const char *file, int line) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  /* the local time of the last second seen by this thread: a cycle writes thousands of lines a
   * second, and localtime_r checks the time zone on every call */
  static __thread time_t last_sec = -1;
  static __thread struct tm tm;
  if (tv.tv_sec != last_sec) {
    localtime_r(&tv.tv_sec, &tm);
    last_sec = tv.tv_sec;
  }
  /* "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s:%d] ", written without printf (thousands of lines
   * a cycle) */
  static __thread int pid;
  if (!pid)
    pid = (int)getpid();
  char h[64], *o = h;
  *o++ = sev;
  o = put_uint(o, (unsigned long)tm.tm_mon + 1, 2, '0');
  o = put_uint(o, (unsigned long)tm.tm_mday, 2, '0');
  *o++ = ' ';
  o = put_uint(o, (unsigned long)tm.tm_hour, 2, '0');
  *o++ = ':';
  o = put_uint(o, (unsigned long)tm.tm_min, 2, '0');
  *o++ = ':';
  o = put_uint(o, (unsigned long)tm.tm_sec, 2, '0');
  *o++ = '.';
  o = put_uint(o, (unsigned long)tv.tv_usec, 6, '0');
  *o++ = ' ';
  o = put_uint(o, (unsigned long)pid, 7, ' ');
  *o++ = ' ';
  sb_appendn(sb, h, (size_t)(o - h));
  sb_append(sb, base_name(file));
  o = h;
  *o++ = ':';
  o = put_uint(o, (unsigned long)(line < 0 ? 0 : line), 1, '0');
  *o++ = ']';
  *o++ = ' ';
  sb_appendn(sb, h, (size_t)(o - h));
}

static void json_header(strbuf *sb, int v, const char *file, int line) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  /* Kubernetes' JSON log format: ts in seconds since the epoch, with a fraction */
  sb_printf(sb, "{\"ts\":%lld.%06ld,\"caller\":\"%s:%d\",", (long long)tv.tv_sec, (long)tv.tv_usec,
            base_name(file), line);
  (void)v;
}

/* Lines held by log_hold (g_lock guards them): written when they reach HELD_BYTES, when the
 * first of them is HELD_SECONDS old as a new line comes, and by log_flush and log_release. */
#define HELD_BYTES (64 * 1024)
#define HELD_SECONDS 0.1
static int g_hold;
static strbuf g_held;
static double g_held_since;

static double mono_coarse(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* g_lock held */
static void write_out(const char *buf, size_t len) {
  FILE *out = g_stream ? g_stream : stderr;
  fwrite(buf, 1, len, out);
  fflush(out);
}

/* g_lock held */
static void write_held(void) {
  if (g_held.len)
    write_out(g_held.buf, g_held.len);
  g_held.len = 0;
}

static void flush_line(strbuf *sb) {
  sb_appendc(sb, '\n');
  pthread_mutex_lock(&g_lock);
  if (!g_hold) {
    write_out(sb->buf, sb->len);
  } else {
    double now = mono_coarse();
    if (!g_held.len)
      g_held_since = now;
    sb_appendn(&g_held, sb->buf, sb->len);
    if (g_held.len >= HELD_BYTES || now - g_held_since >= HELD_SECONDS)
      write_held();
  }
  pthread_mutex_unlock(&g_lock);
  sb_free(sb);
}

void log_flush(void) {
  pthread_mutex_lock(&g_lock);
  write_held();
  pthread_mutex_unlock(&g_lock);
}

void log_hold(void) {
  static bool registered;
  pthread_mutex_lock(&g_lock);
  if (!registered) {
    atexit(log_flush); /* an exit() while lines are held still writes them */
    registered = true;
  }
  g_hold++;
  pthread_mutex_unlock(&g_lock);
}

void log_release(void) {
  pthread_mutex_lock(&g_lock);
  if (g_hold && --g_hold == 0) {
    write_held();
    sb_free(&g_held);
  }
  pthread_mutex_unlock(&g_lock);
}

static void append_fields(strbuf *sb, const log_field *fields, size_t n, int json) {
  for (size_t i = 0; i < n; i++) {
    if (json) {
      sb_appendc(sb, ',');
      sb_append_json_str(sb, fields[i].key);
      sb_appendc(sb, ':');
    } else {
      sb_appendc(sb, ' ');
      sb_append(sb, fields[i].key);
      sb_appendc(sb, '=');
    }
    append_value(sb, &fields[i], json);
  }
}

void log_write(char sev, int v, const char *file, int line, const char *msg, const char *err,
               const log_ctx *ctx, const log_field *fields, size_t n) {
  if (g_muted)
    return;
  strbuf sb = {0};
  int json = g_format == LOG_JSON;
  if (json) {
    json_header(&sb, v, file, line);
    sb_append(&sb, "\"msg\":");
    sb_append_json_str(&sb, msg);
    if (sev != 'E')
      sb_printf(&sb, ",\"v\":%d", v);
    if (err) {
      sb_append(&sb, ",\"err\":");
      sb_append_json_str(&sb, err);
    }
  } else {
    text_header(&sb, sev, file, line);
    sb_append_go_quoted(&sb, msg);
    if (err) {
      sb_append(&sb, " err=");
      sb_append_go_quoted(&sb, err);
    }
  }
  if (ctx)
    append_fields(&sb, ctx->fields, ctx->n, json);
  append_fields(&sb, fields, n, json);
  if (json)
    sb_appendc(&sb, '}');
  flush_line(&sb);
}

void log_writef(char sev, int v, const char *file, int line, const char *fmt, ...) {
  if (g_verbosity < v || g_muted)
    return;
  strbuf text = {0};
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&text, fmt, ap);
  va_end(ap);
  strbuf sb = {0};
  if (g_format == LOG_JSON) {
    json_header(&sb, v, file, line);
    sb_append(&sb, "\"msg\":");
    sb_append_json_str(&sb, sb_str(&text));
    sb_printf(&sb, ",\"v\":%d}", v);
  } else {
    text_header(&sb, sev, file, line);
    sb_append(&sb, sb_str(&text));
  }
  sb_free(&text);
  flush_line(&sb);
}
