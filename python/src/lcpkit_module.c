/* lcpkit._lcpkit: the CPython extension under the Python package lcpkit (python/lcpkit/__init__.py).
 *
 * A thin layer over the core's public API (lcpkit.h, io.h, generate.h) and the FCLIB reader: arrays cross it
 * as buffers (PEP 3118), which the Python layer makes C-contiguous float64 and int32 numpy arrays of the
 * right sizes, and this layer checks again, so that a wrong buffer is a Python exception, never a read out
 * of bounds. No numpy C API: the module does not depend on numpy's ABI. Every failing core call becomes
 * lcpkit.Error with the core's message and the status's name; nothing here prints. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "fclib_io.h"
#include "lcpkit/generate.h"
#include "lcpkit/io.h"
#include "lcpkit/lcpkit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

PyMODINIT_FUNC PyInit__lcpkit(void);

static PyObject *error_type; /* lcpkit.Error */

/* Raises lcpkit.Error(message) with .status = the status's name and .message = message. */
static PyObject *raise_error(lk_status st, const char *message)
{
	PyObject *exc = PyObject_CallFunction(error_type, "s", message);
	if (!exc)
		return NULL;
	PyObject *name = PyUnicode_FromString(lk_status_string(st));
	PyObject *msg = PyUnicode_FromString(message);
	if (name && msg && PyObject_SetAttrString(exc, "status", name) == 0 &&
	    PyObject_SetAttrString(exc, "message", msg) == 0)
		PyErr_SetObject(error_type, exc);
	Py_XDECREF(name);
	Py_XDECREF(msg);
	Py_DECREF(exc);
	return NULL;
}

/* ------------------------------------------------------------------------------------------------ buffers */

enum { F64, I32 };

/* The buffer of `o` as `count` C-contiguous float64 (F64) or int32 (I32) values, writable if asked. On
 * failure a Python exception is set and -1 returned; on success the caller releases the view. */
static int get_buffer(PyObject *o, Py_buffer *v, int kind, Py_ssize_t count, int writable, const char *what)
{
	int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
	memset(v, 0, sizeof *v);
	if (PyObject_GetBuffer(o, v, flags) != 0)
		return -1;
	const char *f = v->format ? v->format : "B";
	if (*f == '@' || *f == '=' || *f == '<')
		++f;
	int ok = kind == F64 ? (v->itemsize == 8 && !strcmp(f, "d")) : (v->itemsize == 4 && !strcmp(f, "i"));
	if (!ok || v->len != count * v->itemsize) {
		PyErr_Format(PyExc_ValueError, "%s: expected %zd %s values, got a buffer of %zd bytes of format '%s'", what,
		             count, kind == F64 ? "float64" : "int32", v->len, v->format ? v->format : "B");
		PyBuffer_Release(v);
		return -1;
	}
	return 0;
}

/* get_buffer for an optional argument: None leaves v->buf NULL. */
static int get_optional(PyObject *o, Py_buffer *v, int kind, Py_ssize_t count, const char *what)
{
	memset(v, 0, sizeof *v);
	if (o == Py_None)
		return 0;
	return get_buffer(o, v, kind, count, 0, what);
}

static void release(Py_buffer *v)
{
	if (v->obj)
		PyBuffer_Release(v);
}

/* The buffers of o[0 .. n-1] as kind[k] x count[k], those from `optional` on possibly None, writable where
 * bit k of `writable` is set; on failure the ones taken are released, a Python exception is set and -1
 * returned. */
static int get_buffers(PyObject *const *o, Py_buffer *v, int n, int optional, unsigned writable, const int *kind,
                       const Py_ssize_t *count, const char *const *what)
{
	for (int k = 0; k < n; ++k) {
		int rc = k < optional ? get_buffer(o[k], &v[k], kind[k], count[k], (writable >> k) & 1u, what[k])
		                      : get_optional(o[k], &v[k], kind[k], count[k], what[k]);
		if (rc != 0) {
			while (k-- > 0)
				release(&v[k]);
			return -1;
		}
	}
	return 0;
}

static void release_buffers(Py_buffer *v, int n)
{
	for (int k = 0; k < n; ++k)
		release(&v[k]);
}

/* -------------------------------------------------------------------------------------------- the problem */

typedef struct {
	PyObject_HEAD
	lk_problem *p;
	int busy; /* a solve holds the problem with the GIL released */
} ProblemObject;

static PyTypeObject problem_type;

static PyObject *wrap_problem(lk_problem *p)
{
	ProblemObject *o = PyObject_New(ProblemObject, &problem_type);
	if (!o) {
		lk_problem_destroy(p);
		return NULL;
	}
	o->p = p;
	o->busy = 0;
	return (PyObject *)o;
}

static void problem_dealloc(PyObject *self)
{
	lk_problem_destroy(((ProblemObject *)self)->p);
	PyObject_Free(self);
}

/* The problem, unless a solve in another thread holds it. */
static lk_problem *problem_of(PyObject *self)
{
	ProblemObject *o = (ProblemObject *)self;
	if (o->busy) {
		PyErr_SetString(PyExc_RuntimeError, "the problem is being solved in another thread");
		return NULL;
	}
	return o->p;
}

/* None, or lcpkit.Error with p's message when st is a failure. */
static PyObject *none_or_error(lk_problem *p, lk_status st)
{
	if (st != LK_OK)
		return raise_error(st, lk_problem_error(p));
	Py_RETURN_NONE;
}

static PyObject *problem_counts(PyObject *self, PyObject *unused)
{
	(void)unused;
	lk_problem *p = problem_of(self);
	if (!p)
		return NULL;
	return Py_BuildValue("(iis)", lk_problem_row_count(p), lk_problem_body_count(p),
	                     lk_problem_form(p) == LK_FORM_ROWS ? "rows" : "matrix");
}

/* The problem of self and the one argument in args as its n_rows float64 values, writable if asked; -1 with
 * a Python exception set. */
static int problem_and_vector(PyObject *self, PyObject *args, int writable, lk_problem **p, Py_buffer *v)
{
	PyObject *o;
	if (!(*p = problem_of(self)) || !PyArg_ParseTuple(args, "O", &o))
		return -1;
	return get_buffer(o, v, F64, lk_problem_row_count(*p), writable, "lambda");
}

static PyObject *problem_get_lambda(PyObject *self, PyObject *args)
{
	lk_problem *p;
	Py_buffer v;
	if (problem_and_vector(self, args, 1, &p, &v) != 0)
		return NULL;
	if (v.len > 0)
		memcpy(v.buf, lk_problem_lambda(p), (size_t)v.len);
	PyBuffer_Release(&v);
	Py_RETURN_NONE;
}

static PyObject *problem_set_lambda(PyObject *self, PyObject *args)
{
	lk_problem *p;
	Py_buffer v;
	if (problem_and_vector(self, args, 0, &p, &v) != 0)
		return NULL;
	lk_status st = lk_problem_set_lambda(p, v.buf, lk_problem_row_count(p));
	PyBuffer_Release(&v);
	return none_or_error(p, st);
}

/* apply(x, w_out, q_plus): w = A x (+ q) */
static PyObject *problem_apply(PyObject *self, PyObject *args)
{
	PyObject *o[2];
	int q_plus;
	Py_buffer v[2];
	lk_problem *p = problem_of(self);
	if (!p || !PyArg_ParseTuple(args, "OOp", &o[0], &o[1], &q_plus))
		return NULL;
	const Py_ssize_t n = lk_problem_row_count(p), count[2] = {n, n};
	static const int kind[2] = {F64, F64};
	static const char *const what[2] = {"x", "w"};
	if (get_buffers(o, v, 2, 2, 2u, kind, count, what) != 0)
		return NULL;
	lk_status st = lk_problem_apply(p, v[0].buf, v[1].buf, q_plus);
	release_buffers(v, 2);
	return none_or_error(p, st);
}

/* dense(A_out, q_out): the dense A (row-major) and q */
static PyObject *problem_dense(PyObject *self, PyObject *args)
{
	PyObject *o[2];
	Py_buffer v[2];
	lk_problem *p = problem_of(self);
	if (!p || !PyArg_ParseTuple(args, "OO", &o[0], &o[1]))
		return NULL;
	const int n = lk_problem_row_count(p);
	const Py_ssize_t count[2] = {(Py_ssize_t)n * n, n};
	static const int kind[2] = {F64, F64};
	static const char *const what[2] = {"A", "q"};
	if (get_buffers(o, v, 2, 2, 3u, kind, count, what) != 0)
		return NULL;
	lk_status st;
	Py_BEGIN_ALLOW_THREADS
	st = lk_problem_assemble_dense(p, n, v[0].buf, v[1].buf);
	Py_END_ALLOW_THREADS
	release_buffers(v, 2);
	return none_or_error(p, st);
}

/* bounds(lo, hi, mu, findex, kind): each row's bounds as given */
static PyObject *problem_bounds(PyObject *self, PyObject *args)
{
	PyObject *o[5];
	Py_buffer v[5];
	static const char *const what[5] = {"lo", "hi", "mu", "findex", "kind"};
	static const int kind[5] = {F64, F64, F64, I32, I32};
	lk_problem *p = problem_of(self);
	if (!p || !PyArg_ParseTuple(args, "OOOOO", &o[0], &o[1], &o[2], &o[3], &o[4]))
		return NULL;
	const Py_ssize_t n = lk_problem_row_count(p), count[5] = {n, n, n, n, n};
	if (get_buffers(o, v, 5, 5, 31u, kind, count, what) != 0)
		return NULL;
	double *lo = v[0].buf, *hi = v[1].buf, *mu = v[2].buf;
	int *fi = v[3].buf, *rk = v[4].buf;
	for (int i = 0; i < (int)n; ++i) {
		lk_row_kind k;
		lk_problem_get_bounds(p, i, &lo[i], &hi[i], &mu[i], &fi[i], &k);
		rk[i] = (int)k;
	}
	release_buffers(v, 5);
	Py_RETURN_NONE;
}

static PyObject *metrics_dict(const lk_metrics *m)
{
	return Py_BuildValue("{sdsdsdsdsdsd}", "res", m->res, "theta", m->theta, "fischer", m->fischer, "modified",
	                     m->modified, "max_h", m->max_h, "max_bound_violation", m->max_bound_violation);
}

/* metrics(lambda or None) */
static PyObject *problem_metrics(PyObject *self, PyObject *args)
{
	PyObject *l;
	Py_buffer v;
	lk_problem *p = problem_of(self);
	if (!p || !PyArg_ParseTuple(args, "O", &l))
		return NULL;
	if (get_optional(l, &v, F64, lk_problem_row_count(p), "lambda") != 0)
		return NULL;
	lk_metrics m;
	lk_status st = lk_problem_metrics(p, v.buf, &m);
	release(&v);
	if (st != LK_OK)
		return raise_error(st, lk_problem_error(p));
	return metrics_dict(&m);
}

/* write(path, solution or None, h, source) */
static PyObject *problem_write(PyObject *self, PyObject *args)
{
	PyObject *path, *sol;
	double h;
	const char *source;
	Py_buffer v;
	lk_problem *p = problem_of(self);
	if (!p || !PyArg_ParseTuple(args, "O&Ods", PyUnicode_FSConverter, &path, &sol, &h, &source))
		return NULL;
	if (get_optional(sol, &v, F64, lk_problem_row_count(p), "solution") != 0) {
		Py_DECREF(path);
		return NULL;
	}
	lk_problem_extra extra;
	memset(&extra, 0, sizeof extra);
	extra.solution = v.buf;
	extra.has_solution = v.buf != NULL;
	extra.h = h;
	snprintf(extra.source, sizeof extra.source, "%s", source);
	char err[1024];
	lk_status st = lk_problem_write(p, &extra, PyBytes_AS_STRING(path), err, sizeof err);
	release(&v);
	Py_DECREF(path);
	if (st != LK_OK)
		return raise_error(st, err);
	Py_RETURN_NONE;
}

/* The history's columns as bytearrays (numpy.frombuffer makes them arrays without a copy). */
static PyObject *history_columns(const lk_history *h)
{
	Py_ssize_t n = h->count;
	PyObject *col[6];
	for (int k = 0; k < 6; ++k)
		if (!(col[k] = PyByteArray_FromStringAndSize(NULL, n * 8))) {
			while (k-- > 0)
				Py_DECREF(col[k]);
			return NULL;
		}
	int64_t *it = (int64_t *)PyByteArray_AS_STRING(col[0]), *ru = (int64_t *)PyByteArray_AS_STRING(col[5]);
	double *res = (double *)PyByteArray_AS_STRING(col[1]), *theta = (double *)PyByteArray_AS_STRING(col[2]);
	double *fb = (double *)PyByteArray_AS_STRING(col[3]), *sec = (double *)PyByteArray_AS_STRING(col[4]);
	for (Py_ssize_t i = 0; i < n; ++i) {
		const lk_history_entry *e = &h->entries[i];
		it[i] = e->iteration;
		res[i] = e->res;
		theta[i] = e->theta;
		fb[i] = e->fischer;
		sec[i] = e->seconds;
		ru[i] = e->row_updates;
	}
	return Py_BuildValue("(NNNNNN)", col[0], col[1], col[2], col[3], col[4], col[5]);
}

static PyObject *stats_dict(const lk_stats *s, const char *canon)
{
	return Py_BuildValue("{sssisisisLsdsisisssdsdsdsdsdsdsdsiss}", "method", lk_method_name(s->method), "rows", s->rows,
	                     "bodies", s->bodies, "iterations", s->iterations, "row_updates", (long long)s->row_updates,
	                     "work", s->work, "inner_iterations", s->inner_iterations, "subspace_steps",
	                     s->subspace_steps, "stop_reason", lk_stop_reason_name(s->stop_reason), "res_initial",
	                     s->res_initial, "res_final", s->res_final, "theta_initial", s->theta_initial,
	                     "theta_final", s->theta_final, "fischer_final", s->fischer_final, "modified_final",
	                     s->modified_final, "seconds", s->seconds, "used_best_iterate", s->used_best_iterate,
	                     "spec", canon);
}

/* The configuration of a spec and its canonical form (what `lcpkit solve` prints); -1 with lcpkit.Error and
 * the parser's message. */
static int parse_config(const char *spec, lk_solver_config *cfg, char *canon, size_t size)
{
	char err[512];
	lk_status st = lk_config_parse(spec, cfg, err, sizeof err);
	if (st != LK_OK) {
		raise_error(st, err);
		return -1;
	}
	if (lk_config_format(cfg, canon, size) != LK_OK)
		snprintf(canon, size, "%s", spec);
	return 0;
}

/* solve(spec, warm or None, history, lambda_out, w_out, du_out or None) -> (stats, history columns or None).
 * The problem's own lambda (the warm start) is what it was before: the solution goes to lambda_out only. */
static PyObject *problem_solve(PyObject *self, PyObject *args)
{
	const char *spec;
	PyObject *warm, *lam_out, *w_out, *du_out;
	int want_history;
	lk_problem *p = problem_of(self);
	if (!p || !PyArg_ParseTuple(args, "sOpOOO", &spec, &warm, &want_history, &lam_out, &w_out, &du_out))
		return NULL;
	lk_solver_config cfg;
	char canon[512];
	if (parse_config(spec, &cfg, canon, sizeof canon) != 0)
		return NULL;
	lk_status st;
	const int n = lk_problem_row_count(p), nb = lk_problem_body_count(p);
	const int rows_form = lk_problem_form(p) == LK_FORM_ROWS;
	Py_buffer vwarm, vl, vw, vdu;
	memset(&vl, 0, sizeof vl);
	memset(&vw, 0, sizeof vw);
	memset(&vdu, 0, sizeof vdu);
	if (get_optional(warm, &vwarm, F64, n, "warm") != 0)
		return NULL;
	PyObject *result = NULL;
	double *saved = malloc(sizeof(double) * (size_t)(n ? n : 1));
	lk_history hist = {NULL, 0, 0};
	if (want_history) {
		/* as `lcpkit solve --history`: PGS-SM and the staggered schedules record more than one entry per
		 * outer iteration; calloc leaves the pages an unused capacity would take untouched */
		long cap = 64L * cfg.max_iterations + 1;
		hist.capacity = (int)(cap < 10000000 ? cap : 10000000);
		hist.entries = calloc((size_t)hist.capacity, sizeof *hist.entries);
	}
	if (!saved || (want_history && !hist.entries)) {
		PyErr_NoMemory();
		goto done;
	}
	if (get_buffer(lam_out, &vl, F64, n, 1, "lambda") != 0 || get_buffer(w_out, &vw, F64, n, 1, "w") != 0 ||
	    (rows_form && get_buffer(du_out, &vdu, F64, (Py_ssize_t)nb * 6, 1, "du") != 0))
		goto done;
	memcpy(saved, lk_problem_lambda(p), sizeof(double) * (size_t)n);
	if (vwarm.buf && (st = lk_problem_set_lambda(p, vwarm.buf, n)) != LK_OK) {
		raise_error(st, lk_problem_error(p));
		goto done;
	}
	lk_stats stats;
	((ProblemObject *)self)->busy = 1;
	Py_BEGIN_ALLOW_THREADS
	st = lk_solve(p, &cfg, &stats, want_history ? &hist : NULL);
	if (st == LK_OK) {
		memcpy(vl.buf, lk_problem_lambda(p), sizeof(double) * (size_t)n);
		st = lk_problem_apply(p, vl.buf, vw.buf, 1);
		for (int b = 0; st == LK_OK && rows_form && b < nb; ++b)
			st = lk_problem_delta_velocity(p, b, (double *)vdu.buf + 6 * b);
	}
	Py_END_ALLOW_THREADS
	((ProblemObject *)self)->busy = 0;
	if (st != LK_OK) {
		raise_error(st, lk_problem_error(p));
		lk_problem_set_lambda(p, saved, n);
		goto done;
	}
	/* the warm start back: the next solve starts where this one did, unless told otherwise */
	lk_problem_set_lambda(p, saved, n);
	PyObject *h = want_history ? history_columns(&hist) : (Py_INCREF(Py_None), Py_None);
	PyObject *s = h ? stats_dict(&stats, canon) : NULL;
	if (h && s)
		result = Py_BuildValue("(NN)", s, h);
	else {
		Py_XDECREF(h);
		Py_XDECREF(s);
	}
done:
	release(&vwarm);
	release(&vl);
	release(&vw);
	release(&vdu);
	free(saved);
	free(hist.entries);
	return result;
}

static PyMethodDef problem_methods[] = {
	{"counts", problem_counts, METH_NOARGS, "(rows, bodies, form)"},
	{"get_lambda", problem_get_lambda, METH_VARARGS, "get_lambda(out): the warm start into out"},
	{"set_lambda", problem_set_lambda, METH_VARARGS, "set_lambda(x): the warm start"},
	{"apply", problem_apply, METH_VARARGS, "apply(x, w_out, q_plus): w = A x (+ q)"},
	{"dense", problem_dense, METH_VARARGS, "dense(A_out, q_out)"},
	{"bounds", problem_bounds, METH_VARARGS, "bounds(lo, hi, mu, findex, kind) into the arrays given"},
	{"metrics", problem_metrics, METH_VARARGS, "metrics(lambda or None) -> dict"},
	{"write", problem_write, METH_VARARGS, "write(path, solution or None, h, source)"},
	{"solve", problem_solve, METH_VARARGS, "solve(spec, warm, history, lambda_out, w_out, du_out)"},
	{NULL, NULL, 0, NULL},
};

static PyTypeObject problem_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lcpkit._lcpkit.Problem",
	.tp_basicsize = sizeof(ProblemObject),
	.tp_dealloc = problem_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "An lk_problem (made by the module's functions; use lcpkit.Problem).",
	.tp_methods = problem_methods,
};

/* ------------------------------------------------------------------------------------- making problems */

/* A problem just made with status st: validated and wrapped, or the error raised and the problem destroyed. */
static PyObject *finish_problem(lk_problem *p, lk_status st)
{
	if (!p)
		return PyErr_NoMemory();
	if (st == LK_OK)
		st = lk_problem_validate(p);
	if (st != LK_OK) {
		raise_error(st, lk_problem_error(p));
		lk_problem_destroy(p);
		return NULL;
	}
	return wrap_problem(p);
}

/* matrix(n, indptr, indices, data, q, lo, hi, mu, findex): the matrix form from CSR */
static PyObject *make_matrix(PyObject *mod, PyObject *args)
{
	(void)mod;
	int n;
	Py_ssize_t nnz;
	PyObject *o[8];
	if (!PyArg_ParseTuple(args, "inOOOOOOOO", &n, &nnz, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7]))
		return NULL;
	if (n < 0 || nnz < 0) {
		PyErr_SetString(PyExc_ValueError, "negative size");
		return NULL;
	}
	Py_buffer v[8];
	static const char *const what[8] = {"indptr", "indices", "data", "q", "lo", "hi", "mu", "findex"};
	const Py_ssize_t count[8] = {(Py_ssize_t)n + 1, nnz, nnz, n, n, n, n, n};
	const int kind[8] = {I32, I32, F64, F64, F64, F64, F64, I32};
	if (get_buffers(o, v, 8, 4, 0, kind, count, what) != 0)
		return NULL;
	lk_problem *p = lk_problem_create(LK_FORM_MATRIX);
	lk_status st = p ? lk_problem_set_matrix(p, n, v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf,
	                                         v[6].buf, v[7].buf)
	                 : LK_ERR_NO_MEMORY;
	release_buffers(v, 8);
	return finish_problem(p, st);
}

/* rows(u, inv_mass, inv_inertia, body, J, c, s, lo, hi, mu, findex, kind, point): the row form */
static PyObject *make_rows(PyObject *mod, PyObject *args)
{
	(void)mod;
	int nb, m;
	PyObject *o[13];
	if (!PyArg_ParseTuple(args, "iiOOOOOOOOOOOOO", &nb, &m, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7],
	                      &o[8], &o[9], &o[10], &o[11], &o[12]))
		return NULL;
	if (nb < 0 || m < 0) {
		PyErr_SetString(PyExc_ValueError, "negative size");
		return NULL;
	}
	Py_buffer v[13];
	static const char *const what[13] = {"u", "inv_mass", "inv_inertia", "body", "J", "c", "s",
	                                     "lo", "hi", "mu", "findex", "kind", "point"};
	const Py_ssize_t count[13] = {6 * (Py_ssize_t)nb, 3 * (Py_ssize_t)nb, 9 * (Py_ssize_t)nb, 2 * (Py_ssize_t)m,
	                              12 * (Py_ssize_t)m, m, m, m, m, m, m, m, 3 * (Py_ssize_t)m};
	const int kind[13] = {F64, F64, F64, I32, F64, F64, F64, F64, F64, F64, I32, I32, F64};
	if (get_buffers(o, v, 13, 13, 0, kind, count, what) != 0)
		return NULL;
	lk_problem *p = lk_problem_create(LK_FORM_ROWS);
	lk_status st = p ? lk_problem_reserve(p, nb, m) : LK_ERR_NO_MEMORY;
	const double *u = v[0].buf, *im = v[1].buf, *ii = v[2].buf, *J = v[4].buf, *c = v[5].buf, *s = v[6].buf;
	const double *lo = v[7].buf, *hi = v[8].buf, *mu = v[9].buf, *pt = v[12].buf;
	const int *body = v[3].buf, *fi = v[10].buf, *rk = v[11].buf;
	for (int b = 0; st == LK_OK && b < nb; ++b) {
		lk_body_def d = lk_default_body_def();
		memcpy(d.u, u + 6 * b, sizeof d.u);
		memcpy(d.inv_mass, im + 3 * b, sizeof d.inv_mass);
		memcpy(d.inv_inertia, ii + 9 * b, sizeof d.inv_inertia);
		st = lk_problem_add_body(p, &d, NULL);
	}
	for (int r = 0; st == LK_OK && r < m; ++r) {
		if (rk[r] < 0 || rk[r] >= LK_ROW_KIND_COUNT) {
			PyErr_Format(PyExc_ValueError, "row %d: kind %d is not a row kind (0 .. %d)", r, rk[r],
			             LK_ROW_KIND_COUNT - 1);
			release_buffers(v, 13);
			lk_problem_destroy(p);
			return NULL;
		}
		lk_row_def d = lk_default_row_def();
		d.body[0] = body[2 * r];
		d.body[1] = body[2 * r + 1];
		memcpy(d.J, J + 12 * r, sizeof d.J);
		d.c = c[r];
		d.s = s[r];
		d.lo = lo[r];
		d.hi = hi[r];
		d.mu = mu[r];
		d.findex = fi[r];
		d.kind = (lk_row_kind)rk[r];
		d.id = (uint64_t)r;
		memcpy(d.point, pt + 3 * r, sizeof d.point);
		st = lk_problem_add_row(p, &d, NULL);
	}
	release_buffers(v, 13);
	return finish_problem(p, st);
}

/* read(path) -> (problem, solution bytearray or None, h, source) */
static PyObject *read_problem(PyObject *mod, PyObject *args)
{
	(void)mod;
	PyObject *path;
	if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path))
		return NULL;
	lk_problem *p = NULL;
	lk_problem_extra extra;
	char err[1024];
	lk_status st;
	Py_BEGIN_ALLOW_THREADS
	st = lk_problem_read(PyBytes_AS_STRING(path), NULL, &p, &extra, err, sizeof err);
	Py_END_ALLOW_THREADS
	Py_DECREF(path);
	if (st != LK_OK)
		return raise_error(st, err);
	PyObject *sol = Py_None;
	Py_INCREF(sol);
	if (extra.has_solution && extra.solution) {
		Py_DECREF(sol);
		sol = PyByteArray_FromStringAndSize((const char *)extra.solution,
		                                    (Py_ssize_t)sizeof(double) * lk_problem_row_count(p));
	}
	PyObject *result = NULL;
	if (!sol) {
		lk_problem_destroy(p);
	} else {
		PyObject *po = wrap_problem(p);
		if (po)
			result = Py_BuildValue("(NNds)", po, sol, extra.h, extra.source);
		else
			Py_DECREF(sol);
	}
	lk_problem_extra_free(&extra);
	return result;
}

/* read_fclib(path) -> problem (the FCLIB reader of lcpkit fclib import) */
static PyObject *read_fclib(PyObject *mod, PyObject *args)
{
	(void)mod;
	PyObject *path;
	if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path))
		return NULL;
	lk_problem *p = NULL;
	char err[1024];
	lk_status st;
	Py_BEGIN_ALLOW_THREADS
	st = lk_fclib_import(PyBytes_AS_STRING(path), &p, err, sizeof err);
	Py_END_ALLOW_THREADS
	Py_DECREF(path);
	if (st != LK_OK)
		return raise_error(st, err);
	return wrap_problem(p);
}

static int gen_kind(const char *name)
{
	int k = lk_gen_kind_from_name(name);
	if (k < 0) {
		char msg[512];
		size_t used = (size_t)snprintf(msg, sizeof msg, "unknown generator '%s' (choose from", name);
		for (int i = 0; i < LK_GEN_KIND_COUNT && used < sizeof msg; ++i)
			used += (size_t)snprintf(msg + used, sizeof msg - used, "%s %s", i ? "," : "",
			                         lk_gen_kind_name((lk_gen_kind)i));
		if (used < sizeof msg)
			snprintf(msg + used, sizeof msg - used, ")");
		raise_error(LK_ERR_INVALID_ARGUMENT, msg);
	}
	return k;
}

/* gen_defaults(kind) -> dict of lk_default_gen_params */
static PyObject *gen_defaults(PyObject *mod, PyObject *arg)
{
	(void)mod;
	const char *name = PyUnicode_AsUTF8(arg);
	int k = name ? gen_kind(name) : -1;
	if (k < 0)
		return NULL;
	lk_gen_params g = lk_default_gen_params((lk_gen_kind)k);
	return Py_BuildValue("{sisKsdsdsdsdsdsd}", "n", g.n, "seed", (unsigned long long)g.seed, "mu", g.mu,
	                     "mass_ratio", g.mass_ratio, "h", g.h, "gravity", g.gravity, "erp", g.erp, "slope",
	                     g.slope);
}

/* generate(kind, n, seed, mu, mass_ratio, h, gravity, erp, slope) -> problem */
static PyObject *generate(PyObject *mod, PyObject *args)
{
	(void)mod;
	const char *name;
	int n;
	unsigned long long seed;
	lk_gen_params g;
	if (!PyArg_ParseTuple(args, "siKdddddd", &name, &n, &seed, &g.mu, &g.mass_ratio, &g.h, &g.gravity, &g.erp,
	                      &g.slope))
		return NULL;
	int k = gen_kind(name);
	if (k < 0)
		return NULL;
	g.kind = (lk_gen_kind)k;
	g.n = n;
	g.seed = seed;
	lk_problem *p = NULL;
	char err[512];
	lk_status st;
	Py_BEGIN_ALLOW_THREADS
	st = lk_generate(&g, &p, err, sizeof err);
	Py_END_ALLOW_THREADS
	if (st != LK_OK)
		return raise_error(st, err);
	return wrap_problem(p);
}

static PyObject *gen_kinds(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	PyObject *t = PyTuple_New(LK_GEN_KIND_COUNT);
	for (int i = 0; t && i < LK_GEN_KIND_COUNT; ++i) {
		PyObject *s = PyUnicode_FromString(lk_gen_kind_name((lk_gen_kind)i));
		if (!s) {
			Py_DECREF(t);
			return NULL;
		}
		PyTuple_SET_ITEM(t, i, s);
	}
	return t;
}

/* parse_spec(spec) -> the canonical spec, or lcpkit.Error with the parser's message */
static PyObject *parse_spec(PyObject *mod, PyObject *arg)
{
	(void)mod;
	lk_solver_config cfg;
	char canon[512];
	const char *spec = PyUnicode_AsUTF8(arg);
	return spec && parse_config(spec, &cfg, canon, sizeof canon) == 0 ? PyUnicode_FromString(canon) : NULL;
}

static PyMethodDef module_methods[] = {
	{"matrix", make_matrix, METH_VARARGS, "matrix(n, nnz, indptr, indices, data, q, lo, hi, mu, findex)"},
	{"rows", make_rows, METH_VARARGS,
	 "rows(nbodies, nrows, u, inv_mass, inv_inertia, body, J, c, s, lo, hi, mu, findex, kind, point)"},
	{"read", read_problem, METH_VARARGS, "read(path) -> (problem, solution, h, source)"},
	{"read_fclib", read_fclib, METH_VARARGS, "read_fclib(path) -> problem"},
	{"gen_defaults", gen_defaults, METH_O, "gen_defaults(kind) -> dict"},
	{"generate", generate, METH_VARARGS, "generate(kind, n, seed, mu, mass_ratio, h, gravity, erp, slope)"},
	{"gen_kinds", gen_kinds, METH_NOARGS, "the generators' names"},
	{"parse_spec", parse_spec, METH_O, "parse_spec(spec) -> canonical spec"},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT, .m_name = "lcpkit._lcpkit",
	.m_doc = "lcpkit's solver core (use the package lcpkit).", .m_size = -1, .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__lcpkit(void)
{
	if (PyType_Ready(&problem_type) < 0)
		return NULL;
	PyObject *m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	error_type = PyErr_NewExceptionWithDoc("lcpkit.Error",
	                                       "A failure of lcpkit's core: .message is the core's message, .status "
	                                       "the name of its status (\"parse error\", ...).",
	                                       NULL, NULL);
	if (!error_type || PyModule_AddObjectRef(m, "Error", error_type) < 0 ||
	    PyModule_AddObjectRef(m, "Problem", (PyObject *)&problem_type) < 0 ||
	    PyModule_AddIntConstant(m, "VERSION_MAJOR", LK_VERSION_MAJOR) < 0 ||
	    PyModule_AddIntConstant(m, "VERSION_MINOR", LK_VERSION_MINOR) < 0 ||
	    PyModule_AddIntConstant(m, "VERSION_PATCH", LK_VERSION_PATCH) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
