/* strbuf.c - growable string buffer; see strbuf.h. */
#include "strbuf.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sb_grow(strbuf *sb, size_t extra) {
  size_t need = sb->len + extra + 1;
  if (need <= sb->cap)
    return;
  size_t cap = sb->cap ? sb->cap : 64;
  while (cap < need)
    cap *= 2;
  char *p = realloc(sb->buf, cap);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", cap);
    abort();
  }
  sb->buf = p;
  sb->cap = cap;
}

void sb_appendn(strbuf *sb, const char *s, size_t n) {
  sb_grow(sb, n);
  memcpy(sb->buf + sb->len, s, n);
  sb->len += n;
  sb->buf[sb->len] = 0;
}

void sb_append(strbuf *sb, const char *s) {
  sb_appendn(sb, s, strlen(s));
}

void sb_append_int(strbuf *sb, long long v) {
  char buf[24], *e = buf + sizeof buf, *p = e;
  /* in unsigned arithmetic, so that LLONG_MIN's magnitude is representable */
  unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
  do
    *--p = (char)('0' + u % 10);
  while (u /= 10);
  if (v < 0)
    *--p = '-';
  sb_appendn(sb, p, (size_t)(e - p));
}

void sb_appendc(strbuf *sb, char c) {
  sb_appendn(sb, &c, 1);
}

void sb_vprintf(strbuf *sb, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n <= 0)
    return;
  sb_grow(sb, (size_t)n);
  vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
  sb->len += (size_t)n;
}

void sb_printf(strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(sb, fmt, ap);
  va_end(ap);
}

void sb_append_json_str(strbuf *sb, const char *s) {
  sb_appendc(sb, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    /* a run of bytes written as they are, in one append (log lines are mostly such runs) */
    size_t run = 0;
    while (p[run] >= 0x20 && p[run] != '"' && p[run] != '\\')
      run++;
    if (run) {
      sb_appendn(sb, (const char *)p, run);
      p += run - 1;
      continue;
    }
    switch (*p) {
    case '"': sb_append(sb, "\\\""); break;
    case '\\': sb_append(sb, "\\\\"); break;
    case '\n': sb_append(sb, "\\n"); break;
    case '\r': sb_append(sb, "\\r"); break;
    case '\t': sb_append(sb, "\\t"); break;
    default:
      if (*p < 0x20)
        sb_printf(sb, "\\u%04x", *p);
      else
        sb_appendc(sb, (char)*p);
    }
  }
  sb_appendc(sb, '"');
}

/* Decodes one UTF-8 sequence; returns its length, or 0 if invalid. */
static int utf8_decode(const unsigned char *p, uint32_t *cp) {
  if (p[0] < 0x80) {
    *cp = p[0];
    return 1;
  }
  int n = (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
  if (!n)
    return 0;
  uint32_t v = p[0] & (0x7F >> n);
  for (int i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80)
      return 0;
    v = (v << 6) | (p[i] & 0x3F);
  }
  if ((n == 2 && v < 0x80) || (n == 3 && v < 0x800) || (n == 4 && v < 0x10000) || v > 0x10FFFF ||
      (v >= 0xD800 && v <= 0xDFFF))
    return 0;
  *cp = v;
  return n;
}

void sb_append_go_quoted(strbuf *sb, const char *s) {
  sb_appendc(sb, '"');
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    /* a run of printable ASCII other than the two escaped, in one append */
    size_t run = 0;
    while (p[run] >= 0x20 && p[run] < 0x7F && p[run] != '"' && p[run] != '\\')
      run++;
    if (run) {
      sb_appendn(sb, (const char *)p, run);
      p += run;
      continue;
    }
    uint32_t cp;
    int n = utf8_decode(p, &cp);
    if (n == 0) {
      sb_printf(sb, "\\x%02x", *p);
      p++;
      continue;
    }
    if (n > 1) {
      /* printable non-ASCII passes through; Go escapes only non-printables here */
      if (cp == 0xFEFF || (cp >= 0x80 && cp < 0xA0))
        sb_printf(sb, "\\u%04x", cp);
      else
        sb_appendn(sb, (const char *)p, (size_t)n);
      p += n;
      continue;
    }
    switch (cp) {
    case '"': sb_append(sb, "\\\""); break;
    case '\\': sb_append(sb, "\\\\"); break;
    case '\a': sb_append(sb, "\\a"); break;
    case '\b': sb_append(sb, "\\b"); break;
    case '\f': sb_append(sb, "\\f"); break;
    case '\n': sb_append(sb, "\\n"); break;
    case '\r': sb_append(sb, "\\r"); break;
    case '\t': sb_append(sb, "\\t"); break;
    case '\v': sb_append(sb, "\\v"); break;
    default:
      if (cp < 0x20 || cp == 0x7F)
        sb_printf(sb, "\\x%02x", cp);
      else
        sb_appendc(sb, (char)cp);
    }
    p++;
  }
  sb_appendc(sb, '"');
}

/* prints f at prec into buf (*printed: the precision buf holds) and tells whether it reads
 * back as f */
static bool reads_back(char *buf, size_t size, const char *fmt, int prec, double f, int *printed) {
  snprintf(buf, size, fmt, prec, f);
  *printed = prec;
  return strtod(buf, NULL) == f;
}

/* f printed with fmt ("%.*g" or "%.*e") at the smallest precision in [lo, hi] that reads back
 * as f (hi always does). Away from a power of two the rounding interval of f is symmetric, and
 * the nearest decimal with one more digit is never farther from f than the one before it, so
 * once a precision reads back every greater one does: the smallest is found by trying lo,
 * lo + 2, lo + 6, lo + 14, ... and then halving the last gap (short numbers in about as many
 * printings as before, long ones in 6 to 8 instead of up to 17). At a power of two the interval
 * is narrower below f, so every precision is tried in turn. */
static void shortest_round_trip(char *buf, size_t size, const char *fmt, int lo, int hi, double f) {
  int exp, printed = -1;
  if (fabs(frexp(f, &exp)) == 0.5) {
    for (; lo < hi; lo++)
      if (reads_back(buf, size, fmt, lo, f, &printed))
        return;
  } else {
    /* the smallest is in [lo, hi]: widen the step until a precision reads back */
    for (int step = 1; lo < hi; step *= 2) {
      int p = lo + step - 1 < hi ? lo + step - 1 : hi;
      if (reads_back(buf, size, fmt, p, f, &printed)) {
        hi = p;
        break;
      }
      lo = p + 1;
    }
    while (lo < hi) {
      int mid = lo + (hi - lo) / 2;
      if (reads_back(buf, size, fmt, mid, f, &printed))
        hi = mid;
      else
        lo = mid + 1;
    }
  }
  if (printed != lo)
    snprintf(buf, size, fmt, lo, f);
}

void sb_append_json_double(strbuf *sb, double f) {
  if (isnan(f) || isinf(f)) {
    sb_append(sb, isnan(f) ? "\"NaN\"" : f > 0 ? "\"+Inf\"" : "\"-Inf\"");
    return;
  }
  char buf[64];
  shortest_round_trip(buf, sizeof buf, "%.*g", 1, 17, f);
  if (strchr(buf, 'e') && fabs(f) >= 1e-6 && fabs(f) < 1e21) {
    char plain[400];
    for (int dec = 0; dec <= 340; dec++) {
      snprintf(plain, sizeof plain, "%.*f", dec, f);
      if (strtod(plain, NULL) == f)
        break;
    }
    sb_append(sb, plain);
    return;
  }
  sb_append(sb, buf);
}

void sb_append_go_float(strbuf *sb, double f) {
  if (isnan(f) || isinf(f)) {
    sb_append(sb, isnan(f) ? "NaN" : f > 0 ? "+Inf" : "-Inf");
    return;
  }
  /* shortest round-tripping digits, then written out without an exponent */
  char buf[64];
  shortest_round_trip(buf, sizeof buf, "%.*e", 0, 16, f);
  const char *p = buf;
  if (*p == '-') {
    sb_appendc(sb, '-');
    p++;
  }
  char digits[32];
  size_t nd = 0;
  for (; *p && *p != 'e'; p++)
    if (*p != '.')
      digits[nd++] = *p;
  int exp = *p == 'e' ? atoi(p + 1) : 0;
  while (nd > 1 && digits[nd - 1] == '0')
    nd--;
  if (nd == 1 && digits[0] == '0') {
    sb_appendc(sb, '0');
    return;
  }
  if (exp >= 0) {
    for (int i = 0; i <= exp; i++)
      sb_appendc(sb, (size_t)i < nd ? digits[i] : '0');
    if ((size_t)exp + 1 < nd) {
      sb_appendc(sb, '.');
      sb_appendn(sb, digits + exp + 1, nd - (size_t)exp - 1);
    }
  } else {
    sb_append(sb, "0.");
    for (int i = 0; i < -exp - 1; i++)
      sb_appendc(sb, '0');
    sb_appendn(sb, digits, nd);
  }
}

void sb_clear(strbuf *sb) {
  sb->len = 0;
  if (sb->buf)
    sb->buf[0] = 0;
}

void sb_free(strbuf *sb) {
  free(sb->buf);
  sb->buf = NULL;
  sb->len = sb->cap = 0;
}

const char *sb_str(const strbuf *sb) {
  return sb->buf ? sb->buf : "";
}

char *sb_detach(strbuf *sb) {
  char *p = sb->buf;
  if (!p) {
    p = malloc(1);
    if (!p)
      abort();
    p[0] = 0;
  }
  sb->buf = NULL;
  sb->len = sb->cap = 0;
  return p;
}

char *read_file_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  strbuf sb = {0};
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    sb_appendn(&sb, buf, n);
  int bad = ferror(f);
  int saved = errno;
  fclose(f);
  if (bad) {
    sb_free(&sb);
    errno = saved ? saved : EIO;
    return NULL;
  }
  *len = sb.len;
  sb_appendc(&sb, 0);
  return sb_detach(&sb);
}

static unsigned char lower(char c) {
  return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : (unsigned char)c;
}

size_t str_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  /* three rows of the table: the swap of two neighbours looks two rows back */
  size_t *row = malloc(3 * (lb + 1) * sizeof *row);
  if (!row)
    abort();
  size_t *prev2 = row, *prev = row + lb + 1, *cur = row + 2 * (lb + 1);
  for (size_t j = 0; j <= lb; j++)
    prev[j] = j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t cost = lower(a[i - 1]) != lower(b[j - 1]);
      size_t best = prev[j - 1] + cost;
      if (prev[j] + 1 < best)
        best = prev[j] + 1;
      if (cur[j - 1] + 1 < best)
        best = cur[j - 1] + 1;
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]) && prev2[j - 2] + 1 < best)
        best = prev2[j - 2] + 1;
      cur[j] = best;
    }
    size_t *t = prev2;
    prev2 = prev;
    prev = cur;
    cur = t;
  }
  size_t d = prev[lb];
  free(row);
  return d;
}

const char *str_nearest(const char *s, const char *const *candidates, size_t n) {
  const char *best = NULL;
  size_t best_d = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    size_t d = str_distance(s, candidates[i]);
    size_t longer = strlen(s) > strlen(candidates[i]) ? strlen(s) : strlen(candidates[i]);
    size_t limit = longer / 3 ? longer / 3 : 1;
    if (d <= limit && d < best_d) {
      best = candidates[i];
      best_d = d;
    }
  }
  return best;
}
