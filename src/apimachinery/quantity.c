/* quantity.c - parse and print Kubernetes quantities; see quantity.h.
 *
 * The grammar is Kubernetes': <sign><digits>[.<digits>]<suffix>, suffix one of "", the
 * decimal SI prefixes n u m k M G T P E, the binary ones Ki Mi Gi Ti Pi Ei, or an exponent
 * e<int> / E<int>. The value is computed exactly in 128-bit integers (up to 18 significant
 * digits) and rounded up to milli-units. */
#include "quantity.h"

#include <ctype.h>
#include <string.h>

typedef __int128 i128;

static const i128 I64_MAX = INT64_MAX;

/* Multiplies while the magnitude stays far below the 128-bit limit. */
static int mul_checked(i128 *v, i128 by) {
  i128 mag = *v >= 0 ? *v : -*v;
  if (mag > ((i128)1 << 125) / by)
    return -1;
  *v *= by;
  return 0;
}

int quantity_parse(const char *text, int64_t *milli, dserr *err) {
  const char *p = text;
  int neg = 0;
  if (*p == '+' || *p == '-')
    neg = *p++ == '-';
  i128 mant = 0;
  int sig = 0, frac = 0, digits = 0, seen_dot = 0;
  for (; *p == '.' || isdigit((unsigned char)*p); p++) {
    if (*p == '.') {
      if (seen_dot)
        return dserr_set(err, "invalid quantity \"%s\": more than one decimal point", text);
      seen_dot = 1;
      continue;
    }
    digits++;
    if (mant == 0 && *p == '0') {
      if (seen_dot)
        frac++;
      continue;
    }
    if (sig >= 18) {
      /* only zeros may follow beyond the precision we keep */
      if (*p != '0')
        return dserr_set(err, "invalid quantity \"%s\": more than 18 significant digits", text);
      if (!seen_dot && mul_checked(&mant, 10) < 0)
        goto too_large;
      continue;
    }
    mant = mant * 10 + (*p - '0');
    sig++;
    if (seen_dot)
      frac++;
  }
  if (digits == 0)
    return dserr_set(err, "invalid quantity \"%s\": expected a number such as 100m, 1.5, 512Mi or 2G",
                     text);
  int exp10 = -frac, exp2 = 0;
  const char *s = p;
  if (*s == 0) {
  } else if (s[1] == 'i' && s[2] == 0 && strchr("KMGTPE", s[0])) {
    exp2 = 10 * (int)(strchr("KMGTPE", s[0]) - "KMGTPE" + 1);
  } else if (s[1] == 0 && strchr("numkMGTPE", s[0])) {
    static const int e[] = {-9, -6, -3, 3, 6, 9, 12, 15, 18};
    exp10 += e[strchr("numkMGTPE", s[0]) - "numkMGTPE"];
  } else if (s[0] == 'e' || s[0] == 'E') {
    const char *q = s + 1;
    int eneg = 0;
    if (*q == '+' || *q == '-')
      eneg = *q++ == '-';
    if (!isdigit((unsigned char)*q))
      return dserr_set(err, "invalid quantity \"%s\": exponent needs digits", text);
    int e = 0;
    for (; isdigit((unsigned char)*q); q++) {
      e = e * 10 + (*q - '0');
      if (e > 100)
        return dserr_set(err, "invalid quantity \"%s\": exponent out of range", text);
    }
    if (*q)
      return dserr_set(err, "invalid quantity \"%s\": unexpected \"%s\" after the exponent", text, q);
    exp10 += eneg ? -e : e;
  } else {
    return dserr_set(err,
                     "invalid quantity \"%s\": unknown suffix \"%s\" (expected one of n u m k M G T "
                     "P E, Ki Mi Gi Ti Pi Ei, or an exponent such as e3)",
                     text, s);
  }
  /* value = mant * 10^exp10 * 2^exp2; milli = ceil(value * 1000) */
  exp10 += 3;
  i128 v = mant;
  if (mul_checked(&v, (i128)1 << exp2) < 0)
    goto too_large;
  for (; exp10 > 0; exp10--)
    if (mul_checked(&v, 10) < 0)
      goto too_large;
  /* one digit at a time: nested ceilings (floors) of /10 equal one ceiling (floor) of /10^k,
   * and the magnitude only shrinks */
  for (; exp10 < 0 && v; exp10++) {
    i128 q = v / 10;
    if (q * 10 != v && !neg)
      q++; /* toward +infinity once the sign is applied */
    v = q;
  }
  if (v > I64_MAX)
    goto too_large;
  *milli = neg ? -(int64_t)v : (int64_t)v;
  return 0;
too_large:
  return dserr_set(err, "invalid quantity \"%s\": too large", text);
}

int64_t quantity_add(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    return b > 0 ? INT64_MAX : INT64_MIN;
  return sum;
}

int64_t quantity_sub(int64_t a, int64_t b) {
  int64_t diff;
  if (__builtin_sub_overflow(a, b, &diff))
    return b < 0 ? INT64_MAX : INT64_MIN;
  return diff;
}

int64_t quantity_units(int64_t milli) {
  if (milli >= 0)
    return milli / 1000 + (milli % 1000 != 0);
  return milli / 1000; /* C division truncates toward zero = ceiling for negatives */
}

void quantity_format_decimal(strbuf *sb, int64_t milli) {
  if (milli == 0) {
    sb_append(sb, "0");
    return;
  }
  if (milli % 1000 != 0) {
    sb_append_int(sb, milli);
    sb_appendc(sb, 'm');
    return;
  }
  int64_t v = milli / 1000;
  int idx = 0;
  while (v % 1000 == 0 && idx < 6) {
    v /= 1000;
    idx++;
  }
  static const char *suffix[] = {"", "k", "M", "G", "T", "P", "E"};
  sb_append_int(sb, v);
  sb_append(sb, suffix[idx]);
}

void quantity_format_binary(strbuf *sb, int64_t units) {
  if (units > -1024 && units < 1024) {
    quantity_format_decimal(sb, units * 1000);
    return;
  }
  int idx = 0;
  while (units % 1024 == 0 && idx < 6) {
    units /= 1024;
    idx++;
  }
  static const char *suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  sb_append_int(sb, units);
  sb_append(sb, suffix[idx]);
}
