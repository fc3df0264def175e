#ifndef LIST_H
#define LIST_H

#include <stddef.h>

#define LIST_EMPTY 0
#define LIST_FIRST(l) ((l)->head)

/* A node of a singly linked list. */
typedef struct list_node {
    struct list_node *next;
    void *value;
} list_node;

typedef struct {
    list_node *head;
    size_t len;
} list;

typedef int (*list_cmp)(const void *a, const void *b);

union list_value {
    int i;
    double d;
};

enum list_flags { LIST_SORTED = 1, LIST_UNIQUE = 2 };

struct list_stats {
    size_t count;
    struct list_stats_inner {
        int depth;
    } inner;
};

list *list_new(void);
void list_free(list *l);

#endif
