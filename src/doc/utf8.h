/* utf8.h - strict UTF-8, as Go and yajl read it: no overlong forms, no encoded surrogates,
 * nothing above U+10FFFF. Shared by the JSON reader (doc/doc_fast.c) and the protobuf reader
 * (doc/doc_pb.c). */
#ifndef DS_UTF8_H
#define DS_UTF8_H

/* Length of the UTF-8 sequence at p, whose lead byte is >= 0x80: 2 to 4, 0 when it is not a
 * valid one, -1 when it is cut by end (a valid start that needs more bytes). */
static inline int utf8_seq_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  int n;
  unsigned lo = 0x80, hi = 0xBF; /* the second byte's range */
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0)
      lo = 0xA0;
    else if (c == 0xED)
      hi = 0x9F; /* no encoded surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0)
      lo = 0x90;
    else if (c == 0xF4)
      hi = 0x8F;
  } else
    return 0;
  if (end - p < n)
    return -1;
  if (p[1] < lo || p[1] > hi)
    return 0;
  for (int i = 2; i < n; i++)
    if ((p[i] & 0xC0) != 0x80)
      return 0;
  return n;
}

#endif
