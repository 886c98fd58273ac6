/* timeutil.c - see timeutil.h. */
#include "timeutil.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* days from 1970-01-01 to y-m-d (proleptic Gregorian), Howard Hinnant's algorithm */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
  return m == 2 && leap ? 29 : days[m - 1];
}

static int digits(const char **p, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (!isdigit((unsigned char)(*p)[i]))
      return -1;
    v = v * 10 + ((*p)[i] - '0');
  }
  *p += n;
  *out = v;
  return 0;
}

int time_parse_rfc3339(const char *text, int64_t *sec, int32_t *nsec, dserr *err) {
  const char *p = text;
  int Y, M, D, h, mi, s;
  if (digits(&p, 4, &Y) || *p++ != '-' || digits(&p, 2, &M) || *p++ != '-' || digits(&p, 2, &D) ||
      (*p != 'T' && *p != 't' && *p != ' ') || (p++, digits(&p, 2, &h)) || *p++ != ':' ||
      digits(&p, 2, &mi) || *p++ != ':' || digits(&p, 2, &s))
    goto bad;
  if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || mi > 59 || s > 60)
    goto bad;
  /* as Go's time.Parse: February 30th is an error, not March 2nd */
  if (D > days_in_month(Y, M))
    return dserr_set(err, "invalid time \"%s\": day out of range", text);
  int32_t ns = 0;
  if (*p == '.') {
    p++;
    int n = 0;
    while (isdigit((unsigned char)*p)) {
      if (n < 9)
        ns = ns * 10 + (*p - '0');
      n++;
      p++;
    }
    if (n == 0)
      goto bad;
    for (; n < 9; n++)
      ns *= 10;
  }
  int64_t off = 0;
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int sign = *p++ == '-' ? -1 : 1, oh, om;
    if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om))
      goto bad;
    off = sign * (oh * 3600 + om * 60);
  } else {
    goto bad;
  }
  if (*p)
    goto bad;
  *sec = days_from_civil(Y, M, D) * 86400 + h * 3600 + mi * 60 + s - off;
  if (nsec)
    *nsec = ns;
  return 0;
bad:
  return dserr_set(err, "invalid time \"%s\": expected RFC 3339, e.g. 2026-01-02T15:04:05Z", text);
}

/* the UTC calendar date and time of day of sec (Howard Hinnant's civil_from_days) */
typedef struct {
  int64_t y, m, d, rem;
} civil;

static civil civil_of(int64_t sec) {
  int64_t days = sec >= 0 ? sec / 86400 : (sec - 86399) / 86400;
  civil c;
  c.rem = sec - days * 86400;
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  c.y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  c.d = doy - (153 * mp + 2) / 5 + 1;
  c.m = mp + (mp < 10 ? 3 : -9);
  c.y += c.m <= 2;
  return c;
}

void time_format_rfc3339(strbuf *sb, int64_t sec) {
  civil c = civil_of(sec);
  sb_printf(sb, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", (long long)c.y, (long long)c.m,
            (long long)c.d, (long long)(c.rem / 3600), (long long)(c.rem / 60 % 60),
            (long long)(c.rem % 60));
}

int64_t time_year(int64_t sec) { return civil_of(sec).y; }

int64_t time_from_civil(int64_t y, int month, int day, int h, int mi, int s) {
  return days_from_civil(y, month, day) * 86400 + h * 3600 + mi * 60 + s;
}

void time_format_micro_now(char *buf, size_t cap) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  struct tm tm;
  gmtime_r(&tv.tv_sec, &tm);
  snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec);
}

double time_mono_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Go's leadingInt: the digits at *p, or -1 when they exceed 2^63. */
static int leading_int(const char **p, uint64_t *out) {
  uint64_t x = 0;
  for (; isdigit((unsigned char)**p); (*p)++) {
    if (x > (1ULL << 63) / 10)
      return -1;
    x = x * 10 + (uint64_t)(**p - '0');
    if (x > 1ULL << 63)
      return -1;
  }
  *out = x;
  return 0;
}

/* Go's leadingFraction: the digits at *p as long as they fit, and 10^(digits kept). */
static uint64_t leading_fraction(const char **p, double *scale) {
  uint64_t x = 0;
  bool overflow = false;
  *scale = 1;
  for (; isdigit((unsigned char)**p); (*p)++) {
    if (overflow)
      continue;
    if (x > ((1ULL << 63) - 1) / 10) {
      overflow = true;
      continue;
    }
    uint64_t y = x * 10 + (uint64_t)(**p - '0');
    if (y > 1ULL << 63) {
      overflow = true;
      continue;
    }
    x = y;
    *scale *= 10;
  }
  return x;
}

/* Go's time.ParseDuration, in the same integer arithmetic so the same text gives the same
 * nanoseconds ("2.026ms" is 2026000, not one less as a float sum gives). */
int duration_parse(const char *text, int64_t *nanos, dserr *err) {
  static const struct {
    const char *u;
    uint64_t ns;
  } units[] = {
      {"ns", 1},       {"us", 1000},         {"\xc2\xb5s", 1000},   {"\xce\xbcs", 1000},
      {"ms", 1000000}, {"s", 1000000000ULL}, {"m", 60000000000ULL}, {"h", 3600000000000ULL}};
  const char *p = text;
  bool neg = false;
  if (*p == '+' || *p == '-')
    neg = *p++ == '-';
  if (strcmp(p, "0") == 0) {
    *nanos = 0;
    return 0;
  }
  if (!*p)
    goto bad;
  uint64_t d = 0;
  while (*p) {
    if (*p != '.' && !isdigit((unsigned char)*p))
      goto bad;
    const char *start = p;
    uint64_t v = 0, f = 0;
    double scale = 1;
    if (leading_int(&p, &v) < 0)
      goto bad;
    bool pre = p != start, post = false;
    if (*p == '.') {
      const char *fs = ++p;
      f = leading_fraction(&p, &scale);
      post = p != fs;
    }
    if (!pre && !post)
      goto bad;
    size_t n = 0;
    while (p[n] && p[n] != '.' && !isdigit((unsigned char)p[n]))
      n++;
    uint64_t unit = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
      if (strlen(units[i].u) == n && strncmp(p, units[i].u, n) == 0)
        unit = units[i].ns;
    if (!unit)
      goto bad;
    p += n;
    if (v > (1ULL << 63) / unit)
      goto bad;
    v *= unit;
    if (f > 0) {
      /* as Go: a float is needed to be nanosecond accurate for fractions of hours */
      v += (uint64_t)((double)f * ((double)unit / scale));
      if (v > 1ULL << 63)
        goto bad;
    }
    d += v;
    if (d > 1ULL << 63)
      goto bad;
  }
  if (neg) {
    *nanos = d == 1ULL << 63 ? INT64_MIN : -(int64_t)d;
    return 0;
  }
  if (d > (1ULL << 63) - 1)
    goto bad;
  *nanos = (int64_t)d;
  return 0;
bad:
  return dserr_set(
      err, "invalid duration \"%s\": expected a Go duration such as 300ms, 5m or 1h30m", text);
}

/* Appends v / 10^prec with trailing zeros of the fraction removed. */
static void fmt_frac(strbuf *sb, uint64_t v, int prec) {
  uint64_t pow = 1;
  for (int i = 0; i < prec; i++)
    pow *= 10;
  sb_printf(sb, "%llu", (unsigned long long)(v / pow));
  uint64_t frac = v % pow;
  if (!frac)
    return;
  char buf[24];
  snprintf(buf, sizeof buf, "%0*llu", prec, (unsigned long long)frac);
  size_t n = strlen(buf);
  while (n && buf[n - 1] == '0')
    buf[--n] = 0;
  sb_printf(sb, ".%s", buf);
}

void duration_format(strbuf *sb, int64_t nanos) {
  uint64_t u = nanos < 0 ? (uint64_t)(-(nanos + 1)) + 1 : (uint64_t)nanos;
  if (nanos < 0)
    sb_appendc(sb, '-');
  if (u == 0) {
    sb_append(sb, "0s");
    return;
  }
  if (u < 1000000000ULL) {
    if (u < 1000ULL) {
      sb_printf(sb, "%lluns", (unsigned long long)u);
    } else if (u < 1000000ULL) {
      fmt_frac(sb, u, 3);
      sb_append(sb, "\xc2\xb5s");
    } else {
      fmt_frac(sb, u, 6);
      sb_append(sb, "ms");
    }
    return;
  }
  uint64_t secs = u / 1000000000ULL, frac = u % 1000000000ULL;
  uint64_t h = secs / 3600, m = secs / 60 % 60, s = secs % 60;
  if (h)
    sb_printf(sb, "%lluh", (unsigned long long)h);
  if (h || m)
    sb_printf(sb, "%llum", (unsigned long long)m);
  fmt_frac(sb, s * 1000000000ULL + frac, 9);
  sb_appendc(sb, 's');
}
