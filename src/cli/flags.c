/* flags.c - see flags.h. */
#include "flags.h"

#include "cli.h"

#include "../apimachinery/timeutil.h"

#include <stdlib.h>
#include <string.h>

static void normalize(char *s) {
  for (; *s; s++)
    if (*s == '_')
      *s = '-';
}

const flag_def *flags_find(const flag_def *defs, const char *name) {
  for (; defs->name; defs++)
    if (strcmp(defs->name, name) == 0)
      return defs;
  return NULL;
}

static flag_def *find_short(flag_def *defs, const char *s) {
  for (; defs->name; defs++)
    if (defs->shorthand && strcmp(defs->shorthand, s) == 0)
      return defs;
  return NULL;
}

static int set_value(flag_def *d, const char *v, dserr *err) {
  char *end;
  switch (d->kind) {
  case FLAG_BOOL:
    if (go_parse_bool(v, d->target) < 0)
      return dserr_set(err, "invalid argument \"%s\" for \"--%s\" flag: expected true or false", v,
                       d->name);
    break;
  case FLAG_STRING:
    *(const char **)d->target = v;
    break;
  case FLAG_STRINGS: {
    flag_strings *list = d->target;
    if (list->n == FLAG_STRINGS_MAX)
      return dserr_set(err, "\"--%s\" flag: at most %d values", d->name, FLAG_STRINGS_MAX);
    list->items[list->n++] = v;
    break;
  }
  case FLAG_INT: {
    long long x = strtoll(v, &end, 10);
    if (!*v || *end)
      return dserr_set(err, "invalid argument \"%s\" for \"--%s\" flag: expected an integer", v,
                       d->name);
    *(long long *)d->target = x;
    break;
  }
  case FLAG_FLOAT: {
    double x = strtod(v, &end);
    if (!*v || *end)
      return dserr_set(err, "invalid argument \"%s\" for \"--%s\" flag: expected a number", v,
                       d->name);
    *(double *)d->target = x;
    break;
  }
  case FLAG_DURATION: {
    dserr e;
    if (duration_parse(v, d->target, &e) < 0)
      return dserr_set(err, "invalid argument \"%s\" for \"--%s\" flag: %s", v, d->name, e.msg);
    break;
  }
  }
  d->seen = true;
  return 0;
}

int flags_parse(flag_def *defs, int argc, char **argv, int start, const char **positional,
                int max_pos, int *npos, dserr *err) {
  *npos = 0;
  for (int i = start; i < argc; i++) {
    char *arg = argv[i];
    if (strcmp(arg, "--") == 0) {
      for (i++; i < argc; i++) {
        if (*npos >= max_pos)
          return dserr_set(err, "unexpected argument \"%s\"", argv[i]);
        positional[(*npos)++] = argv[i];
      }
      break;
    }
    if (arg[0] != '-' || arg[1] == 0) {
      if (*npos >= max_pos)
        return dserr_set(err, "unexpected argument \"%s\"", arg);
      positional[(*npos)++] = arg;
      continue;
    }
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
      return 1;
    bool is_long = arg[1] == '-';
    char name[128];
    const char *body = arg + (is_long ? 2 : 1);
    const char *eq = strchr(body, '=');
    size_t len = eq ? (size_t)(eq - body) : strlen(body);
    if (len >= sizeof name)
      return dserr_set(err, "unknown flag: %s", arg);
    memcpy(name, body, len);
    name[len] = 0;
    normalize(name);
    flag_def *d = NULL;
    if (is_long) {
      d = (flag_def *)flags_find(defs, name);
    } else {
      d = find_short(defs, name);
      if (!d) /* pflag also accepts -v=3 style for long names of one letter only */
        d = (flag_def *)flags_find(defs, name);
    }
    if (!d)
      return dserr_set(err, "unknown flag: %s%s", is_long ? "--" : "-", name);
    const char *value = eq ? eq + 1 : NULL;
    if (!value) {
      if (d->kind == FLAG_BOOL) {
        value = "true";
      } else {
        if (i + 1 >= argc)
          return dserr_set(err, "flag needs an argument: %s%s", is_long ? "--" : "-", name);
        value = argv[++i];
      }
    }
    if (set_value(d, value, err) < 0)
      return -1;
  }
  return 0;
}

void flags_usage(FILE *out, const flag_def *defs) {
  for (; defs->name; defs++) {
    char left[96];
    const char *type = defs->kind == FLAG_BOOL     ? ""
                       : defs->kind == FLAG_STRING ? " string"
                       : defs->kind == FLAG_STRINGS ? " string (repeatable)"
                       : defs->kind == FLAG_INT    ? " int"
                       : defs->kind == FLAG_FLOAT  ? " float"
                                                   : " duration";
    if (defs->shorthand)
      snprintf(left, sizeof left, "  -%s, --%s%s", defs->shorthand, defs->name, type);
    else
      snprintf(left, sizeof left, "      --%s%s", defs->name, type);
    fprintf(out, "%-44s %s", left, defs->help);
    if (defs->default_text)
      fprintf(out, " (default %s)", defs->default_text);
    fputc('\n', out);
  }
}

int flags_parse_command(const char *cmd, flag_def *defs, int argc, char **argv,
                        flags_usage_fn usage, const void *usage_ctx) {
  const char *pos[1];
  int npos;
  dserr err;
  int rc = flags_parse(defs, argc, argv, 2, pos, 0, &npos, &err);
  if (rc == 1) {
    usage(stdout, usage_ctx, defs);
    return 0;
  }
  if (rc < 0) {
    fprintf(stderr, "descheduler %s: %s\n", cmd, err.msg);
    return EXIT_CONFIG;
  }
  return FLAGS_RUN;
}
