/* lcpkit fclib: contact problems to and from FCLIB local problems (HDF5), for other solvers. */
#include "cli.h"
#include "fclib_io.h"
#include "lcpkit/io.h"
#include "peer_siconos.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: lcpkit fclib export PROBLEM.lkp OUT.hdf5\n"
	           "       lcpkit fclib import IN.hdf5|IN.dat OUT.lkp\n\n"
	           "export writes the contact rows (normal + two friction rows per contact) as an FCLIB local problem\n"
	           "(W = J M^-1 J^T + S, q, mu). import reads an FCLIB local problem, or a global one reduced to the local\n"
	           "problem of its reactions (W = H^T M^-1 H, q = H^T M^-1 f + w), into lcpkit's matrix form with each\n"
	           "contact's tangent rows as friction rows bounded by mu times the normal impulse: a box instead of\n"
	           "Coulomb's disc (lcpkit's boxed-friction approximation; solve with pgs:friction=cone for the disc).\n"
	           "A file whose sizes disagree is refused with what; how M was read, where the file leaves it open,\n"
	           "is one note on stderr (LCPKIT_QUIET=1 silences it). A file that is not HDF5 and begins with a number\n"
	           "is read as a Siconos .dat friction-contact problem (its test problems), by Siconos's own reader in\n"
	           "a process of its own.\n"
	           "docs/regress.md.\n");
}

int lk_cmd_fclib(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return LK_EXIT_OK;
	}
	if (argc != 4 || (strcmp(argv[1], "export") && strcmp(argv[1], "import"))) {
		usage(stderr);
		return LK_EXIT_USAGE;
	}
	char err[512];
	lk_problem *p = NULL;
	lk_status st;
	if (!strcmp(argv[1], "export")) {
		st = lk_problem_read(argv[2], NULL, &p, NULL, err, sizeof err);
		if (st == LK_OK)
			st = lk_fclib_export(p, INT_MAX, argv[3], err, sizeof err); /* W sparse: no size to refuse */
	} else {
		if (access(argv[2], R_OK) == 0 && !lk_fclib_is_hdf5(argv[2]) && lk_peer_siconos_dat_like(argv[2])) {
			/* Siconos's .dat form of a local problem */
			lk_peer_dat d;
			st = lk_peer_siconos_read_dat(argv[2], &d, err, sizeof err);
			if (st == LK_OK) {
				char why[400];
				st = lk_fclib_local_from_entries(d.n, d.dim, d.count, d.row, d.col, d.val, d.q, d.mu, &p, why,
				                                 sizeof why);
				if (st != LK_OK)
					snprintf(err, sizeof err, "%s: %s", argv[2], why);
				else
					err[0] = '\0';
			}
			lk_peer_dat_free(&d);
		} else {
			st = lk_fclib_import(argv[2], &p, err, sizeof err);
		}
		if (st == LK_OK && err[0])
			lk_cli_note("fclib", "%s: %s", argv[2], err);
		if (st == LK_OK)
			st = lk_problem_write(p, NULL, argv[3], err, sizeof err);
	}
	lk_problem_destroy(p);
	if (st != LK_OK) {
		lk_cli_error("fclib", "%s", err);
		return LK_EXIT_FAIL;
	}
	return LK_EXIT_OK;
}
