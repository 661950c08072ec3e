"""The `lcp` solver family (physics/solvers/lcp/, seeds 003 and 004): the bilateral
elimination M̂ (seed 004 eq. 13, corrected) against dense algebra, the LCP against
reference solves, contacts and impacts against closed forms (the impulse solver's tests
in test_contacts.py, run under lcp), agreement with `impulse`, and seed 004's four-bar."""
import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from physics import Box, World, load_scene
from physics.reference import inverse_mass_matrix, jacobian_matrix, world_inertia
from physics.shapes import Sphere
from physics.solvers.lcp import mhat_dense
from physics.solvers.dense import solve_blcp
from test_contacts import G, ground_world, pyramid_sweeps

ROOT = Path(__file__).resolve().parent.parent
SCENES = sorted((ROOT / "scenes").glob("*.toml"))
FOUR_BAR = ROOT / "scenes" / "four_bar.toml"


# ---------------------------------------------------------------------------- references
def brute_force_blcp(A, b, lo, hi, mu=None, groups=None, tol=1e-9):
    """Every λ solving the BLCP of dense (fixed bounds, or friction rows bounded by
    ±mu Σλ over their group), by enumerating which bound (or none) each row sits at and
    solving the linear system of that choice; returns the list of solutions."""
    n = len(b)
    mu = np.zeros(n) if mu is None else mu
    choices = []
    for i in range(n):
        if mu[i] > 0:
            choices.append(("free", "+", "-"))
        else:
            choices.append(("free",) + (("lo",) if np.isfinite(lo[i]) else ()) + (("hi",) if np.isfinite(hi[i]) else ()))
    out = []
    for combo in itertools.product(*choices):
        K, r = np.zeros((n, n)), np.zeros(n)
        for i, c in enumerate(combo):
            if c == "free":
                K[i], r[i] = A[i], -b[i]
            elif c in ("lo", "hi"):
                K[i, i], r[i] = 1.0, lo[i] if c == "lo" else hi[i]
            else:
                K[i, i] = 1.0
                K[i, groups[i][0]:groups[i][1]] -= (1.0 if c == "+" else -1.0) * mu[i]
        x = np.linalg.lstsq(K, r, rcond=None)[0]
        if np.abs(K @ x - r).max() > 1e-9 * (1 + np.abs(r).max()):
            continue
        w = A @ x + b
        ok = True
        for i, c in enumerate(combo):
            if mu[i] > 0:
                bound = mu[i] * x[groups[i][0]:groups[i][1]].sum()
                ok &= bound >= -tol and abs(x[i]) <= bound + tol
                ok &= not (c == "+" and w[i] > tol) and not (c == "-" and w[i] < -tol)
                ok &= not (c == "free" and abs(w[i]) > tol)
            else:
                ok &= lo[i] - tol <= x[i] <= hi[i] + tol
                ok &= not (c == "lo" and w[i] < -tol) and not (c == "hi" and w[i] > tol)
                ok &= not (c == "free" and abs(w[i]) > tol)
        if ok:
            out.append(x)
    return out


def _random_tree(rng, n, kinds=("revolute", "spherical", "universal", "prismatic", "fixed")):
    """n boxes in random poses joined into a random tree (joints either way round)."""
    w = World(dt=0.01, solver="lcp")
    for i in range(n):
        q = rng.normal(size=4)
        w.add_body(f"b{i}", Box(tuple(rng.uniform(0.05, 0.3, 3))), mass=rng.uniform(0.1, 5.0),
                   position=rng.normal(size=3), orientation=q / np.linalg.norm(q))
    for i in range(n):
        parent = "world" if i == 0 else f"b{rng.integers(0, i)}"
        kind = kinds[rng.integers(len(kinds))]
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        extra = {}
        if kind == "universal":
            axis2 = np.cross(axis, rng.normal(size=3))
            extra["axis2"] = axis2 / np.linalg.norm(axis2)
        a, b = (parent, f"b{i}") if parent == "world" or rng.random() < 0.5 else (f"b{i}", parent)
        w.add_joint(f"j{i}", kind, a, b, anchor=rng.normal(size=3), axis=axis, **extra)
    w.configure_contacts(enabled=False)
    w.state.bodies.pos[1:] += rng.normal(scale=0.05, size=(n, 3))
    w._refresh_rows()
    return w


def _equality_rows(w):
    from physics.joint_types import BY_CODE
    m = w.model.joints
    return [m.row_start[k] + i for k in range(m.count) for i in range(BY_CODE[int(m.type[k])].n_eq)]


# ---------------------------------------------------------------------------- algebra
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mhat_is_symmetric_semidefinite_and_annihilates_the_equality_rows(seed):
    """M̂ = M⁻¹ − M⁻¹Φ G⁻¹ Φᵀ M⁻¹ (seed 004 eq. 13 with the sign corrected), each column by
    the step's O(N) tree solve, on random trees with every joint type: symmetric, positive
    semi-definite, Φᵀ M̂ = 0 (all to 1e-12 of its size) and equal to the dense formula."""
    rng = np.random.default_rng(seed)
    w = _random_tree(rng, 7)
    mhat = mhat_dense(w)
    nb = w.model.bodies.count
    minv = inverse_mass_matrix(w.model.bodies.inv_mass, world_inertia(w))
    phi = jacobian_matrix(w.work.rows.J, w.model.rows.body, _equality_rows(w), nb).T
    dense = minv - minv @ phi @ np.linalg.solve(phi.T @ minv @ phi, phi.T @ minv)
    scale = np.abs(mhat).max()
    assert np.abs(mhat - mhat.T).max() <= 1e-12 * scale
    assert np.linalg.eigvalsh(0.5 * (mhat + mhat.T)).min() >= -1e-12 * scale
    assert np.abs(phi.T @ mhat).max() <= 1e-12 * scale * np.abs(phi).max()
    assert np.abs(mhat - dense).max() <= 1e-9 * scale


def _random_fixed_bounds(rng, n):
    G_ = rng.normal(size=(n, n))
    A = G_ @ G_.T + 1e-3 * np.eye(n)
    lo = np.where(rng.random(n) < 0.3, -np.inf, -rng.uniform(0, 2, n))
    hi = np.where(rng.random(n) < 0.3, np.inf, rng.uniform(0, 2, n))
    lo[rng.random(n) < 0.3] = 0.0
    return A, rng.normal(size=n), lo, hi


@pytest.mark.parametrize("method", ["lemke", "pgs"])
def test_bounded_lcp_equals_reference_solves_on_random_problems(method):
    """Random bounded LCPs (one-sided, two-sided and free rows, n ≤ 6): Lemke and PGS give
    the λ of the brute-force enumeration of the complementarity conditions and of scipy's
    bounded least squares on the factored system (min ½λᵀAλ + bᵀλ = ½‖Lᵀλ + L⁻¹b‖²), to 1e-8."""
    rng = np.random.default_rng(5)
    for _ in range(40):
        n = int(rng.integers(1, 7))
        A, b, lo, hi = _random_fixed_bounds(rng, n)
        x, info = solve_blcp(A, b, lo, hi, method=method)
        (ref,) = brute_force_blcp(A, b, lo, hi)
        assert np.abs(x - ref).max() <= 1e-8 * max(1.0, np.abs(ref).max()), info
    from scipy import optimize           # the test extra's (pyproject.toml): never skipped
    for _ in range(20):
        n = int(rng.integers(1, 7))
        A, b, lo, hi = _random_fixed_bounds(rng, n)
        L = np.linalg.cholesky(A)
        ref = optimize.lsq_linear(L.T, -np.linalg.solve(L, b), bounds=(lo, hi), method="bvls", tol=1e-15).x
        x, _ = solve_blcp(A, b, lo, hi, method=method)
        assert np.abs(x - ref).max() <= 1e-8 * max(1.0, np.abs(ref).max())


def test_lemke_solves_friction_coupled_problems_like_the_enumeration():
    """Contacts with one or two normal rows and one or two friction rows bounded by
    ±μ Σλ_n (the pyramid the step uses): Lemke's λ is a solution of the enumeration, to 1e-8."""
    rng = np.random.default_rng(6)
    for _ in range(60):
        lo, hi, mu, groups = [], [], [], []
        for _c in range(int(rng.integers(1, 3))):
            g0 = len(lo)
            n_points = int(rng.integers(1, 3))
            for _p in range(n_points):
                lo.append(0.0), hi.append(np.inf), mu.append(0.0), groups.append((0, 0))
            coefficient = rng.uniform(0.1, 1.5)
            for _f in range(int(rng.integers(1, 3))):
                lo.append(0.0), hi.append(0.0), mu.append(coefficient), groups.append((g0, g0 + n_points))
        n = len(lo)
        G_ = rng.normal(size=(n, n))
        A, b = G_ @ G_.T + 1e-2 * np.eye(n), rng.normal(size=n)
        lo, hi, mu, groups = np.array(lo), np.array(hi), np.array(mu), np.array(groups)
        x, info = solve_blcp(A, b, lo, hi, mu, groups, method="lemke")
        solutions = brute_force_blcp(A, b, lo, hi, mu, groups)
        assert info["status"] == 0 and solutions
        assert min(np.abs(x - s).max() for s in solutions) <= 1e-8 * max(1.0, np.abs(x).max())


def test_lemke_reports_failure_instead_of_a_wrong_answer():
    """An infeasible LCP (w = −1 whatever λ ≥ 0) ends on a ray, not in a "solution"."""
    x, info = solve_blcp(np.zeros((1, 1)), np.array([-1.0]), np.array([0.0]), np.array([np.inf]), method="lemke")
    assert info["status"] != 0


def test_fallback_rule_row_count_time_cap_and_method():
    """A stack of five boxes has 35 one-sided and bounded rows: Lemke at the defaults; PGS
    when lemke_max_rows is below 35, or when the time cap is below Lemke's predicted time
    (method auto; `lemke` does not consult the prediction); PGS always with method pgs."""
    w = ground_world(0.01, solver="lcp")
    for i in range(5):
        w.add_body(f"b{i}", Box((0.1, 0.1, 0.1)), mass=1.0, position=(0.0, 0.0, 0.1 + 0.2 * i))
    cases = [({}, "lemke"), ({"lemke_max_rows": 34}, "pgs"), ({"lemke_max_rows": 64, "lcp_time_cap_ms": 1e-4}, "pgs"),
             ({"lcp_method": "lemke"}, "lemke"), ({"lcp_method": "pgs", "lcp_time_cap_ms": 0.0}, "pgs")]
    for settings, method in cases:
        w.configure("lcp", **settings)
        w.step()
        assert (w.stats.rows, w.stats.method, w.stats.fallbacks) == (35, method, 0), settings


def _stack_lcp(steps=30):
    """The stack scene under lcp after `steps` steps: (world, solver, tree, lw, U rows, bodies,
    joints, work) — its velocity LCP has more rows than Lemke takes, none on a joint tree."""
    w = load_scene(str(ROOT / "scenes" / "stack.toml"))
    w.solver = "lcp"
    w.advance_steps(steps)
    solver = w.solvers["lcp"]
    nu = int(w.stats.rows)
    assert nu > 64
    _, bodies, _, joints, _, _, work = w.kernel_bundles(solver.free_rows_used(w), False)
    return w, solver, solver.tree(w), solver._work, nu, bodies, joints, work


def test_sparse_system_holds_the_same_matrix_as_the_dense_build():
    """Above Lemke's row count the LCP matrix A = J_U M̂ J_Uᵀ is built as CSR rows of its
    nonzeros (sparse_system) instead of densely: on the stack scene's boxes both builds give
    the same A to 1e-12 of its largest entry (the dense build's symmetrization only moves
    round-off)."""
    from physics.solvers.lcp.system import build_system, sparse_system
    _, _, tree, lw, nu, bodies, joints, work = _stack_lcp()
    build_system(nu, 0, 0, False, tree, joints.body, bodies.inv_mass, work.inv_inertia_world, lw)
    dense = lw.A[:nu, :nu].copy()
    sparse_system(nu, tree, joints.body, bodies.inv_mass, work.inv_inertia_world, lw)   # rows per body: the build's
    sparse = np.zeros((nu, nu))
    for i in range(nu):
        for k in range(lw.a_ptr[i], lw.a_ptr[i + 1]):
            sparse[i, lw.a_idx[k]] += lw.a_val[k]
    scale = np.abs(dense).max()
    assert np.abs(sparse - dense).max() <= 1e-12 * scale
    assert np.abs(lw.a_diag[:nu] - np.diag(dense)).max() <= 1e-12 * scale


def test_velocity_form_holds_the_dense_matrix_and_sweeps_as_pgs_on_it():
    """The stack's rows are on bodies of no tree, so the sparse build forms no A (velocity
    form: M⁻¹J_uᵀ per row, velocity_pgs.py). Its products A λ = J_U (M⁻¹J_Uᵀ λ) + ε λ equal
    the dense A λ to 1e-12 for random λ, its diagonal the dense diagonal, and velocity_pgs
    (with its patch passes on the couplings K of a contact's rows) and dense.pgs on the
    assembled A, from the same start at tolerance 0, both solve the BLCP of the dense A in
    3000 sweeps: residual below 1e-6 of |b|
    (a stack's Gauss–Seidel is slow), and the same A λ + b to 1e-6 (the rows' speeds; the λ
    of a box's four points are not unique)."""
    from physics.solvers.dense import blcp_residual, pgs, sparsity
    from physics.solvers.lcp.system import build_system
    from physics.solvers.lcp.velocity_pgs import velocity_pgs
    _, _, tree, lw, nu, bodies, joints, work = _stack_lcp()
    build_system(nu, 0, 0, False, tree, joints.body, bodies.inv_mass, work.inv_inertia_world, lw)
    dense = lw.A[:nu, :nu].copy()
    build_system(nu, 0, 0, True, tree, joints.body, bodies.inv_mass, work.inv_inertia_world, lw)
    assert lw.fast[0] == 1
    scale = np.abs(dense).max()
    assert np.abs(lw.a_diag[:nu] - np.diag(dense)).max() <= 1e-12 * scale
    J, mj, body, eps = lw.u_J[:nu], lw.u_mj[:nu], lw.u_body[:nu], lw.u_eps[:nu]
    rng = np.random.default_rng(3)
    for _ in range(5):
        lam = rng.normal(size=nu)
        D = np.zeros((len(bodies.inv_mass), 6))
        np.add.at(D, body[:, 0], mj[:, :6] * lam[:, None])
        np.add.at(D, body[:, 1], mj[:, 6:] * lam[:, None])
        a_lam = np.einsum("uk,uk->u", J[:, :6], D[body[:, 0]]) + np.einsum("uk,uk->u", J[:, 6:], D[body[:, 1]]) \
            + eps * lam
        assert np.abs(a_lam - dense @ lam).max() <= 1e-12 * scale * np.abs(lam).sum()
    b, lo, hi, mu, g0, g1 = (lw.b[:nu].copy(), lw.u_lo[:nu].copy(), lw.u_hi[:nu].copy(), lw.u_mu[:nu].copy(),
                             lw.u_g0[:nu].copy(), lw.u_g1[:nu].copy())
    start = lw.x[:nu].copy()
    x_fast = start.copy()
    velocity_pgs(nu, b, lo, hi, mu, g0, g1, x_fast, 3000, 0.0, 0.0, 0.0, lw)
    ptr, idx, val, diag = np.zeros(nu + 1, np.int64), np.zeros(nu * nu, np.int64), np.zeros(nu * nu), np.zeros(nu)
    sparsity(dense, nu, ptr, idx, val, diag)
    x_csr = start.copy()
    pgs(ptr, idx, val, diag, b, lo, hi, mu, g0, g1, nu, x_csr, 3000, 0.0, 0.0)
    size = np.abs(b).max()
    for x in (x_fast, x_csr):
        assert blcp_residual(dense, b, lo, hi, mu, g0, g1, nu, x) <= 1e-6 * size
    assert np.abs((dense @ x_fast + b) - (dense @ x_csr + b)).max() <= 1e-6 * size


def _patch_sweeps_on_dense(A, b, lo, hi, mu, g0, g1, body, x, sweeps, passes, run_max):
    """Projected Gauss–Seidel on the dense A in velocity_pgs's order: the runs of rows of one
    body pair (run_max at most) in turn, each swept `passes` times in a row (once for a run
    of 3 rows or fewer)."""
    n = len(b)
    runs, s = [], 0
    while s < n:
        e = s + 1
        while e < n and e - s < run_max and (body[e] == body[s]).all():
            e += 1
        runs.append((s, e))
        s = e
    for _ in range(sweeps):
        for s, e in runs:
            for _ in range(passes if e - s > 3 else 1):
                for i in range(s, e):
                    c = mu[i] * max(x[g0[i]:g1[i]].sum(), 0.0) if mu[i] > 0 else None
                    lo_i, hi_i = (-c, c) if c is not None else (lo[i], hi[i])
                    x[i] = min(max(x[i] - (A[i] @ x + b[i]) / A[i, i], lo_i), hi_i)
    return x


def test_velocity_form_sweeps_a_contact_on_its_couplings_with_the_iterates_of_gauss_seidel():
    """velocity_pgs sweeps a contact's rows (one body pair, ≤ RUN_MAX rows) on their
    couplings K = J M⁻¹ Jᵀ, reading the bodies' velocities once per run: its λ after 1 and 4
    sweeps equal plain projected Gauss–Seidel on the dense A in the same order (each run
    PATCH_PASSES passes in a row, friction bounds from the current normals) to 1e-9 of the
    largest |λ| — round-off apart, the same iterates; a wrong coupling changes them at once."""
    from physics.solvers.lcp.system import build_system
    from physics.solvers.lcp.velocity_pgs import PATCH_PASSES, RUN_MAX, velocity_pgs
    _, _, tree, lw, nu, bodies, joints, work = _stack_lcp()
    build_system(nu, 0, 0, False, tree, joints.body, bodies.inv_mass, work.inv_inertia_world, lw)
    dense = lw.A[:nu, :nu].copy()
    build_system(nu, 0, 0, True, tree, joints.body, bodies.inv_mass, work.inv_inertia_world, lw)
    body = lw.u_body[:nu].copy()
    runs = np.flatnonzero(np.r_[True, (body[1:] != body[:-1]).any(axis=1), True])
    assert 3 < np.diff(runs).max() <= RUN_MAX       # patches of normals and friction rows, swept on K
    b, lo, hi, mu, g0, g1 = (lw.b[:nu].copy(), lw.u_lo[:nu].copy(), lw.u_hi[:nu].copy(), lw.u_mu[:nu].copy(),
                             lw.u_g0[:nu].copy(), lw.u_g1[:nu].copy())
    start = np.clip(lw.x[:nu].copy(), np.where(mu > 0, -np.inf, lo), np.where(mu > 0, np.inf, hi))
    for sweeps in (1, 4):
        x_fast = start.copy()
        velocity_pgs(nu, b, lo, hi, mu, g0, g1, x_fast, sweeps, 0.0, 0.0, 0.0, lw)
        x_ref = _patch_sweeps_on_dense(dense, b, lo, hi, mu, g0, g1, body, start.copy(), sweeps, PATCH_PASSES,
                                       RUN_MAX)
        assert np.abs(x_fast - x_ref).max() <= 1e-9 * np.abs(x_ref).max(), sweeps
        assert np.abs(x_fast - start).max() > 1e-6 * np.abs(x_ref).max()   # the sweeps moved λ


def test_params_have_one_numba_type_whatever_the_settings():
    """The kernel's Params (settings.make_params) have one numba type for every method,
    drift correction and flag, with integral values given for float settings and for the
    clock's rate: the kernel compiles once."""
    from numba import typeof
    from physics.solvers.lcp import LcpSolver
    from physics.solvers.lcp.settings import make_params
    solver = LcpSolver()
    types = set()
    for method, stabilization, flag in itertools.product(("auto", "lemke", "pgs"), ("split", "baumgarte", "none"),
                                                         (False, True)):
        solver.configure(lcp_method=method, lcp_stabilization=stabilization, impact_lcp=flag, projection=flag,
                         geometric_stiffness=not flag, pgs_tolerance=1 if flag else 1e-9, lcp_erp=1 if flag else 0.2,
                         lcp_time_cap_ms=0 if flag else 0.5)
        types.add(typeof(make_params(solver.settings, 0 if flag else 1e3, 0.01 if flag else 1, flag,
                                     np.bool_(not flag))))
    assert len(types) == 1, types


def test_a_step_that_outgrows_the_work_is_redone_from_its_start_bit_for_bit():
    """Eight boxes dropped onto the ground: the step in which they land needs more rows
    than the lcp work holds, so the kernel stops before it, the work grows and the call
    goes on from that step; after 200 steps the state equals, bit for bit, that of a
    solver which had room for every row from the start."""
    worlds = []
    for room in (None, (1024, 8)):
        w = ground_world(0.005, solver="lcp")
        for i in range(8):
            w.add_body(f"b{i}", Box((0.1, 0.1, 0.1)), mass=1.0, position=(0.5 * i, 0.0, 0.3 + 0.02 * i))
        solver = w.solvers["lcp"]
        if room:
            solver._room = room
        first = solver._room
        w.advance_steps(200)
        worlds.append((w, first, solver._room))
    (grown, first, last), (roomy, _, _) = worlds
    assert last[0] > first[0] and grown.stats.rows > first[0] and grown.stats.steps == 200
    for name in ("pos", "quat", "vel", "omega"):
        assert np.array_equal(getattr(grown.state.bodies, name), getattr(roomy.state.bodies, name)), name


def test_one_step_equals_the_dense_mixed_lcp_of_the_same_rows():
    """A tree of a hinge at its stop (limit row active), a slider at its stop and a ball
    joint, all with joint friction: one lcp step (no drift correction) gives the velocities
    of the dense reference — M̂ by the dense formula, A = J_U M̂ J_Uᵀ, b = J_U M̂ M V*, the
    BLCP by enumeration, V = M̂ (M V* + J_Uᵀ λ) — to 1e-9."""
    rng = np.random.default_rng(3)
    w = World(dt=0.01, solver="lcp")
    w.add_body("a", Box((0.2, 0.05, 0.05)), mass=1.0, position=(0.2, 0, 1))
    w.add_body("b", Box((0.1, 0.05, 0.05)), mass=0.7, position=(0.5, 0, 1))
    w.add_body("c", Box((0.1, 0.1, 0.1)), mass=1.3, position=(0.7, 0, 1))
    w.add_joint("hinge", "revolute", "world", "a", anchor=(0, 0, 1), axis=(0, 1, 0), limits=(0.1, 0.5), friction=3.0)
    w.add_joint("slide", "prismatic", "a", "b", anchor=(0.4, 0, 1), axis=(1, 0, 0), limits=(0.05, 0.2),
                friction=5.0)
    w.add_joint("ball", "spherical", "b", "c", anchor=(0.6, 0, 1), axis=(1, 0, 0), friction=0.4)
    w.configure_contacts(enabled=False)
    w.configure("lcp", lcp_stabilization="none", projection=False)
    w.state.bodies.vel[1:] = rng.normal(size=(3, 3))
    w.state.bodies.omega[1:] = rng.normal(size=(3, 3))
    w._refresh_rows()
    nb, dt = w.model.bodies.count, w.dt
    rows, kinds = w.work.rows, w.model.rows.kind
    m, rj = w.model.joints, w.model.rows.joint
    limits = [r for r in range(len(kinds)) if kinds[r] == 1 and rows.active[r] != 0]
    free = [r for r in range(len(kinds)) if kinds[r] == 2 and m.friction[rj[r]] > 0]
    assert len(limits) == 2 and len(free) == 5
    minv = inverse_mass_matrix(w.model.bodies.inv_mass, world_inertia(w))
    M = np.linalg.pinv(minv)
    phi = jacobian_matrix(rows.J, w.model.rows.body, _equality_rows(w), nb).T
    mhat = minv - minv @ phi @ np.linalg.solve(phi.T @ minv @ phi, phi.T @ minv)
    Ju = jacobian_matrix(rows.J, w.model.rows.body, limits + free, nb)
    V = np.hstack([w.state.bodies.vel, w.state.bodies.omega]).ravel()
    for i in range(1, nb):
        V[6 * i:6 * i + 3] += w.gravity * dt
    A, b = Ju @ mhat @ Ju.T, Ju @ mhat @ M @ V
    lo = np.array([0.0 if rows.active[r] > 0 else -np.inf for r in limits] + [-m.friction[rj[r]] * dt for r in free])
    hi = np.array([np.inf if rows.active[r] > 0 else 0.0 for r in limits] + [m.friction[rj[r]] * dt for r in free])
    solutions = brute_force_blcp(A, b, lo, hi)
    assert solutions
    ref = mhat @ (M @ V + Ju.T @ solutions[0])
    w.step()
    got = np.hstack([w.state.bodies.vel, w.state.bodies.omega]).ravel()
    assert np.abs(got - ref).max() <= 1e-9 * np.abs(ref).max()
    assert w.stats.method == "lemke" and w.stats.rows == 7


# ---------------------------------------------------------------------------- contacts (test_contacts.py, under lcp)
def test_sphere_rebounds_to_e_squared_times_drop_height():
    """Dropped from H = 1 m with e = 0.5 at Δt = 1 ms, a sphere comes back up to e²·H (2 %);
    the impact LCP makes ġ⁺ = −e·ġ⁻ exactly (stats)."""
    dt, r = 0.001, 0.1
    w = ground_world(dt, solver="lcp")
    ball = w.add_body("ball", Sphere(r), mass=1.0, position=(0, 0, 1.0 + r), restitution=0.5)
    heights, impacts = [], []
    for _ in range(int(1.2 / dt)):
        w.step()
        heights.append(ball.position[2] - r)
        impacts.extend(w.stats.impacts)
    heights = np.array(heights)
    impact = int(np.argmin(heights[:int(0.7 / dt)]))
    assert abs(impact * dt - math.sqrt(2.0 / G)) < 2 * dt
    assert heights[impact:].max() == pytest.approx(0.25, rel=0.02)
    first = impacts[0]
    assert first[4] == pytest.approx(-0.5 * first[3], abs=1e-9)
    assert first[3] == pytest.approx(-math.sqrt(2 * G * 1.0), rel=0.01)


def test_one_advance_reports_the_impacts_of_all_its_kernel_calls():
    """An advance runs as several kernel calls (split here at a motor event at 0.6 s): the
    stats of 1.2 s advanced at once hold every impact of the sphere dropped from H = 1 m
    with e = 0.5 — at √(2H/g), then 2√(2H/g) and 2.5√(2H/g) — with the ones the same steps
    taken one by one record, and count every step."""
    dt, r = 0.001, 0.1
    worlds = []
    for _ in range(2):
        w = ground_world(dt, solver="lcp")
        w.add_body("ball", Sphere(r), mass=1.0, position=(0, 0, 1.0 + r), restitution=0.5)
        w.add_body("arm", Box((0.1, 0.02, 0.02)), mass=1.0, position=(5.1, 0, 1.0))
        w.add_joint("axle", "revolute", "world", "arm", anchor=(5.0, 0, 1.0), axis=(0, 1, 0))
        w.joint("axle").set_motor("velocity", target=1.0, max_force=10.0)
        w.add_motor_event("axle", time=0.6, target=-1.0)
        worlds.append(w)
    whole, stepped = worlds
    whole.advance_steps(1200)
    impacts = []
    for _ in range(1200):
        stepped.step()
        impacts.extend(stepped.stats.impacts)
    assert whole.stats.steps == 1200
    t1 = math.sqrt(2.0 / G)
    times = whole.stats.impacts[:, 0]
    for t in (t1, 2.0 * t1, 2.5 * t1):
        assert np.abs(times - t).min() < 5 * dt, t
    assert whole.stats.impacts.shape == (len(impacts), 9)
    assert np.allclose(whole.stats.impacts, np.array(impacts), rtol=1e-9, atol=1e-12)


def test_resting_box_carries_its_weight_exactly():
    """A box at rest on the ground: speed < 1e-3 m/s after 1 s, no deeper than the slop,
    and the ground's normal impulses per step sum to m·g·Δt (1e-6)."""
    dt, m = 0.01, 2.0
    w = ground_world(dt, solver="lcp")
    box = w.add_body("box", Box((0.2, 0.15, 0.1)), mass=m, position=(0, 0, 0.11), angular_velocity=(0.3, -0.2, 0))
    w.advance(1.0)
    assert np.linalg.norm(box.velocity) < 1e-3 and np.linalg.norm(box.angular_velocity) < 1e-3
    c = w.contacts()
    assert len(c["depth"]) == 4 and c["depth"].max() <= w.contact_settings["slop"] + 1e-9
    assert c["normal_impulse"].sum() == pytest.approx(m * G * dt, abs=1e-6)


@pytest.mark.parametrize("yaw_deg", [0.0, 45.0])
@pytest.mark.parametrize("mu", [0.7, 0.3])
def test_box_on_incline_sticks_or_slides_at_coulomb_acceleration(mu, yaw_deg):
    """30° incline: μ = 0.7 sticks, μ = 0.3 slides at g(sin 30° − μ cos 30°) (2 %), straight
    down the slope and without spin, whatever the box's yaw (test_contacts.py, under lcp)."""
    from test_contacts import test_box_on_incline_sticks_or_slides_at_coulomb_acceleration as impulse_version
    impulse_version("lcp", mu, yaw_deg)


def test_stack_of_five_boxes_stands_ten_seconds():
    """Five 20 cm boxes stacked on the ground: after 10 s none has moved by 1 mm (Lemke:
    35 rows, 65 LCP variables per step)."""
    w = ground_world(0.01, solver="lcp")
    for i in range(5):
        w.add_body(f"b{i}", Box((0.1, 0.1, 0.1)), mass=1.0, position=(0.0, 0.0, 0.1 + 0.2 * i))
    p0 = w.state.bodies.pos.copy()
    w.advance(10.0)
    assert np.abs(w.state.bodies.pos - p0).max() < 1e-3
    # Lemke solves at least 80 % of the 1000 steps. The stack's LCP (four coplanar points
    # per face: redundant rows) reaches a degenerate basis now and then (LEMKE_LOST), which
    # PGS solves from the warm start; how often, and whether the last step is one of them,
    # depends on round-off (which of two equally deep corners the manifold reduction keeps)
    assert w.step_count == 1000 and w.stats.fallbacks <= 200


def _contact_scene(solver, slide=(1.0, 0.0, 0.0)):
    """A box sliding on the ground, a box resting on a box (off centre), a sphere at rest:
    every contact touching (depth 0) in the first step."""
    w = ground_world(0.01, solver=solver)
    w.add_body("slider", Box((0.1, 0.15, 0.05)), mass=2.0, position=(0, 0, 0.05), velocity=slide, friction=0.4)
    w.add_body("base", Box((0.2, 0.2, 0.1)), mass=3.0, position=(1, 0, 0.1))
    w.add_body("top", Box((0.1, 0.1, 0.1)), mass=1.0, position=(1.03, 0.02, 0.3))
    w.add_body("ball", Sphere(0.1), mass=1.0, position=(-1, 0, 0.1))
    return w


def _contact_impulse_per_body(w):
    """Σ of the contact impulses (normal and friction, N·s) on each body, as (n, 3)."""
    c, out = w.contacts(), np.zeros((w.model.bodies.count, 3))
    for (a, b), n, lam, f in zip(c["bodies"], c["normal"], c["normal_impulse"], c["friction_impulse"]):
        p = lam * n + f
        out[b] += p
        out[a] -= p
    return out


def test_impulse_and_lcp_agree_on_velocities_and_contact_impulse_per_body():
    """From the same state, one step: `impulse` iterated to convergence and `lcp` give the
    same velocities and the same summed contact impulse per body (1e-6; the individual λ of
    a box's four points are not unique). The sliding box's friction is saturated (it slides
    along a principal axis of its friction rows' K = B M⁻¹ Bᵀ, where seed 001's ball clamp
    is exact too)."""
    worlds = {}
    for solver in ("impulse", "lcp"):
        w = _contact_scene(solver)
        w.configure("impulse", iterations=100000, epsilon=1e-14, contact_epsilon=1e-14)
        w.step()
        worlds[solver] = w
    a, b = worlds["impulse"], worlds["lcp"]
    assert np.abs(a.state.bodies.vel - b.state.bodies.vel).max() < 1e-6
    assert np.abs(a.state.bodies.omega - b.state.bodies.omega).max() < 1e-6
    assert np.abs(_contact_impulse_per_body(a) - _contact_impulse_per_body(b)).max() < 1e-6
    assert np.linalg.norm(_contact_impulse_per_body(b)[1]) > 0.5      # the sliding box met friction


def test_sliding_friction_opposes_the_sliding_velocity():
    """An oblong box sliding diagonally: lcp's friction impulse is μ·m·g·Δt exactly against
    the patch's sliding velocity (the box pyramid turned along it), and the box keeps its
    heading. (Seed 001's clamp of the coupled solve onto the Coulomb ball, in `impulse`,
    tilts it towards K⁻¹(−B V) when K is anisotropic, here by about 5°.)"""
    w = _contact_scene("lcp", slide=(1.0, 0.7, 0.0))
    w.step()
    f = _contact_impulse_per_body(w)[w.body("slider").index]
    mu = math.sqrt(0.4 * 0.5)
    v = w.body("slider").velocity
    assert np.linalg.norm(f[:2]) == pytest.approx(mu * 2.0 * G * w.dt, rel=1e-9)
    assert f[0] * v[1] - f[1] * v[0] == pytest.approx(0.0, abs=1e-12) and f[:2] @ v[:2] < 0
    assert np.linalg.norm(w.body("slider").angular_velocity) < 1e-12


@pytest.mark.parametrize("path", SCENES, ids=lambda p: p.stem)
def test_every_scene_runs_under_lcp(path):
    """Every shipped scene, switched to lcp, runs 2 s without a blow-up."""
    w = load_scene(path, {"solver.kind": "lcp"})
    w.advance(2.0)
    assert np.all(np.isfinite(w.state.bodies.pos))


# ---------------------------------------------------------------------------- seed 004's four-bar
def _four_bar(**overrides):
    return load_scene(FOUR_BAR, {k: str(v) for k, v in overrides.items()})


def _point_a_velocity(w):
    """Velocity of point a (bar 1's top, the bar 1 – bar 2 joint)."""
    j = w.joint("a")
    return w.body("bar1").point_velocity(w.snapshot()["joint_anchor"][j.index])


def test_four_bar_impacts_follow_newton_and_come_to_rest():
    """h = 0.01: the first impact in the step [0.02, 0.03] s; at every impact ġ⁺ = −0.8·ġ⁻
    (1e-6, from the solver's impact records) and the kinetic energy does not rise; no
    impact after 1.5 s, and point a is still (|v_a| < 1e-3 m/s) from then on."""
    w = _four_bar()
    impacts, still = [], []
    while w.time < 3.0 - 1e-9:
        w.step()
        impacts.extend(w.stats.impacts)
        if w.time > 1.5:
            still.append(np.linalg.norm(_point_a_velocity(w)))
    impacts = np.array(impacts)
    assert len(impacts) >= 2
    assert 0.02 - 1e-9 <= impacts[0, 0] < 0.03 - 1e-9
    assert np.abs(impacts[:, 4] + 0.8 * impacts[:, 3]).max() < 1e-6
    assert np.all(impacts[:, 7] <= impacts[:, 6] + 1e-12)
    assert impacts[:, 0].max() < 1.5
    assert max(still) < 1e-3


def test_four_bar_impacts_match_the_closed_form_at_small_steps():
    """h = 1e-4: the parallelogram has the constant effective inertia I = I1 + m1 l1²/4 +
    I3 + m3 l3²/4 + m2 l1² about bar 1's angle φ, so between impacts φ̈ = T/I and an impact
    reverses φ̇ times e: a bouncing ball in φ with its floor at φ* = asin(0.06/l1). The
    first four impacts' times and speeds ġ⁻ = l1 cos φ* φ̇ within 1 ms and 2 % (semi-implicit
    Euler returns from each flight one step early and α·h slow: the errors grow by about
    that per bounce)."""
    h, l1, e = 1e-4, 0.2, 0.8
    w = _four_bar(**{"world.dt": h})
    mb = w.model.bodies
    b1, b2, b3 = (w.body(f"bar{i}").index for i in (1, 2, 3))
    inertia = sum(mb.inertia[i][1] + l1 ** 2 / 4 / mb.inv_mass[i] for i in (b1, b3)) + l1 ** 2 / mb.inv_mass[b2]
    alpha, phi = 10.0 / inertia, math.asin(0.06 / l1)
    t1 = math.sqrt(2 * phi / alpha)
    times, speeds = [t1], [l1 * math.cos(phi) * alpha * t1]
    for k in range(1, 4):
        times.append(times[-1] + 2 * e ** k * alpha * t1 / alpha)
        speeds.append(speeds[0] * e ** k)
    w.advance_steps(int(0.14 / h))
    got = w.stats.impacts
    assert len(got) >= 4
    assert np.abs(got[:4, 0] - times).max() < 1e-3 + h
    assert np.abs(-got[:4, 3] / speeds - 1).max() < 0.02


def test_four_bar_loop_rows_are_redundant_and_the_loop_drifts_without_correction():
    """Revolute joints with parallel axes in 3-D: the loop-closing joint's 5 rows have rank
    2 on top of the tree's (20 rows, rank 17); the solver drops the dependent ones. With
    no projection and no stabilization the loop opens by more than 1 mm within 5 s."""
    w = _four_bar(**{"solver.projection": "false", "solver.lcp_stabilization": "none"})
    w.step()
    assert (w.stats.loop_rows, w.stats.loop_rank) == (5, 2)
    worst = 0.0
    while w.time < 5.0 - 1e-9:
        w.step()
        worst = max(worst, w.max_constraint_error())
    assert worst > 1e-3


def test_four_bar_loop_stays_closed_with_projection():
    """Projection on (2 iterations), h = 0.01: the loop-closure error stays ≤ 1e-6 m after
    every step for 5 s, and the kinetic energy never rises at an impact."""
    w = _four_bar(**{"solver.projection": "true", "solver.projection_iterations": 2})
    worst = 0.0
    while w.time < 5.0 - 1e-9:
        w.step()
        worst = max(worst, w.max_constraint_error())
        imp = w.stats.impacts
        assert np.all(imp[:, 7] <= imp[:, 6] + 1e-12)
    assert worst <= 1e-6


def test_a_settled_heap_is_solved_in_one_sweep_from_its_warm_start():
    """The contact bench's heap of 100 boxes dropped on the ground under lcp, settled
    (2.5 s): last step's impulses solve this step's LCP, so PGS stops after one sweep (no
    body's momentum changes by more than pgs_tolerance). A sticking contact keeps its
    tangent pair from step to step; turned along its free tangential velocity — round-off
    when two touching boxes fall alike — the box of friction, and the solution with it,
    would turn every step and PGS would run tens of sweeps."""
    from physics.bench.contacts import heap_world
    w = heap_world("lcp", n=100)
    w.advance(2.5)
    sweeps = []
    for _ in range(10):
        w.advance_steps(1)
        assert w.stats.method == "pgs" and w.stats.rows > 64 and w.solvers["lcp"]._work.fast[0] == 1
        sweeps.append(w.stats.sweeps)
    assert max(sweeps) <= 2, sweeps
    assert np.linalg.norm(w.state.bodies.vel[1:], axis=1).max() < 1e-4


def test_a_standing_pyramid_is_solved_in_a_few_sweeps_on_the_velocity_form_path():
    """The pyramid of 55 boxes (10 rows, faces flush) under lcp at Δt = 10 ms, from 0.5 s on:
    PGS in velocity form sweeps a patch's rows several times in a row (its four normal rows
    have a system of rank 3, the slow part of Gauss–Seidel on a stack) and stops when no
    body's momentum changes by more than the contact tolerance, so nine steps in ten take
    at most 6 sweeps; one pass a sweep, or the joints' 1e-9 N·s, takes tens to the limit."""
    sweeps, moved = pyramid_sweeps("lcp", lambda w: w.stats.sweeps if w.stats.method == "pgs" else -1)
    assert min(sweeps) >= 1                 # every step on PGS
    assert np.percentile(sweeps, 90) <= 6 and np.mean(sweeps) <= 10, sweeps
    assert moved < 1e-3


@pytest.mark.parametrize("dt", [0.01, 1 / 60])
def test_pyramid_of_55_boxes_stands_on_the_velocity_form_path(dt):
    """A pyramid of 55 boxes (10 rows, faces touching; physics.bench.contacts) under lcp
    has ~1000 contact rows, all between bodies of no joint tree: PGS in velocity form
    (no A built). Held 5 s at Δt = 10 ms and 1/60 s, no box moves by more than 1 mm (a
    collapse or a slide moves boxes by centimetres) and none is faster than 1 mm/s."""
    from physics.bench.contacts import pyramid_world
    w = pyramid_world("lcp", rows=10, dt=dt)
    p0 = w.state.bodies.pos[1:].copy()
    w.advance(5.0)
    assert w.stats.method == "pgs" and w.stats.rows > 64 and w.solvers["lcp"]._work.fast[0] == 1
    assert np.linalg.norm(w.state.bodies.pos[1:] - p0, axis=1).max() < 1e-3
    assert np.linalg.norm(w.state.bodies.vel[1:], axis=1).max() < 1e-3
