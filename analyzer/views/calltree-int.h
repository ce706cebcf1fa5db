/* calltree-int.h - what the files of the call tree share and nothing else
 * sees (calltree.c builds it; values.c chooses what it counts) */
#ifndef PROFVIEW_CALLTREE_INT_H
#define PROFVIEW_CALLTREE_INT_H

#include "calltree.h"

/* --sample-index: a type's name or index.  0, or -1 with an error. */
int ct_choose_value(struct calltree *t, const char *want);
/* The value a tree weighs by unless told (a time, else a size...). */
void ct_default_value(struct calltree *t);

#endif
