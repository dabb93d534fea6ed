"""lcpkit: contact and joint solvers for rigid body engines, from Python.

The solver core of lcpkit (the C library liblcpkit) with numpy arrays in and out::

    import numpy as np
    import lcpkit

    p = lcpkit.generate("boxstack", n=10, mu=0.5)       # or lcpkit.read("step.lkp"), read_fclib, from_matrix
    r = lcpkit.solve(p, "amgs:iters=200")                # the same spec strings as `lcpkit solve --solver`
    r.lambda_, r.w, r.stop_reason, r.res, r.work         # impulses, A lambda + q, why it stopped, RES, work
    r = lcpkit.solve(p, "pgs-sm", history=True)
    r.history.res                                        # RES per iteration (numpy array)

A problem has the core's two forms (docs/maths.md): the row form, bodies (u*, inverse mass, world inverse
inertia) and rows (two bodies, J, c, s, bounds), which every solver works on without forming A; and the matrix
form, A (dense or CSR), q and bounds. Errors of the core are raised as lcpkit.Error with the core's message;
arrays of the wrong shape or type as ValueError. See docs/python.md.
"""

from collections import namedtuple

import numpy as np

from . import _lcpkit

__all__ = ["Error", "Problem", "Result", "History", "solve", "read", "read_fclib", "generate", "GENERATORS",
           "canonical_spec"]
__version__ = f"{_lcpkit.VERSION_MAJOR}.{_lcpkit.VERSION_MINOR}.{_lcpkit.VERSION_PATCH}"

Error = _lcpkit.Error

#: The generators of lcpkit gen (common/include/lcpkit/generate.h).
GENERATORS = _lcpkit.gen_kinds()

#: Row kinds of the row form (lk_row_kind), by name.
ROW_KINDS = ("joint", "normal", "friction", "limit", "motor")


def _array(x, dtype, shape, name):
    """x as a C-contiguous array of dtype and shape. One item's value stands for all: a scalar for a vector, a
    3 x 3 matrix for every body's; a vector of one element does not stand for n."""
    a = np.asarray(x)
    if a.shape != tuple(shape) and (a.ndim >= len(shape) or a.shape != tuple(shape)[len(shape) - a.ndim:]):
        raise ValueError(f"{name}: shape {a.shape} does not fit {tuple(shape)}")
    if dtype == np.int32:
        if a.size and not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"{name}: integers expected, got {a.dtype}")
        if a.size and (a.min() < np.iinfo(np.int32).min or a.max() > np.iinfo(np.int32).max):
            raise ValueError(f"{name}: values outside int32")
    try:
        a = np.broadcast_to(a, shape)
    except ValueError:
        raise ValueError(f"{name}: shape {np.shape(x)} does not fit {shape}") from None
    return np.ascontiguousarray(a, dtype=dtype)


def _optional(x, dtype, n, name):
    return None if x is None else _array(x, dtype, (n,), name)


class Problem:
    """One time step's constraint problem (an lk_problem). Make it with Problem.from_rows, Problem.from_matrix,
    read, read_fclib or generate. Its lambda_ is the warm start of every solve; solve leaves it as it was.

    A problem read from a file also has the file's reference solution (solution, or None), time step (h, 0
    when unknown) and source text (source)."""

    __slots__ = ("_p", "solution", "h", "source")

    def __init__(self, handle, solution=None, h=0.0, source=""):
        if not isinstance(handle, _lcpkit.Problem):
            raise TypeError("use Problem.from_rows, Problem.from_matrix, read, read_fclib or generate")
        self._p = handle
        self.solution = solution
        self.h = h
        self.source = source

    # ------------------------------------------------------------------------------------------- making

    @classmethod
    def from_matrix(cls, A, q, lo=None, hi=None, mu=None, findex=None):
        """The matrix form: w = A lambda + q, lo <= lambda <= hi with complementarity (docs/maths.md).

        A is an n x n array (exact zeros are dropped) or a CSR matrix (anything with indptr, indices and data,
        as scipy.sparse's csr_matrix; columns unique in each row). lo and hi default to 0 and +inf (an LCP); a
        row with findex[i] >= 0 is a friction row bounded by mu[i] times the impulse of row findex[i]."""
        q = np.asarray(q, dtype=np.float64)
        if q.ndim != 1:
            raise ValueError(f"q: a vector expected, got shape {q.shape}")
        n = q.shape[0]
        if hasattr(A, "tocsr"):
            A = A.tocsr()
        if all(hasattr(A, k) for k in ("indptr", "indices", "data")):
            if tuple(getattr(A, "shape", (n, n))) != (n, n):
                raise ValueError(f"A: shape {A.shape}, expected {(n, n)}")
            indptr = _array(A.indptr, np.int32, (n + 1,), "A.indptr")
            nnz = int(indptr[-1]) if n else 0
            indices = _array(A.indices[:nnz], np.int32, (nnz,), "A.indices")
            data = _array(A.data[:nnz], np.float64, (nnz,), "A.data")
        else:
            A = np.asarray(A, dtype=np.float64)
            if A.shape != (n, n):
                raise ValueError(f"A: shape {A.shape}, expected {(n, n)}")
            rows, cols = np.nonzero(A)
            indptr = np.zeros(n + 1, dtype=np.int32)
            np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
            indices = np.ascontiguousarray(cols, dtype=np.int32)
            data = np.ascontiguousarray(A[rows, cols])
            nnz = data.shape[0]
        p = _lcpkit.matrix(n, nnz, indptr, indices, data, np.ascontiguousarray(q), _optional(lo, np.float64, n, "lo"),
                           _optional(hi, np.float64, n, "hi"), _optional(mu, np.float64, n, "mu"),
                           _optional(findex, np.int32, n, "findex"))
        return cls(p)

    @classmethod
    def from_rows(cls, u, inv_mass, inv_inertia, body, J, c=0.0, s=0.0, lo=-np.inf, hi=np.inf, mu=0.0,
                  findex=-1, kind="joint", point=0.0, lambda_=None):
        """The row form, for nb bodies and m rows (docs/maths.md):

        u            (nb, 6)     unconstrained velocities u* = u + h M^-1 f_ext: v (m/s), then w (rad/s)
        inv_mass     (nb,) or (nb, 3)   1/m, per world axis if 3 numbers (0 on a locked axis)
        inv_inertia  (nb, 3, 3)  world-frame inverse inertia, symmetric positive semidefinite
        body         (m, 2)      the two bodies of each row, -1 for the static world (the second may be -1)
        J            (m, 2, 6)   each row's Jacobian blocks on its two bodies: 3 linear, then 3 angular
        c, s         (m,)        target velocity and constraint force mixing (impulse units, >= 0)
        lo, hi       (m,)        bounds (default: none, -inf and +inf); ignored on friction rows
        mu, findex   (m,)        a friction row: findex its normal row, bounds mu times that row's impulse
        kind         (m,)        "joint", "normal", "friction", "limit", "motor" or 0..4 (read by the orderings)
        point        (m, 3)      contact or anchor point (read by the coordinate orderings)
        lambda_      (m,)        the warm start (default 0)

        A = J M^-1 J^T + S and q = J u* - c are never formed: the solvers work on the rows."""
        u = np.asarray(u, dtype=np.float64)
        if u.ndim != 2 or u.shape[1] != 6:
            raise ValueError(f"u: shape (nb, 6) expected, got {u.shape}")
        nb = u.shape[0]
        body = np.asarray(body)
        if body.ndim != 2 or body.shape[1] != 2:
            raise ValueError(f"body: shape (m, 2) expected, got {body.shape}")
        m = body.shape[0]
        im = np.asarray(inv_mass, dtype=np.float64)
        if im.shape == (nb,):
            im = np.repeat(im[:, None], 3, axis=1)
        if isinstance(kind, str) or (np.ndim(kind) == 1 and len(kind) and isinstance(kind[0], str)):
            names = np.atleast_1d(np.asarray(kind))
            unknown = sorted(set(names.tolist()) - set(ROW_KINDS))
            if unknown:
                raise ValueError(f"kind: unknown {unknown} (choose from {', '.join(ROW_KINDS)})")
            kind = np.array([ROW_KINDS.index(k) for k in names.tolist()], dtype=np.int32)
        p = _lcpkit.rows(nb, m, _array(u, np.float64, (nb, 6), "u"), _array(im, np.float64, (nb, 3), "inv_mass"),
                         _array(inv_inertia, np.float64, (nb, 3, 3), "inv_inertia"),
                         _array(body, np.int32, (m, 2), "body"), _array(J, np.float64, (m, 2, 6), "J"),
                         _array(c, np.float64, (m,), "c"), _array(s, np.float64, (m,), "s"),
                         _array(lo, np.float64, (m,), "lo"), _array(hi, np.float64, (m,), "hi"),
                         _array(mu, np.float64, (m,), "mu"), _array(findex, np.int32, (m,), "findex"),
                         _array(kind, np.int32, (m,), "kind"), _array(point, np.float64, (m, 3), "point"))
        problem = cls(p)
        if lambda_ is not None:
            problem.lambda_ = lambda_
        return problem

    # ---------------------------------------------------------------------------------------- reading

    @property
    def n_rows(self):
        return self._p.counts()[0]

    @property
    def n_bodies(self):
        """Bodies of the row form (0 in the matrix form)."""
        return self._p.counts()[1]

    @property
    def form(self):
        """"rows" or "matrix"."""
        return self._p.counts()[2]

    @property
    def lambda_(self):
        """The warm start (a copy); assign an array to change it."""
        out = np.empty(self.n_rows)
        self._p.get_lambda(out)
        return out

    @lambda_.setter
    def lambda_(self, x):
        self._p.set_lambda(_array(x, np.float64, (self.n_rows,), "lambda_"))

    def dense(self):
        """(A, q) as dense arrays, A = J M^-1 J^T + S in the row form (for small problems)."""
        n = self.n_rows
        A, q = np.empty((n, n)), np.empty(n)
        self._p.dense(A, q)
        return A, q

    def apply(self, x, q_plus=True):
        """w = A x + q (or A x with q_plus=False), matrix-free in the row form."""
        n = self.n_rows
        w = np.empty(n)
        self._p.apply(_array(x, np.float64, (n,), "x"), w, bool(q_plus))
        return w

    def bounds(self):
        """Each row's lo, hi (as given; a friction row's come from its normal row), mu, findex and kind, as a
        dict of arrays."""
        n = self.n_rows
        out = {"lo": np.empty(n), "hi": np.empty(n), "mu": np.empty(n), "findex": np.empty(n, dtype=np.int32),
               "kind": np.empty(n, dtype=np.int32)}
        self._p.bounds(out["lo"], out["hi"], out["mu"], out["findex"], out["kind"])
        return out

    def metrics(self, lambda_=None):
        """RES = ||lambda - mid(lo, lambda - w, hi)||, theta = RES^2 / 2, the Fischer-Burmeister merit, the
        modified merit, max |H_i| and the largest bound violation, of lambda_ (default: the warm start)."""
        x = None if lambda_ is None else _array(lambda_, np.float64, (self.n_rows,), "lambda_")
        return self._p.metrics(x)

    def write(self, path, solution=None, h=None, source=None):
        """Writes the problem and its warm start as an lcpkit problem file (docs/problem-format.md), with a
        reference solution, time step and source text if given (default: the problem's own)."""
        solution = self.solution if solution is None else solution
        sol = None if solution is None else _array(solution, np.float64, (self.n_rows,), "solution")
        self._p.write(path, sol, float(self.h if h is None else h), str(self.source if source is None else source))

    def __repr__(self):
        rows, bodies, form = self._p.counts()
        what = f"{rows} rows, {bodies} bodies" if form == "rows" else f"{rows} rows"
        return f"<lcpkit.Problem {form} form, {what}>"


History = namedtuple("History", "iteration res theta fischer seconds row_updates")
History.__doc__ = """The per-iteration history of a solve (entry 0 is the start), each a numpy array: the
iteration, RES, theta, the Fischer merit, seconds since the start of the solve and the cumulative row
updates. History._asdict() gives a dict of the arrays (pandas.DataFrame(h._asdict()))."""


class Result:
    """What solve returns.

    lambda_      the solution (impulses), an array of n_rows
    w            A lambda_ + q
    du           row form: M^-1 J^T lambda_ per body, (n_bodies, 6), so u+ = u* + du; None in the matrix form
    stop_reason  why it stopped: "absolute", "iterations", "budget", ... (lk_stop_reason_name)
    res          RES of the result (res_initial: of the start)
    work         sweep-equivalents spent (docs/solvers.md, "Work")
    iterations   the method's own iterations
    spec         the canonical spec that ran
    stats        every statistic of lk_stats, as a dict
    history      a History of numpy arrays, or None without history=True
    """

    __slots__ = ("lambda_", "w", "du", "stats", "history")

    def __init__(self, lambda_, w, du, stats, history):
        self.lambda_, self.w, self.du, self.stats, self.history = lambda_, w, du, stats, history

    stop_reason = property(lambda self: self.stats["stop_reason"])
    res = property(lambda self: self.stats["res_final"])
    res_initial = property(lambda self: self.stats["res_initial"])
    work = property(lambda self: self.stats["work"])
    iterations = property(lambda self: self.stats["iterations"])
    seconds = property(lambda self: self.stats["seconds"])
    spec = property(lambda self: self.stats["spec"])

    def __repr__(self):
        return (f"<lcpkit.Result {self.spec}: {self.iterations} iterations, stopped: {self.stop_reason}, "
                f"RES {self.res:.3e}, work {self.work:.1f}>")


def solve(problem, spec="pgs", *, warm=None, history=False):
    """Solves the problem with the solver of a spec string, the same as `lcpkit solve --solver SPEC` takes
    ("pgs", "psor:w=1.3", "amgs:alpha=0.2", "pgs-sm:iters=10", "newton-fischer", "pgs:budget=20,tol=1e-6",
    "amgs:warm=0" for a cold start, ...; docs/solvers.md). It starts from the problem's warm start (or from warm,
    if given) and leaves the problem as it was, so the same call gives the same result to the bit. history=True
    records the per-iteration history."""
    if not isinstance(problem, Problem):
        raise TypeError(f"solve: an lcpkit.Problem expected, got {type(problem).__name__}")
    rows, bodies, form = problem._p.counts()
    lam, w = np.empty(rows), np.empty(rows)
    du = np.empty((bodies, 6)) if form == "rows" else None
    x = None if warm is None else _array(warm, np.float64, (rows,), "warm")
    stats, cols = problem._p.solve(str(spec), x, bool(history), lam, w, du)
    hist = None
    if cols is not None:
        dtypes = (np.int64, np.float64, np.float64, np.float64, np.float64, np.int64)
        hist = History(*(np.frombuffer(c, dtype=t) for c, t in zip(cols, dtypes)))
    return Result(lam, w, du, stats, hist)


def canonical_spec(spec):
    """The canonical form of a solver spec (as `lcpkit solve` prints it), or lcpkit.Error with the parser's
    message."""
    return _lcpkit.parse_spec(str(spec))


def read(path):
    """Reads an lcpkit problem file (docs/problem-format.md) strictly: any error is lcpkit.Error with
    "path:line: reason". The file's lambda is the warm start; its reference solution, time step and source are
    the problem's solution, h and source."""
    p, sol, h, source = _lcpkit.read(path)
    return Problem(p, None if sol is None else np.frombuffer(sol, dtype=np.float64), h, source)


def read_fclib(path):
    """Reads an FCLIB file (HDF5) as `lcpkit fclib import` does (docs/regress.md): a local problem (W, q, mu) or a
    global one reduced to its reactions, in the matrix form, each contact a normal row and two friction rows
    (lcpkit's box approximation of the Coulomb cone; solve with "pgs:friction=cone" for the cone)."""
    return Problem(_lcpkit.read_fclib(path))


def generate(kind, **params):
    """A generated test problem, as `lcpkit gen KIND` makes it: kind is one of GENERATORS ("boxstack",
    "spherestack", "packing", "fluid", "chain", "heavy-on-light", "incline"); params override the generator's
    defaults: n, seed, mu (0: no friction rows), mass_ratio, h, gravity, erp, slope (radians)."""
    g = _lcpkit.gen_defaults(str(kind))
    unknown = sorted(set(params) - set(g))
    if unknown:
        raise TypeError(f"generate: unknown parameters {unknown} (choose from {', '.join(g)})")
    g.update(params)
    p = _lcpkit.generate(str(kind), int(g["n"]), int(g["seed"]), float(g["mu"]), float(g["mass_ratio"]),
                         float(g["h"]), float(g["gravity"]), float(g["erp"]), float(g["slope"]))
    return Problem(p, None, float(g["h"]), f"lcpkit gen {kind}")
