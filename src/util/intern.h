/* intern.h - string interning.
 *
 * A cluster repeats the same few thousand strings (namespaces, node names, label keys and
 * values, owner kinds) across hundreds of thousands of objects. Interning stores each once;
 * interned strings compare equal by pointer. The table owns the strings; they live as long
 * as the table. */
#ifndef DS_INTERN_H
#define DS_INTERN_H

#include <stddef.h>

typedef struct intern_table intern_table;

intern_table *intern_new(void);
void intern_free(intern_table *t);
/* Returns the one stored copy of (s, len). Borrowed from the table. */
const char *intern_n(intern_table *t, const char *s, size_t len);
const char *intern(intern_table *t, const char *s);
/* Makes s, a string the caller keeps alive for the table's life (a static one), the table's
 * copy of its text: interning that text returns s itself, so a caller holding s finds it by
 * pointer. Call it on an empty table (a front asks its parent, so seed the parent). */
void intern_seed(intern_table *t, const char *s);
/* A table for one thread in front of `parent`, which other threads intern into too (each
 * through a front of its own): a string it has not seen is interned into the parent under
 * the parent's lock, and the parent's copy is returned and remembered. Its strings are thus
 * the parent's (equal by pointer to what the parent and the other fronts return). Free the
 * fronts before the parent; while fronts are in use, nothing interns into the parent
 * directly. */
intern_table *intern_new_front(intern_table *parent);
size_t intern_count(const intern_table *t);
/* Memory the table holds: its strings and its slots (for the model's size). */
size_t intern_bytes(const intern_table *t);
/* Of that, the strings' bytes alone (they grow with each new string; the slots by doubling). */
size_t intern_text_bytes(const intern_table *t);

#endif
