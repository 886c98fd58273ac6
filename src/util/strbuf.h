/* strbuf.h - growable NUL-terminated byte buffer on the heap.
 *
 * Used for building messages, JSON output and HTTP bodies. A zeroed strbuf is empty and
 * valid; sb_free releases it. Allocation failure aborts. */
#ifndef DS_STRBUF_H
#define DS_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct {
  char *buf; /* NUL-terminated when len > 0 or after any append; may be NULL when empty */
  size_t len, cap;
} strbuf;

void sb_append(strbuf *sb, const char *s);
void sb_appendn(strbuf *sb, const char *s, size_t n);
void sb_appendc(strbuf *sb, char c);
void sb_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends v in decimal, as "%lld" writes it (without printf: node log lines write thousands). */
void sb_append_int(strbuf *sb, long long v);
void sb_vprintf(strbuf *sb, const char *fmt, va_list ap);
/* Appends s as a JSON string literal, quotes included. */
void sb_append_json_str(strbuf *sb, const char *s);
/* Appends s quoted as Go's strconv.Quote does (klog's rendering of strings). */
void sb_append_go_quoted(strbuf *sb, const char *s);
/* Appends a double as Go's encoding/json writes a float64: the shortest decimal that reads
 * back as the same value, plain for magnitudes in [1e-6, 1e21), else with an exponent
 * (klog renders float values this way). NaN and infinities become quoted strings. */
void sb_append_json_double(strbuf *sb, double f);
/* Appends a double as Go's strconv.FormatFloat(f, 'f', -1, 64) and fmt's %v of a Prometheus
 * sample value write it: the shortest decimal that reads back as the same value, never with
 * an exponent ("1.5", "100", "0.000001", "1e+21" as "1000000000000000000000"); NaN, +Inf and
 * -Inf as Go spells them. */
void sb_append_go_float(strbuf *sb, double f);
/* The whole file at path as a NUL-terminated heap string (caller frees), its length in *len
 * (the file may hold NUL bytes); NULL (errno set) when it cannot be opened or read. */
char *read_file_text(const char *path, size_t *len);
void sb_clear(strbuf *sb);
void sb_free(strbuf *sb);
/* The contents, never NULL ("" when empty). Borrowed. */
const char *sb_str(const strbuf *sb);
/* Hands the heap buffer to the caller (caller frees) and empties sb. */
char *sb_detach(strbuf *sb);

/* "Did you mean": the edit distance between a and b with ASCII case ignored, where inserting,
 * deleting or replacing a character or swapping two neighbours costs 1 (optimal string
 * alignment, the weights of git's help_unknown_cmd without its prefix bonus). */
size_t str_distance(const char *a, const char *b);
/* The candidate nearest to s when it is near enough to be what s misspells (at most a third
 * of the longer name's length away, and at least one character), else NULL. The first of
 * equally near candidates wins. */
const char *str_nearest(const char *s, const char *const *candidates, size_t n);

#endif
