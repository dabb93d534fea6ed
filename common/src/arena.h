/* The per-solve arena: every solver takes its workspace from it, so no iteration loop allocates. */
#ifndef LCPKIT_ARENA_H
#define LCPKIT_ARENA_H

#include "lcpkit/base.h"

/* A per-solve bump arena made of blocks that never move; reset keeps the blocks for the next solve. */
typedef struct lk__arena_block {
	struct lk__arena_block *next;
	size_t size, used;
	/* data follows, 64-byte aligned */
} lk__arena_block;

typedef struct lk__arena {
	lk__arena_block *head;
} lk__arena;

void *lk__arena_alloc(lk__arena *a, size_t bytes); /* 64-byte aligned, uninitialised; NULL if no memory */
void lk__arena_reset(lk__arena *a);
/* lk__arena_reset for an arena that owns its blocks (not a carved one), once per use (a solve): where the
 * last use took more than one block, they are replaced by one that holds what they held and a quarter more,
 * so that the uses of a problem that grows step by step do not leave a new block behind at every step. */
void lk__arena_recycle(lk__arena *a);
void lk__arena_free(lk__arena *a);

/* A sub-arena carved out of `parent` once, before an iteration loop: lk__arena_reset(sub) then hands the
 * same memory to every Krylov call inside the loop, so the loop allocates nothing. Should a request exceed
 * `bytes`, the sub-arena grows by blocks of its own, which lk__arena_carve_release frees. */
lk_status lk__arena_carve(lk__arena *parent, size_t bytes, lk__arena *sub);
void lk__arena_carve_release(lk__arena *sub);

#endif
