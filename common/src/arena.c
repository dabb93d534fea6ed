/* The per-solve arena: blocks that never move, reset between solves, and sub-arenas carved out once before an
 * iteration loop. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>

#define ALIGN ((size_t)64)
#define HEADER ((sizeof(lk__arena_block) + ALIGN - 1) / ALIGN * ALIGN)
/* the smallest block made: one per solve holds the small problems' scratch */
#define MIN_BLOCK ((size_t)1 << 20)

/* A block of at least `size` bytes (and MIN_BLOCK) of data, nothing used, or NULL. */
static lk__arena_block *new_block(size_t size)
{
	size = size > MIN_BLOCK ? size : MIN_BLOCK;
	if (size > SIZE_MAX - HEADER - ALIGN)
		return NULL;
	lk__arena_block *b = aligned_alloc(ALIGN, (HEADER + size + ALIGN - 1) / ALIGN * ALIGN);
	if (b) {
		b->size = size;
		b->used = 0;
		b->next = NULL;
	}
	return b;
}

void *lk__arena_alloc(lk__arena *a, size_t bytes)
{
	bytes = (bytes + ALIGN - 1) / ALIGN * ALIGN;
	if (bytes == 0)
		bytes = ALIGN;
	for (lk__arena_block *b = a->head; b; b = b->next) {
		if (b->size - b->used >= bytes) {
			void *ptr = (char *)b + HEADER + b->used;
			b->used += bytes;
			return ptr;
		}
	}
	lk__arena_block *b = new_block(bytes);
	if (!b)
		return NULL;
	b->used = bytes;
	b->next = a->head;
	a->head = b;
	return (char *)b + HEADER;
}

void lk__arena_reset(lk__arena *a)
{
	for (lk__arena_block *b = a->head; b; b = b->next)
		b->used = 0;
}

void lk__arena_recycle(lk__arena *a)
{
	/* A request that fits no block gets a block of its own size: a problem a little larger at each solve then
	 * fitted none of the blocks its smaller solves had made, and the arena kept a new block at every solve
	 * (a settling pool on two threads, whose order's scratch is a few large arrays, grew without bound). One
	 * block of the whole demand serves the next solve of about the same size. */
	size_t used = 0;
	for (const lk__arena_block *b = a->head; b; b = b->next)
		used += b->used;
	lk__arena_block *one = a->head && a->head->next && used > 0 ? new_block(used + used / 4) : NULL;
	if (one) {
		lk__arena_free(a);
		a->head = one;
	}
	lk__arena_reset(a);
}

void lk__arena_free(lk__arena *a)
{
	lk__arena_block *b = a->head;
	while (b) {
		lk__arena_block *n = b->next;
		free(b);
		b = n;
	}
	a->head = NULL;
}

/* The carved block is laid out exactly like the parent's own blocks (header, then 64-byte aligned data), so
 * lk__arena_alloc and lk__arena_reset work on it unchanged. */
lk_status lk__arena_carve(lk__arena *parent, size_t bytes, lk__arena *sub)
{
	bytes = (bytes + ALIGN - 1) / ALIGN * ALIGN;
	sub->head = NULL;
	if (bytes > SIZE_MAX - HEADER)
		return LK_ERR_NO_MEMORY;
	lk__arena_block *b = lk__arena_alloc(parent, HEADER + bytes);
	if (!b)
		return LK_ERR_NO_MEMORY;
	b->next = NULL;
	b->size = bytes;
	b->used = 0;
	sub->head = b;
	return LK_OK;
}

void lk__arena_carve_release(lk__arena *sub)
{
	/* blocks the sub-arena had to add are pushed in front of the carved one, which belongs to the parent */
	while (sub->head && sub->head->next) {
		lk__arena_block *b = sub->head;
		sub->head = b->next;
		free(b);
	}
	sub->head = NULL;
}
