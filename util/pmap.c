/* pmap.c - a hash map from pointers to pointers (open addressing, Fibonacci hashing). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmap.h"

static size_t
phash(const void *p, size_t mask)
{
	return (size_t)((uintptr_t)p * 0x9E3779B97F4A7C15ull >> 17) & mask;
}

void *
pmap_get(const PMap *m, const void *key)
{
	size_t h;

	if (!m->cap)
		return NULL;
	for (h = phash(key, m->cap - 1); m->k[h]; h = (h + 1) & (m->cap - 1))
		if (m->k[h] == key)
			return m->v[h];
	return NULL;
}

int
pmap_put(PMap *m, const void *key, void *v)
{
	size_t h, i;

	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		const void **nk = calloc(cap, sizeof *nk);
		void **nv = calloc(cap, sizeof *nv);

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -1;
		}
		for (i = 0; i < m->cap; i++)
			if (m->k[i]) {
				for (h = phash(m->k[i], cap - 1); nk[h]; h = (h + 1) & (cap - 1))
					;
				nk[h] = m->k[i];
				nv[h] = m->v[i];
			}
		free(m->k);
		free(m->v);
		m->k = nk;
		m->v = nv;
		m->cap = cap;
	}
	for (h = phash(key, m->cap - 1); m->k[h]; h = (h + 1) & (m->cap - 1))
		if (m->k[h] == key) {
			m->v[h] = v;
			return 0;
		}
	m->k[h] = key;
	m->v[h] = v;
	m->n++;
	return 0;
}

void
pmap_free(PMap *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof *m);
}
