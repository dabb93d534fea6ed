"""The Python package against the lcpkit command on the same files: the same lambda to the bit, the same stop
reason, iterations, work and RES; problems made from numpy arrays against hand-computed solutions and against
the command on the file they write; the generators and the FCLIB reader against `lcpkit gen` and `lcpkit fclib
import`; the core's messages as the exceptions' messages.

Run by CTest (test_python) with PYTHONPATH=build/python, LK_BIN (the lcpkit command) and LK_TEST_DATA."""

import csv
import json
import os
import pathlib
import subprocess
import threading

import numpy as np
import pytest

import lcpkit

LK_BIN = os.environ.get("LK_BIN", "build/lcpkit")
DATA = pathlib.Path(os.environ.get("LK_TEST_DATA", "tests/data"))
FILES = sorted(DATA.glob("*.lkp"))
SPECS = ["pgs", "psor:w=1.3", "amgs:iters=50", "pgs-sm:iters=5", "newton-fischer:iters=10", "gsp",
         "nncg:iters=30", "apgd", "pgs:coarse=2,tol=1e-6,budget=40", "amgs:warm=0,iters=30"]


def cli(*args, check=True):
    r = subprocess.run([LK_BIN, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode not in (0, 3):  # 3: a --tol not met, a result all the same
        raise AssertionError(f"lcpkit {' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr}")
    return r


def cli_solve(path, spec, tmp_path, history=False):
    """lambda, the JSON statistics and (with history) the history CSV of `lcpkit solve`."""
    out = tmp_path / "lambda.csv"
    args = ["solve", path, "--solver", spec, "--out", out, "--json"]
    if history:
        args += ["--history", tmp_path / "history.csv"]
    stats = json.loads(cli(*args).stdout)
    with open(out) as f:
        lam = np.array([float(row["lambda"]) for row in csv.DictReader(f)])
    hist = None
    if history:
        with open(tmp_path / "history.csv") as f:
            hist = list(csv.DictReader(f))
    return lam, stats, hist


def same_bits(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


def test_data_present():
    assert len(FILES) >= 4, f"no problem files in {DATA}"


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_solve_is_the_command(path, spec, tmp_path):
    lam, stats, _ = cli_solve(path, spec, tmp_path)
    r = lcpkit.solve(lcpkit.read(path), spec)
    assert same_bits(r.lambda_, lam)
    assert r.stop_reason == stats["stop_reason"]
    assert r.iterations == stats["iterations"]
    assert r.stats["row_updates"] == stats["row_updates"]
    assert r.spec == stats["solver"]
    for key, ours in (("work", r.work), ("res_final", r.res), ("res_initial", r.res_initial)):
        theirs = stats[key]
        assert (theirs is None and np.isnan(ours)) or ours == theirs, key


def test_history_is_the_command(tmp_path):
    path, spec = DATA / "boxstack.lkp", "pgs-sm:iters=6"
    _, _, rows = cli_solve(path, spec, tmp_path, history=True)
    h = lcpkit.solve(lcpkit.read(path), spec, history=True).history
    assert len(h.res) == len(rows) > 6
    assert h.iteration.tolist() == [int(r["iteration"]) for r in rows]
    assert h.row_updates.tolist() == [int(r["row_updates"]) for r in rows]
    for col in ("res", "theta", "fischer"):
        assert same_bits(getattr(h, col), [float(r[col]) for r in rows]), col
    assert np.all(np.diff(h.seconds) >= 0)
    assert lcpkit.solve(lcpkit.read(path), spec).history is None


def test_w_du_and_metrics():
    p = lcpkit.read(DATA / "boxstack.lkp")
    r = lcpkit.solve(p, "pgs:iters=300")
    assert same_bits(r.w, p.apply(r.lambda_))
    A, q = p.dense()
    assert np.allclose(r.w, A @ r.lambda_ + q, rtol=0, atol=1e-12 * np.abs(q).max())
    assert r.du.shape == (p.n_bodies, 6)
    assert p.metrics(r.lambda_)["res"] == pytest.approx(r.res, rel=1e-12)
    # RES recomputed here from its definition (docs/maths.md): H = lambda - mid(lo, lambda - w, hi), a friction
    # row's bounds mu times its normal row's impulse
    b = p.bounds()
    fr = b["findex"] >= 0
    lo, hi = b["lo"].copy(), b["hi"].copy()
    lo[fr] = -b["mu"][fr] * np.abs(r.lambda_[b["findex"][fr]])
    hi[fr] = -lo[fr]
    H = r.lambda_ - np.clip(r.lambda_ - r.w, lo, hi)
    assert np.linalg.norm(H) == pytest.approx(r.res, rel=1e-9)
    assert fr.sum() >= 40 and np.all(r.lambda_[~fr] >= lo[~fr])


def test_solve_leaves_the_problem_as_it_was():
    p = lcpkit.read(DATA / "bullet-boxstack20-step6.lkp")
    warm = p.lambda_
    a = lcpkit.solve(p, "amgs:iters=20")
    b = lcpkit.solve(p, "amgs:iters=20")
    assert same_bits(a.lambda_, b.lambda_)
    assert same_bits(p.lambda_, warm)
    # a warm start given to the call is the start of that call only; cold is the spec's warm=0
    c = lcpkit.solve(p, "amgs:iters=20", warm=np.zeros(p.n_rows))
    d = lcpkit.solve(p, "amgs:iters=20,warm=0")
    assert same_bits(c.lambda_, d.lambda_) and not same_bits(c.lambda_, a.lambda_)
    assert same_bits(p.lambda_, warm)


def test_matrix_form_from_numpy_is_the_command(tmp_path):
    src = lcpkit.read(DATA / "ode-slide-step10.lkp")
    A, q = src.dense()
    b = src.bounds()
    m = lcpkit.Problem.from_matrix(A, q, lo=b["lo"], hi=b["hi"], mu=b["mu"], findex=b["findex"])
    assert m.form == "matrix" and m.n_rows == src.n_rows and m.n_bodies == 0
    A2, q2 = m.dense()
    assert same_bits(A2, A) and same_bits(q2, q)

    class Csr:  # what scipy.sparse.csr_matrix offers, without scipy
        def __init__(self, D):
            rows, cols = np.nonzero(D)
            self.shape = D.shape
            self.indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=D.shape[0]))])
            self.indices, self.data = cols, D[rows, cols]

    s = lcpkit.Problem.from_matrix(Csr(A), q, lo=b["lo"], hi=b["hi"], mu=b["mu"], findex=b["findex"])
    path = tmp_path / "matrix.lkp"
    m.write(path)
    lam, stats, _ = cli_solve(path, "pgs:iters=40", tmp_path)
    for problem in (m, s, lcpkit.read(path)):
        r = lcpkit.solve(problem, "pgs:iters=40")
        assert same_bits(r.lambda_, lam) and r.stop_reason == stats["stop_reason"]
        assert r.du is None


def sliding_box(mu=0.5, h=0.01, g=9.81, mass=2.0, vx=1.0):
    """A box of mass m on the ground, sliding at vx: one normal row and one friction row through its centre
    (world frame), so that A is diagonal and the solution is known: the normal impulse stops the fall of one
    step, lambda_n = m g h, and friction takes at most mu lambda_n off the sliding momentum."""
    u = np.array([[vx, 0.0, -g * h, 0.0, 0.0, 0.0]])
    J = np.zeros((2, 2, 6))
    J[0, 0, 2] = 1.0  # normal along z
    J[1, 0, 0] = 1.0  # friction along x
    return lcpkit.Problem.from_rows(u, inv_mass=1 / mass, inv_inertia=np.eye(3)[None] / mass, body=[[0, -1], [0, -1]],
                                    J=J, lo=[0.0, -np.inf], mu=[0.0, mu], findex=[-1, 0], kind=["normal", "friction"])


def test_row_form_from_numpy_against_the_hand_solution(tmp_path):
    mu, h, g, mass, vx = 0.5, 0.01, 9.81, 2.0, 1.0
    p = sliding_box(mu, h, g, mass, vx)
    assert (p.form, p.n_rows, p.n_bodies) == ("rows", 2, 1)
    r = lcpkit.solve(p, "pgs:iters=5")
    ln = mass * g * h
    assert r.lambda_ == pytest.approx([ln, -mu * ln], rel=1e-14)
    assert r.w[0] == pytest.approx(0.0, abs=1e-15)                  # resting: no normal velocity left
    assert r.w[1] == pytest.approx(vx - mu * ln / mass, rel=1e-14)   # still sliding, slower
    assert r.du[0] == pytest.approx([-mu * ln / mass, 0, g * h, 0, 0, 0], rel=1e-14, abs=1e-15)
    assert r.res == pytest.approx(0.0, abs=1e-15)
    # slow enough and friction stops it: the friction impulse takes exactly the momentum
    q = sliding_box(mu, h, g, mass, vx=0.01)
    assert lcpkit.solve(q, "pgs:iters=5").lambda_[1] == pytest.approx(-0.01 * mass, rel=1e-14)
    # the file it writes solves the same in the command, to the bit
    p.write(tmp_path / "box.lkp")
    lam, stats, _ = cli_solve(tmp_path / "box.lkp", "pgs:iters=5", tmp_path)
    assert same_bits(lam, r.lambda_) and stats["stop_reason"] == r.stop_reason


def test_row_form_warm_start_and_kinds():
    p = sliding_box()
    p.lambda_ = [0.1, 0.0]
    assert p.lambda_.tolist() == [0.1, 0.0]
    assert p.bounds()["kind"].tolist() == [lcpkit.ROW_KINDS.index("normal"), lcpkit.ROW_KINDS.index("friction")]
    with pytest.raises(ValueError, match="kind: unknown"):
        lcpkit.Problem.from_rows(np.zeros((1, 6)), 1.0, np.eye(3)[None], [[0, -1]], np.zeros((1, 2, 6)), kind="hinge")


@pytest.mark.parametrize("kind,params,args", [
    ("boxstack", {"n": 6, "mu": 0.3, "seed": 2}, ["--n", 6, "--friction", 0.3, "--seed", 2]),
    ("packing", {"n": 40, "mass_ratio": 10.0}, ["--n", 40, "--mass-ratio", 10]),
    ("fluid", {"n": 64}, ["--n", 64]),
    ("chain", {}, []),
])
def test_generators_are_the_command(kind, params, args, tmp_path):
    path = tmp_path / f"{kind}.lkp"
    cli("gen", kind, *args, "--out", path)
    ours, theirs = lcpkit.generate(kind, **params), lcpkit.read(path)
    assert (ours.form, ours.n_rows, ours.n_bodies) == (theirs.form, theirs.n_rows, theirs.n_bodies)
    lam, stats, _ = cli_solve(path, "pgs:iters=30", tmp_path)
    r = lcpkit.solve(ours, "pgs:iters=30")
    assert same_bits(r.lambda_, lam) and r.stop_reason == stats["stop_reason"]
    assert set(lcpkit.GENERATORS) >= {"boxstack", "spherestack", "packing", "fluid", "chain", "heavy-on-light",
                                      "incline"}


def test_fclib_is_the_command(tmp_path):
    hdf5, lkp = tmp_path / "stack.hdf5", tmp_path / "stack.lkp"
    cli("fclib", "export", DATA / "boxstack.lkp", hdf5)
    cli("fclib", "import", hdf5, lkp)
    p = lcpkit.read_fclib(hdf5)
    assert p.form == "matrix" and p.n_rows == lcpkit.read(DATA / "boxstack.lkp").n_rows
    A, q = p.dense()
    A2, q2 = lcpkit.read(lkp).dense()
    assert same_bits(A, A2) and same_bits(q, q2)
    lam, stats, _ = cli_solve(lkp, "pgs:friction=cone,iters=50", tmp_path)
    r = lcpkit.solve(p, "pgs:friction=cone,iters=50")
    assert same_bits(r.lambda_, lam) and r.stop_reason == stats["stop_reason"]


def command_message(*args):
    """The one line the command prints for an error, without its 'lcpkit CMD: ' prefix."""
    r = cli(*args, check=False)
    assert r.returncode != 0
    line = r.stderr.strip().splitlines()[0]
    return line.split(": ", 1)[1]


@pytest.mark.parametrize("bad", sorted((DATA / "bad").glob("*")), ids=lambda p: p.name)
def test_unreadable_files_raise_the_core_message(bad):
    with pytest.raises(lcpkit.Error) as e:
        lcpkit.read(bad)
    assert e.value.message == str(e.value) == command_message("solve", bad)
    assert e.value.message.startswith(f"{bad}:")
    assert e.value.status in ("parse error", "invalid bounds", "invalid friction index", "invalid mass",
                              "non-finite value", "size limit exceeded", "index out of range")


def test_errors_raise_the_core_message(tmp_path):
    p = lcpkit.read(DATA / "boxstack.lkp")
    with pytest.raises(lcpkit.Error) as e:
        lcpkit.solve(p, "amgs:alpha=x")
    assert e.value.status == "parse error"
    assert e.value.message == command_message("solve", DATA / "boxstack.lkp", "--solver", "amgs:alpha=x")
    with pytest.raises(lcpkit.Error) as e:
        lcpkit.canonical_spec("nosuch")
    assert e.value.message == command_message("solve", DATA / "boxstack.lkp", "--solver", "nosuch")
    assert lcpkit.canonical_spec("psor:w=1.3") == "psor:w=1.3"
    junk = tmp_path / "junk.hdf5"
    junk.write_text("not hdf5\n")
    with pytest.raises(lcpkit.Error) as e:
        lcpkit.read_fclib(junk)
    assert e.value.message == command_message("fclib", "import", junk, tmp_path / "out.lkp")
    with pytest.raises(lcpkit.Error, match="no such file"):
        lcpkit.read_fclib(tmp_path / "missing.hdf5")
    with pytest.raises(lcpkit.Error) as e:
        lcpkit.read(tmp_path / "missing.lkp")
    assert e.value.status == "input/output error"
    # the core's validation of numbers the arrays carry
    with pytest.raises(lcpkit.Error, match="row 0: lo 2 > hi 1") as e:
        lcpkit.Problem.from_matrix([[1.0]], [1.0], lo=[2.0], hi=[1.0])
    assert e.value.status == "invalid bounds"
    with pytest.raises(lcpkit.Error) as e:
        lcpkit.Problem.from_matrix([[1.0, 0], [0, np.nan]], [1.0, 0.0])
    assert e.value.status == "non-finite value"
    with pytest.raises(lcpkit.Error) as e:
        lcpkit.Problem.from_rows(np.zeros((1, 6)), -1.0, np.eye(3)[None], [[0, -1]], np.ones((1, 2, 6)))
    assert e.value.status == "invalid mass"
    with pytest.raises(lcpkit.Error) as e:
        lcpkit.Problem.from_rows(np.zeros((1, 6)), 1.0, np.eye(3)[None], [[3, -1]], np.ones((1, 2, 6)))
    assert e.value.status == "index out of range"
    with pytest.raises(lcpkit.Error) as e:
        lcpkit.generate("nosuch")
    assert "unknown generator 'nosuch'" in e.value.message
    with pytest.raises(lcpkit.Error) as e:
        lcpkit.generate("boxstack", n=0)
    assert e.value.message == "generate: n = 0 outside 1..10000000" and e.value.status == "size limit exceeded"
    with pytest.raises(lcpkit.Error):
        p.lambda_ = np.full(p.n_rows, np.inf)


def test_shapes_and_types_are_value_errors():
    with pytest.raises(ValueError, match=r"A: shape \(2, 3\)"):
        lcpkit.Problem.from_matrix(np.ones((2, 3)), [1.0, 2.0])
    with pytest.raises(ValueError, match="findex: integers expected"):
        lcpkit.Problem.from_matrix(np.eye(2), [1.0, 2.0], findex=[0.5, -1])
    with pytest.raises(ValueError, match="u: shape"):
        lcpkit.Problem.from_rows(np.zeros((1, 5)), 1.0, np.eye(3)[None], [[0, -1]], np.zeros((1, 2, 6)))
    with pytest.raises(ValueError, match="warm"):
        lcpkit.solve(lcpkit.read(DATA / "boxstack.lkp"), "pgs", warm=[1.0])
    with pytest.raises(TypeError, match="unknown parameters"):
        lcpkit.generate("boxstack", friction=0.5)
    with pytest.raises(TypeError):
        lcpkit.solve("boxstack.lkp", "pgs")
    with pytest.raises(TypeError):
        lcpkit.Problem(None)


def test_solves_run_in_threads():
    """The GIL is released while the core solves: four threads solve four problems at once, each the same to
    the bit as alone."""
    problems = [lcpkit.read(DATA / "bullet-boxstack20-step6.lkp") for _ in range(4)]
    alone = lcpkit.solve(problems[0], "pgs:iters=200").lambda_
    out = [None] * 4

    def run(k):
        out[k] = lcpkit.solve(problems[k], "pgs:iters=200").lambda_

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(same_bits(x, alone) for x in out)
