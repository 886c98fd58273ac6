/* log.h - klog-compatible logging.
 *
 * Upstream's runbooks and greps read klog text lines:
 *   I1130 01:43:36.123456   12345 file.c:123] "Evicted pod" pod="ns/p" node="n1"
 * so this logger writes the same shape: severity letter, local date and time with
 * microseconds, the pid right-aligned in 7 columns, the source location, the Go-quoted
 * message, then key=value pairs (strings Go-quoted, numbers bare, maps as JSON). With
 * --logging-format=json it writes one JSON object per line instead.
 *
 * The verbosity and format are the process's only logging state (set once by cli/). */
#ifndef DS_LOG_H
#define DS_LOG_H

#include <stddef.h>

typedef enum { LF_STR, LF_INT, LF_UINT, LF_FLOAT, LF_BOOL, LF_JSON } log_field_type;

typedef struct {
  const char *key;
  log_field_type type;
  union {
    const char *s; /* LF_STR, and LF_JSON (pre-rendered JSON text) */
    long long i;
    unsigned long long u;
    double f;
    int b;
  } v;
} log_field;

#define LSTR(k, x) ((log_field){(k), LF_STR, {.s = (x)}})
#define LINT(k, x) ((log_field){(k), LF_INT, {.i = (long long)(x)}})
#define LUINT(k, x) ((log_field){(k), LF_UINT, {.u = (unsigned long long)(x)}})
#define LFLOAT(k, x) ((log_field){(k), LF_FLOAT, {.f = (x)}})
#define LBOOL(k, x) ((log_field){(k), LF_BOOL, {.b = (x)}})
#define LJSON(k, x) ((log_field){(k), LF_JSON, {.s = (x)}})

/* Keys bound to a logger (klog's WithValues): printed after err= and before call keys. */
typedef struct {
  const log_field *fields;
  size_t n;
} log_ctx;

typedef enum { LOG_TEXT, LOG_JSON } log_format;

void log_set_verbosity(int v);
int log_verbosity(void);
void log_set_format(log_format f);
/* Redirects output (tests); NULL restores stderr. */
#include <stdio.h>
void log_set_stream(FILE *f);
/* While on, nothing is written: a read made only to look at something (simulate reads its
 * policy once before the snapshot), whose messages the real read will give. */
#include <stdbool.h>
void log_mute(bool on);

/* Between log_hold and log_release (they nest), lines are collected and written in large
 * writes: when 64 KiB are held, when the first held line is 0.1 s old as another comes, at
 * log_flush, at log_release and at exit(). A cycle's decisions write thousands of lines; one
 * write each would cost a tenth of the cycle. Whoever holds calls log_flush before waiting on
 * anything (the API client does before every request), so no line waits behind a slow call. */
void log_hold(void);
void log_release(void);
void log_flush(void);

/* sev: 'I', 'W', 'E'. err may be NULL. */
void log_write(char sev, int v, const char *file, int line, const char *msg, const char *err,
               const log_ctx *ctx, const log_field *fields, size_t n);
/* Unstructured line (klog's Infof): the text is printed raw. */
void log_writef(char sev, int v, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define LOG_ON(v) (log_verbosity() >= (v))

/* The first array element is a placeholder so the field list may be empty. */
#define LOG_EMIT_(sev, v, ctx, err, msg, ...)                                                      \
  do {                                                                                             \
    if (LOG_ON(v)) {                                                                               \
      const log_field f_[] = {{0}, ##__VA_ARGS__};                                                 \
      log_write((sev), (v), __FILE__, __LINE__, (msg), (err), (ctx), f_ + 1,                       \
                sizeof f_ / sizeof f_[0] - 1);                                                     \
    }                                                                                              \
  } while (0)

/* LOGV(verbosity, ctx-or-NULL, "message", LSTR("pod", p), ...) */
#define LOGV(v, ctx, msg, ...) LOG_EMIT_('I', (v), (ctx), NULL, (msg), ##__VA_ARGS__)
/* LOGE(ctx, "message", err-text-or-NULL, fields...) : always printed */
#define LOGE(ctx, msg, err, ...) LOG_EMIT_('E', 0, (ctx), (err), (msg), ##__VA_ARGS__)
#define LOGW(ctx, msg, ...) LOG_EMIT_('W', 0, (ctx), NULL, (msg), ##__VA_ARGS__)
#define LOGF(v, ...) log_writef('I', (v), __FILE__, __LINE__, __VA_ARGS__)

#endif
