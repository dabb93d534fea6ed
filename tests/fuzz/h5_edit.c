/* Edits of an HDF5 file for the FCLIB reader's tests (h5_edit.h), with HDF5's own calls. */
#include "h5_edit.h"

#include <hdf5.h>

/* HDF5's error stack printed on every failed call is noise here: a failed edit returns 0. */
static hid_t open_quietly(const char *path)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	return H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
}

int lk_h5_remove(const char *path, const char *name)
{
	hid_t f = open_quietly(path);
	if (f < 0)
		return 0;
	const int ok = H5Ldelete(f, name, H5P_DEFAULT) >= 0;
	H5Fclose(f);
	return ok;
}

int lk_h5_replace(const char *path, const char *name, int is_int, const void *values, long count)
{
	if (count < 0)
		return 0;
	hid_t f = open_quietly(path);
	if (f < 0)
		return 0;
	if (H5Lexists(f, name, H5P_DEFAULT) > 0)
		H5Ldelete(f, name, H5P_DEFAULT);
	hsize_t dim = (hsize_t)count;
	hid_t space = H5Screate_simple(1, &dim, NULL);
	hid_t type = is_int ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE;
	hid_t d = space >= 0 ? H5Dcreate2(f, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
	int ok = d >= 0 && (count == 0 || H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0);
	if (d >= 0)
		H5Dclose(d);
	if (space >= 0)
		H5Sclose(space);
	H5Fclose(f);
	return ok;
}
