/* Edits of an HDF5 file that libfclib would never write, for the FCLIB reader's tests and fuzz target: a
 * dataset replaced by one of another length or type of values, or removed (h5_edit.c). */
#ifndef LCPKIT_H5_EDIT_H
#define LCPKIT_H5_EDIT_H

/* Dataset `name` (an absolute path such as "/fclib_local/vectors/q") of the file at path replaced by a
 * one-dimensional dataset of `count` values (>= 0): ints when is_int, else doubles. 1 on success. */
int lk_h5_replace(const char *path, const char *name, int is_int, const void *values, long count);
/* Dataset or group `name` removed. 1 on success. */
int lk_h5_remove(const char *path, const char *name);

#endif
