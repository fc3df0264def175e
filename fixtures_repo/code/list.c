#include <stdlib.h>
#include "list.h"

// Allocate an empty list.
// The caller frees it with list_free.
list *list_new(void)
{
    return calloc(1, sizeof(list));
}

void list_free(list *l)
{
    free(l);
}

static int
compare_values(const void *a, const void *b)
{
    return a < b ? -1 : a > b;
}

#ifdef LIST_DEBUG
static void list_dump(const list *l) {
    (void)l;
}
#else
static void list_dump(const list *l) {}
#endif

static void (*pick(int which))(list *) {
    return which ? list_free : NULL;
}
