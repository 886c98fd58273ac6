/* fuzz_quantity.c - libFuzzer target: quantity_parse on any text, and the printers on what it
 * accepts. A printed quantity must parse back to the same value, unless it has more than the
 * 18 significant digits the parser keeps by design (quantity.h). */
#include "../../src/apimachinery/quantity.h"
#include "fuzz_common.h"

static int significant_digits(const char *s) {
  int n = 0, leading = 1;
  for (; *s; s++)
    if (*s >= '0' && *s <= '9' && !(leading && *s == '0'))
      n++, leading = 0;
  return n;
}

static void check_round_trip(const char *printed, int64_t milli) {
  if (significant_digits(printed) > 18)
    return;
  int64_t back = 0;
  dserr err = {{0}};
  if (quantity_parse(printed, &back, &err) < 0 || back != milli) {
    fprintf(stderr, "quantity %lld printed as \"%s\" reads back as %lld (%s)\n", (long long)milli,
            printed, (long long)back, err.msg);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  int64_t milli = 0;
  dserr err = {{0}};
  int rc = quantity_parse(text, &milli, &err);
  fuzz_require_error(rc, &err, "quantity_parse");
  if (rc == 0) {
    (void)quantity_units(milli);
    strbuf sb = {0};
    quantity_format_decimal(&sb, milli);
    check_round_trip(sb.buf, milli);
    sb_free(&sb);
    /* binary form of the whole units, when they fit in milli-units again */
    int64_t units = quantity_units(milli);
    if (units > INT64_MIN / 1000 && units < INT64_MAX / 1000) {
      strbuf bb = {0};
      quantity_format_binary(&bb, units);
      check_round_trip(bb.buf, units * 1000);
      sb_free(&bb);
    }
  }
  free(text);
  return 0;
}
