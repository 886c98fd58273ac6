/* flags.c - see flags.h. */
#include "flags.h"

#include "cli.h"

#include "../apimachinery/timeutil.h"
#include "../util/strbuf.h"

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

/* The target's value as pflag's DefValue prints it in --help; "" for a zero value, which
 * pflag shows no default for (unset_text, when the flag has one, says what it means). Strings
 * are not quoted as pflag quotes them: this --help never did, and tools read it (the install
 * manifests' test takes --secure-port's and the lease name's defaults from it). */
static void record_default(flag_def *d) {
  strbuf sb = {0};
  switch (d->kind) {
  case FLAG_BOOL:
    if (*(bool *)d->target)
      sb_append(&sb, "true");
    break;
  case FLAG_STRING: {
    const char *v = *(const char **)d->target;
    if (v && *v)
      sb_append(&sb, v);
    break;
  }
  case FLAG_STRINGS: {
    const flag_strings *list = d->target;
    for (size_t i = 0; i < list->n; i++)
      sb_printf(&sb, "%s%s", i ? "," : "[", list->items[i]);
    if (list->n)
      sb_appendc(&sb, ']');
    break;
  }
  case FLAG_INT:
    if (*(long long *)d->target)
      sb_printf(&sb, "%lld", *(long long *)d->target);
    break;
  case FLAG_FLOAT:
    if (*(double *)d->target != 0)
      sb_append_go_float(&sb, *(double *)d->target);
    break;
  case FLAG_DURATION:
    if (*(int64_t *)d->target)
      duration_format(&sb, *(int64_t *)d->target);
    break;
  }
  if (!sb.len && d->unset_text)
    sb_append(&sb, d->unset_text);
  snprintf(d->defval, sizeof d->defval, "%s", sb_str(&sb));
  sb_free(&sb);
}

int flags_parse(flag_def *defs, int argc, char **argv, int start, const char **positional,
                int max_pos, int *npos, dserr *err) {
  *npos = 0;
  for (flag_def *d = defs; d->name; d++) {
    record_default(d);
    d->seen = false;
  }
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
    const char *value = eq ? eq + 1 : NULL;
    if (is_long) {
      d = (flag_def *)flags_find(defs, name);
    } else {
      d = find_short(defs, name);
      if (!d) /* pflag also accepts -v=3 style for long names of one letter only */
        d = (flag_def *)flags_find(defs, name);
      if (!d && !eq && len > 1) {
        /* kubectl's -ojson, -v3: a one-letter flag with its value attached */
        char letter[2] = {name[0], 0};
        flag_def *s = find_short(defs, letter);
        if (s && s->kind != FLAG_BOOL) {
          d = s;
          value = body + 1;
        }
      }
    }
    if (!d)
      return dserr_set(err, "unknown flag: %s%s", is_long ? "--" : "-", name);
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

static const char *type_name(flag_kind k) {
  switch (k) {
  case FLAG_BOOL: return "";
  case FLAG_STRING: return " string";
  case FLAG_STRINGS: return " string (repeatable)";
  case FLAG_INT: return " int";
  case FLAG_FLOAT: return " float";
  case FLAG_DURATION: return " duration";
  }
  return "";
}

static void left_column(char *buf, size_t cap, const flag_def *d) {
  if (d->shorthand)
    snprintf(buf, cap, "  -%s, --%s%s", d->shorthand, d->name, type_name(d->kind));
  else
    snprintf(buf, cap, "      --%s%s", d->name, type_name(d->kind));
}

/* As pflag's FlagUsages: the help column starts after the longest flag of the table. */
void flags_usage(FILE *out, const flag_def *defs) {
  char left[160];
  int width = 0;
  for (const flag_def *d = defs; d->name; d++) {
    left_column(left, sizeof left, d);
    if ((int)strlen(left) > width)
      width = (int)strlen(left);
  }
  for (const flag_def *d = defs; d->name; d++) {
    left_column(left, sizeof left, d);
    fprintf(out, "%-*s   %s", width, left, d->help);
    if (d->defval[0])
      fprintf(out, " (default %s)", d->defval);
    fputc('\n', out);
  }
}

int flags_parse_command(const char *cmd, flag_def *defs, int argc, char **argv,
                        flags_usage_fn usage, const void *usage_ctx) {
  const char *pos[1];
  int npos;
  return flags_parse_command_args(cmd, defs, argc, argv, usage, usage_ctx, pos, 0, &npos);
}

int flags_parse_command_args(const char *cmd, flag_def *defs, int argc, char **argv,
                             flags_usage_fn usage, const void *usage_ctx, const char **pos,
                             int max_pos, int *npos) {
  dserr err;
  int rc = flags_parse(defs, argc, argv, 2, pos, max_pos, npos, &err);
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
