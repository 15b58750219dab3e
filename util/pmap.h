/* pmap.h - a hash map from pointers to pointers, for memoizing walks over hash-consed graphs. */
#ifndef TESSEL_PMAP_H
#define TESSEL_PMAP_H

#include <stddef.h>

/* Open addressing, doubling at half full. A zeroed PMap is empty; NULL
** values mean absent, so they cannot be stored. */
typedef struct PMap {
	const void **k;
	void **v;
	size_t n, cap;
} PMap;

void *pmap_get(const PMap *m, const void *key);
/* 0, or -1 when memory runs out (m is unchanged then). */
int pmap_put(PMap *m, const void *key, void *v);
void pmap_free(PMap *m);

#endif
