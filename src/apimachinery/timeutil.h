/* timeutil.h - RFC 3339 timestamps and Go-style durations.
 *
 * Kubernetes writes times as RFC 3339 ("2026-11-30T01:43:36Z"); flags and policy fields use
 * Go durations ("5m", "1h30m", "300ms"). Times are kept as seconds since the epoch (UTC)
 * plus nanoseconds where it matters. */
#ifndef DS_TIMEUTIL_H
#define DS_TIMEUTIL_H

#include "../util/err.h"
#include "../util/strbuf.h"

#include <stddef.h>
#include <stdint.h>

/* Parses RFC 3339 with optional fraction and a Z or +hh:mm offset. */
int time_parse_rfc3339(const char *text, int64_t *sec, int32_t *nsec, dserr *err);
/* Formats UTC seconds as "2006-01-02T15:04:05Z". */
void time_format_rfc3339(strbuf *sb, int64_t sec);
/* The UTC year of sec. */
int64_t time_year(int64_t sec);
/* Seconds since the epoch of a UTC date and time (proleptic Gregorian; no range checks). */
int64_t time_from_civil(int64_t y, int month, int day, int h, int mi, int s);
/* The current time as Kubernetes' MicroTime: "2006-01-02T15:04:05.000000Z". */
void time_format_micro_now(char *buf, size_t cap);
/* Seconds on the monotonic clock (for measuring how long something took). */
double time_mono_seconds(void);
/* Parses a Go duration ("1h2m3.5s", "300ms", "0") into nanoseconds. */
int duration_parse(const char *text, int64_t *nanos, dserr *err);
/* Formats nanoseconds as Go's Duration.String() ("5m0s", "1h0m0s", "1.5s", "0s"). */
void duration_format(strbuf *sb, int64_t nanos);

#endif
