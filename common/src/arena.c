/* The per-solve arena: blocks that never move, reset between solves, and sub-arenas carved out once before an
 * iteration loop. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>

void *lk__arena_alloc(lk__arena *a, size_t bytes)
{
	const size_t align = 64, hdr = (sizeof(lk__arena_block) + align - 1) / align * align;
	bytes = (bytes + align - 1) / align * align;
	if (bytes == 0)
		bytes = align;
	for (lk__arena_block *b = a->head; b; b = b->next) {
		if (b->size - b->used >= bytes) {
			void *ptr = (char *)b + hdr + b->used;
			b->used += bytes;
			return ptr;
		}
	}
	size_t size = bytes > ((size_t)1 << 20) ? bytes : ((size_t)1 << 20);
	if (size > SIZE_MAX - hdr)
		return NULL;
	lk__arena_block *b = aligned_alloc(align, (hdr + size + align - 1) / align * align);
	if (!b)
		return NULL;
	b->size = size;
	b->used = bytes;
	b->next = a->head;
	a->head = b;
	return (char *)b + hdr;
}

void lk__arena_reset(lk__arena *a)
{
	for (lk__arena_block *b = a->head; b; b = b->next)
		b->used = 0;
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
	const size_t align = 64, hdr = (sizeof(lk__arena_block) + align - 1) / align * align;
	bytes = (bytes + align - 1) / align * align;
	sub->head = NULL;
	if (bytes > SIZE_MAX - hdr)
		return LK_ERR_NO_MEMORY;
	lk__arena_block *b = lk__arena_alloc(parent, hdr + bytes);
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
