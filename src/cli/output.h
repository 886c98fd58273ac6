/* output.h - the -o/--output habit every command that prints something shares.
 *
 * text is for people (each command's own layout); json is one JSON document on one line;
 * yaml is that same document as YAML (keys sorted, as kubectl -o yaml prints). A command builds
 * its document once as JSON and output_document prints it in the format asked for, so the two
 * machine formats cannot say different things. */
#ifndef DS_CLI_OUTPUT_H
#define DS_CLI_OUTPUT_H

#include "../util/strbuf.h"

#include <stdbool.h>
#include <stdio.h>

typedef enum { OUTPUT_TEXT, OUTPUT_JSON, OUTPUT_YAML } output_format;

/* Reads an -o value (text, json or yaml). 0, or -1 after printing
 * `<who>: --output: expected text, json or yaml, got "<value>"` to stderr (exit 2). */
int output_parse(const char *who, const char *value, output_format *f);

/* Prints json (one JSON document) to out as JSON (with a newline) or YAML. -1 after printing
 * `<who>: <why>` to stderr when the document does not parse (a bug) or cannot be written. */
int output_document(const char *who, output_format f, const strbuf *json, FILE *out);

#endif
