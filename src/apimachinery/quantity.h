/* quantity.h - Kubernetes resource quantities ("100m", "1.5", "512Mi", "2G", "1e3").
 *
 * A quantity is kept as a signed 64-bit count of thousandths ("milli-units"), rounded up,
 * as Kubernetes' Quantity.MilliValue() gives it. Whole units (Quantity.Value(), also rounded
 * up) are derived from it: for positive numbers ceil(ceil(1000q)/1000) = ceil(q). The
 * descheduler compares cpu in millicores and every other resource in whole units. */
#ifndef DS_QUANTITY_H
#define DS_QUANTITY_H

#include "../util/err.h"
#include "../util/strbuf.h"

#include <stdint.h>

/* Parses text into *milli. On error returns -1 with a message naming the text. */
int quantity_parse(const char *text, int64_t *milli, dserr *err);
/* a + b held at INT64_MIN / INT64_MAX instead of overflowing. Sums of requests use it: no
 * real cluster comes near the limits, but a snapshot may say anything and a sum must not
 * be undefined behaviour (upstream adds exact decimals, which cannot overflow). */
int64_t quantity_add(int64_t a, int64_t b);
/* a - b, held likewise. */
int64_t quantity_sub(int64_t a, int64_t b);
/* Whole units, rounded up (Quantity.Value()). */
int64_t quantity_units(int64_t milli);

/* Canonical forms as Kubernetes prints them: a DecimalSI quantity given in milli-units
 * ("1500m", "2", "100k") and a BinarySI quantity given in whole units ("2Gi", "1500"). */
void quantity_format_decimal(strbuf *sb, int64_t milli);
void quantity_format_binary(strbuf *sb, int64_t units);

#endif
