"""Finite-difference checks of the joint constraint rows (physics/joint_rows.py).

Every row promises Ċ = J·V with V = (v_a, ω_a, v_b, ω_b), ω in the world frame. Here the
two bodies are moved along a random V for ±ε (x ± ε v, q ← exp(±ε ω/2) ⊗ q), the rows are
recomputed, and J·V at the unmoved pose is compared with the central difference
(C(+ε) − C(−ε)) / 2ε of the row's value, or of the joint readout q for free-DOF rows.

What is checked, per joint type (random poses, random V, parent a dynamic body or "world"):

* equality rows: the exact time derivative of their value, at poses where the joint is
  assembled and at poses where it is pulled apart and twisted out of line;
* active limit rows: the exact time derivative of their value (limits chosen so that the
  current angle or slide violates them);
* free rows (friction / motors): the exact rate of the joint readout joint_q[j, k] of
  their DOF; for the spherical joint, whose free rows are about the parent's joint axes
  and whose readout is (swing, twist), the three free rows together must be the relative
  angular velocity of the child against the parent's joint frame, measured by finite
  differences of the relative rotation.

Known inexact rows (documented by tests of their own, never by loosening a tolerance):

* revolute and universal angle rows (limit and free) rotate about the parent's axis n_a0
  (universal: also the child's n_b1). That is the angle's rate only while the joint's
  axes are aligned; when they are out of line by θ, d(angle)/dt differs from J·V by at
  most tan θ·|ω_b − ω_a| — see test_hinge_angle_rows_drift_from_the_angle_rate_only_by_the_axis_misalignment.
* (fixed) the spherical twist-limit row used the unit bisector of n_a0 and n_b0, which is
  cos(swing/2)·d(twist)/dt; its axis is now (n_a0 + n_b0)/(1 + n_a0·n_b0), the exact rate
  (test_spherical_twist_limit_row_is_the_time_derivative_of_the_twist).

Tolerance: |J·V − FD| ≤ 1e-6 · max(|J·V|, Σ_bodies |v| + |ω|), with lever arms of order 1 m.
The central difference at ε = 1e-6 agrees to about 1e-10 (round-off ≈ 1e-16/ε, truncation
≈ ε²); it is repeated at ε = 1e-4 (truncation ≈ 1e-8) so that agreement at one ε is not an
accident of that ε. A wrong sign or a wrong lever arm in any Jacobian entry costs O(1).
"""
import math

import numpy as np
import pytest

from physics import Box, World
from physics.quat import q_from_axis_angle, q_mul, q_rotate, q_to_matrix


# ---------------------------------------------------------------------------- adapter
# The ONE place this file reads the engine's constraint rows. The row arrays are about
# to be renamed/reshaped: only this function (and the three constants) should change.
from physics.joint_rows import ROW_EQ, ROW_FREE, ROW_LIMIT  # noqa: E402


def rows_of(world):
    """The rows at the world's current poses, recomputed, as copies:
    J (n, 12) = [lin_a, ang_a, lin_b, ang_b], C (n,), kind (n,) ROW_EQ/ROW_LIMIT/ROW_FREE,
    active (n,) (+1 lower limit violated, −1 upper, 0 inside; 1 for eq rows; free rows
    are switched on per solve, so FREE_OFF here), q (m, 3) joint readouts,
    joint_start/joint_count (m,) each joint's block of rows."""
    world._refresh_rows()
    rows, joints = world.rows, world.model.joints
    return dict(J=rows.J.copy(), C=rows.C.copy(), kind=rows.kind.copy(), active=rows.active.copy(),
                q=world.state.joints.q.copy(), joint_start=joints.row_start.copy(),
                joint_count=joints.row_count.copy())
# ---------------------------------------------------------------------------- end adapter


TOL = 1e-6
EPSILONS = (1e-6, 1e-4)
CONFIGS = 4          # random poses per (joint type, parent, assembled or not)
PARENTS = ("body", "world")


def _unit(v):
    return v / np.linalg.norm(v)


def _random_quat(rng):
    return _unit(rng.normal(size=4))


def _quat_exp(theta):
    """exp(θ/2) as a unit quaternion: the rotation by |θ| about θ."""
    a = float(np.linalg.norm(theta))
    return np.array([0.0, 0.0, 0.0, 1.0]) if a == 0.0 else q_from_axis_angle(theta / a, a)


class PosedJoint:
    """Joint "j" between parent "A" (or "world") and child "B" in a random pose, with
    random body velocities V; rows_at(s) gives the rows with the poses moved by s·V."""

    def __init__(self, kind, rng, parent, assembled):
        self.kind, self.rng = kind, rng
        w = self.world = World()
        self.bodies = ["B"] if parent == "world" else ["A", "B"]
        for name in self.bodies:
            w.add_body(name, Box((0.2, 0.15, 0.1)), mass=1.0, position=rng.uniform(-1, 1, 3),
                       orientation=_random_quat(rng))
        anchor = rng.uniform(-1, 1, 3)
        axis = _unit(rng.normal(size=3))
        axis2 = _unit(np.cross(axis, rng.normal(size=3)))
        w.add_joint("j", kind, "world" if parent == "world" else "A", "B", anchor=anchor, axis=axis,
                    axis2=axis2 if kind == "universal" else None)
        self.joint = w.joint("j")
        # move the child along the joint's free DOFs: the joint stays assembled
        child = w.body("B")
        rot, shift = np.array([0.0, 0.0, 0.0, 1.0]), np.zeros(3)
        if kind == "revolute":
            rot = q_from_axis_angle(axis, rng.uniform(-2.5, 2.5))
        elif kind == "universal":
            rot = q_mul(q_from_axis_angle(axis, rng.uniform(-1.2, 1.2)),
                        q_from_axis_angle(axis2, rng.uniform(-1.2, 1.2)))
        elif kind == "spherical":
            swing_axis = _unit(np.cross(axis, rng.normal(size=3)))
            rot = q_mul(q_from_axis_angle(swing_axis, rng.uniform(0.5, 1.4)),
                        q_from_axis_angle(axis, rng.uniform(-1.5, 1.5)))
        elif kind == "prismatic":
            shift = rng.uniform(-0.8, 0.8) * axis
        pos = anchor + q_rotate(rot, child.position - anchor) + shift
        quat = q_mul(rot, child.orientation)
        if not assembled:       # pull the joint apart and twist the child out of line
            pos = pos + 0.2 * rng.normal(size=3)
            quat = q_mul(_quat_exp(rng.uniform(0.1, 0.4) * _unit(rng.normal(size=3))), quat)
        child.position, child.orientation = pos, quat
        self.velocity = {name: (rng.normal(size=3), rng.normal(size=3)) for name in self.bodies}
        self.base = {name: (w.body(name).position, w.body(name).orientation) for name in self.bodies}

    def set_violated_limits(self, margin=(0.15, 0.3)):
        """Limits on every limitable DOF that the current readout violates, lower or upper
        bound at random. Returns the expected `active` sign per limit DOF."""
        q = rows_of(self.world)["q"][0]
        dofs = {"revolute": 1, "prismatic": 1, "universal": 2, "spherical": 2}.get(self.kind, 0)
        signs = []
        for k in range(dofs):
            m = self.rng.uniform(*margin)
            if self.kind == "spherical" and k == 0:     # swing cone: only an upper bound, > 0
                m = min(m, 0.5 * q[0])
                self.joint.set_limit(0.0, q[0] - m, dof=0)
                signs.append(-1)
            elif self.rng.random() < 0.5:               # below the lower bound
                self.joint.set_limit(q[k] + m, q[k] + m + 0.5, dof=k)
                signs.append(+1)
            else:                                        # above the upper bound
                self.joint.set_limit(q[k] - m - 0.5, q[k] - m, dof=k)
                signs.append(-1)
        return signs

    def V(self):
        """(v_a, ω_a, v_b, ω_b); the world does not move."""
        parts = [self.velocity.get("A", (np.zeros(3), np.zeros(3))), self.velocity["B"]]
        return np.concatenate([parts[0][0], parts[0][1], parts[1][0], parts[1][1]])

    def speed(self):
        return sum(np.linalg.norm(v) + np.linalg.norm(w) for v, w in self.velocity.values())

    def rows_at(self, s):
        for name in self.bodies:
            (p, q), (v, w) = self.base[name], self.velocity[name]
            body = self.world.body(name)
            body.position = p + s * v
            body.orientation = q_mul(_quat_exp(s * w), q)
        return rows_of(self.world)

    def child_rotation_at(self, s):
        return q_to_matrix(q_mul(_quat_exp(s * self.velocity["B"][1]), self.base["B"][1]))

    def rates(self, eps):
        """Rows at the pose, and central differences of C and of the readouts q."""
        plus, minus, here = self.rows_at(eps), self.rows_at(-eps), self.rows_at(0.0)
        r = slice(here["joint_start"][0], here["joint_start"][0] + here["joint_count"][0])
        return (here["J"][r], here["C"][r], here["kind"][r], here["active"][r],
                (plus["C"][r] - minus["C"][r]) / (2 * eps), (plus["q"][0] - minus["q"][0]) / (2 * eps),
                here, plus, minus, r)


def _posed(kind, parent, assembled, seed):
    rng = np.random.default_rng([seed, PARENTS.index(parent), int(assembled),
                                 ["fixed", "spherical", "revolute", "universal", "prismatic"].index(kind)])
    return PosedJoint(kind, rng, parent, assembled)


def _assert_rate(jv, fd, scale, what):
    err = abs(jv - fd)
    assert err <= TOL * max(abs(jv), scale), f"{what}: J·V = {jv:.12g}, finite difference {fd:.12g}, |Δ| = {err:.3g}"


def _check_rows(kind, parent, assembled, exact_kinds, seed):
    """Compare every row of the kinds in `exact_kinds` against its finite difference:
    eq and limit rows against C, free rows against the readout of their DOF."""
    checked = {ROW_EQ: 0, ROW_LIMIT: 0, ROW_FREE: 0}
    pj = _posed(kind, parent, assembled, seed)
    signs = pj.set_violated_limits()
    for eps in EPSILONS:
        J, C, row_kind, active, dC, dq, *_ = pj.rates(eps)
        jv = J @ pj.V()
        limit_rows = np.flatnonzero(row_kind == ROW_LIMIT)
        assert list(active[limit_rows]) == signs, "every limit row should be active, on the chosen side"
        free_rows = np.flatnonzero(row_kind == ROW_FREE)
        for i in range(len(C)):
            if row_kind[i] not in exact_kinds:
                continue
            if row_kind[i] == ROW_FREE:
                k = int(np.searchsorted(free_rows, i))
                _assert_rate(jv[i], dq[k], pj.speed(), f"{kind} free row {i} (DOF {k}) vs readout rate, ε={eps}")
            else:
                _assert_rate(jv[i], dC[i], pj.speed(), f"{kind} row {i} (kind {row_kind[i]}), ε={eps}")
            checked[row_kind[i]] += 1
    return checked


def _expect_checked(checked, kind, exact_kinds, n_configs):
    from physics.joint_types import JOINT_TYPES
    jt = JOINT_TYPES[kind]
    n = {ROW_EQ: jt.n_eq, ROW_LIMIT: jt.n_limit, ROW_FREE: jt.n_free}
    for k in (ROW_EQ, ROW_LIMIT, ROW_FREE):
        want = n[k] * n_configs * len(EPSILONS) if k in exact_kinds else 0
        assert checked[k] == want, f"{kind}: checked {checked[k]} rows of kind {k}, expected {want}"


def _run(kind, parent, assembled, exact_kinds):
    total = {ROW_EQ: 0, ROW_LIMIT: 0, ROW_FREE: 0}
    for seed in range(CONFIGS):
        for k, n in _check_rows(kind, parent, assembled, exact_kinds, seed).items():
            total[k] += n
    _expect_checked(total, kind, exact_kinds, CONFIGS)


# ---------------------------------------------------------------------------- exact rows
ALL = (ROW_EQ, ROW_LIMIT, ROW_FREE)


@pytest.mark.parametrize("assembled", [True, False], ids=["assembled", "pulled_apart"])
@pytest.mark.parametrize("parent", PARENTS)
def test_fixed_rows_are_time_derivatives_of_their_values(parent, assembled):
    _run("fixed", parent, assembled, ALL)


@pytest.mark.parametrize("assembled", [True, False], ids=["assembled", "pulled_apart"])
@pytest.mark.parametrize("parent", PARENTS)
def test_prismatic_rows_are_time_derivatives_of_their_values_and_slide(parent, assembled):
    # slide rows through the anchor gap are exact at any pose, free row included
    _run("prismatic", parent, assembled, ALL)


@pytest.mark.parametrize("parent", PARENTS)
def test_revolute_rows_are_time_derivatives_of_their_values_and_angle(parent):
    # assembled: axes aligned, so the limit and free rows about n_a0 are exact too
    _run("revolute", parent, True, ALL)


@pytest.mark.parametrize("parent", PARENTS)
def test_revolute_equality_rows_are_time_derivatives_of_their_values_when_pulled_apart(parent):
    _run("revolute", parent, False, (ROW_EQ,))


@pytest.mark.parametrize("parent", PARENTS)
def test_universal_rows_are_time_derivatives_of_their_values_and_angles(parent):
    _run("universal", parent, True, ALL)


@pytest.mark.parametrize("parent", PARENTS)
def test_universal_equality_rows_are_time_derivatives_of_their_values_when_pulled_apart(parent):
    _run("universal", parent, False, (ROW_EQ,))


@pytest.mark.parametrize("assembled", [True, False], ids=["assembled", "pulled_apart"])
@pytest.mark.parametrize("parent", PARENTS)
def test_spherical_point_and_swing_rows_are_time_derivatives_of_their_values(parent, assembled):
    """The three point rows and the swing-cone row (about n_a0 × n_b0 normalized, the
    exact gradient of the swing angle) at any pose. The twist-limit row and the free rows
    are checked below: they are not derivatives of their own values."""
    total = {ROW_EQ: 0, ROW_LIMIT: 0, ROW_FREE: 0}
    for seed in range(CONFIGS):
        pj = _posed("spherical", parent, assembled, seed)
        pj.set_violated_limits()
        for eps in EPSILONS:
            J, C, row_kind, active, dC, dq, *_ = pj.rates(eps)
            jv = J @ pj.V()
            swing_row = int(np.flatnonzero(row_kind == ROW_LIMIT)[0])
            for i in list(np.flatnonzero(row_kind == ROW_EQ)) + [swing_row]:
                _assert_rate(jv[i], dC[i], pj.speed(), f"spherical row {i}, ε={eps}")
                total[row_kind[i]] += 1
            # the swing limit's value is swing − cone, so its rate is also the readout's
            _assert_rate(jv[swing_row], dq[0], pj.speed(), f"spherical swing row vs swing readout, ε={eps}")
    assert total[ROW_EQ] == 3 * CONFIGS * len(EPSILONS) and total[ROW_LIMIT] == CONFIGS * len(EPSILONS)


def _vee(m):
    return np.array([m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1]]) / 2.0


@pytest.mark.parametrize("assembled", [True, False], ids=["assembled", "pulled_apart"])
@pytest.mark.parametrize("parent", PARENTS)
def test_spherical_free_rows_are_the_relative_angular_velocity_in_the_parent_joint_frame(parent, assembled):
    """The spherical readout is (swing, twist), but its free rows are about the parent's
    joint axes n_a0, n_a1, n_a2: J_k·V = n_ak·(ω_b − ω_a), no readout's derivative. What
    they must equal is the rate of the relative rotation R_rel = A(t)ᵀ R_b(t) F_b (A: the
    parent joint frame in world axes, F_b: the child's constant joint frame):
    Ṙ_rel R_relᵀ = [Aᵀ(ω_b − ω_a)]×. A is read from the free rows themselves (their
    angular part on b), so F_b cancels: A(+ε)ᵀ R_b(+ε) R_b(−ε)ᵀ A(−ε) ≈ exp(2ε [w]×).
    If the rows used the child's axes, a flipped sign or a non-orthonormal frame, this fails."""
    for seed in range(CONFIGS):
        pj = _posed("spherical", parent, assembled, seed)
        for eps in EPSILONS:
            J, C, row_kind, active, dC, dq, here, plus, minus, r = pj.rates(eps)
            free = np.flatnonzero(row_kind == ROW_FREE)
            assert len(free) == 3

            def frame(rows):
                return rows["J"][r][free][:, 9:12].T        # columns: the free rows' axes on b
            a_here = frame(here)
            assert np.allclose(a_here.T @ a_here, np.eye(3), atol=1e-12) and np.linalg.det(a_here) > 0
            assert np.allclose(J[free][:, 3:6], -J[free][:, 9:12], atol=0) and not J[free][:, [0, 1, 2, 6, 7, 8]].any()
            m = frame(plus).T @ pj.child_rotation_at(eps) @ pj.child_rotation_at(-eps).T @ frame(minus)
            w_fd = _vee(m) / (2 * eps)
            jv = J[free] @ pj.V()
            for k in range(3):
                _assert_rate(jv[k], w_fd[k], pj.speed(), f"spherical free row {k}, ε={eps}")


# ---------------------------------------------------------------------------- known inexact rows
def _twist_rates(parent, assembled, seed, eps):
    pj = _posed("spherical", parent, assembled, seed)
    pj.set_violated_limits()
    J, C, row_kind, active, dC, dq, *_ = pj.rates(eps)
    twist_row = int(np.flatnonzero(row_kind == ROW_LIMIT)[1])
    assert active[twist_row] != 0
    swing = rows_of(pj.world)["q"][0, 0]
    return float(J[twist_row] @ pj.V()), float(dC[twist_row]), float(dq[1]), swing, pj.speed()


@pytest.mark.parametrize("assembled", [True, False], ids=["assembled", "pulled_apart"])
@pytest.mark.parametrize("parent", PARENTS)
def test_spherical_twist_limit_row_is_the_time_derivative_of_the_twist(parent, assembled):
    """The twist-limit row's axis (n_a0 + n_b0)/(1 + n_a0·n_b0) makes J·V the exact rate
    of the swing-twist decomposition's twist, at any swing (the unit bisector it had
    before was cos(swing/2) short)."""
    for seed in range(CONFIGS):
        for eps in EPSILONS:
            jv, dC, dtwist, swing, speed = _twist_rates(parent, assembled, seed, eps)
            _assert_rate(dC, dtwist, speed, "twist limit value moves with the twist readout")
            _assert_rate(jv, dC, speed, f"spherical twist row, swing {swing:.3f}, ε={eps}")


@pytest.mark.parametrize("kind", ["revolute", "universal"])
@pytest.mark.parametrize("parent", PARENTS)
def test_hinge_angle_rows_drift_from_the_angle_rate_only_by_the_axis_misalignment(kind, parent):
    """Revolute/universal angle rows (limits and free) turn about the joint axes as if the
    joint were assembled. With the hinge axes out of line, the angle φ (of the child's
    n_b1 in the parent's n_a1–n_a2 plane) has rate
        φ̇ = n_a0·ω − z (x n_a1·ω + y n_a2·ω)/(x² + y²),   ω = ω_b − ω_a,
    where (x, y, z) are n_b1's components on (n_a1, n_a2, n_a0): off J·V by at most
    |z|/√(1−z²)·|ω|. For the revolute |z| ≤ sin θ with sin²θ = (n_a1·n_b0)² + (n_a2·n_b0)²,
    the values of its two rotational equality rows; for the universal z = n_a0·n_b1, its
    one rotational equality row, for both angles. This checks that bound, so the rows
    still turn the right way about the right axis when the joint is pulled apart (a sign
    or axis error costs O(|ω|))."""
    for seed in range(CONFIGS):
        pj = _posed(kind, parent, False, seed)
        signs = pj.set_violated_limits()
        J, C, row_kind, active, dC, dq, *_ = pj.rates(EPSILONS[0])
        jv = J @ pj.V()
        # the rotational equality rows (no linear part): n_a1·n_b0, n_a2·n_b0 / n_a0·n_b1
        rot_eq = [i for i in np.flatnonzero(row_kind == ROW_EQ) if not J[i, [0, 1, 2, 6, 7, 8]].any()]
        assert len(rot_eq) == (2 if kind == "revolute" else 1)
        sin_theta = math.sqrt(sum(C[i] ** 2 for i in rot_eq))
        assert 0.01 < sin_theta < 0.7            # really out of line, not past 45°
        w_rel = np.linalg.norm(pj.V()[9:12] - pj.V()[3:6])
        bound = sin_theta / math.sqrt(1.0 - sin_theta ** 2) * w_rel
        limit_rows, free_rows = np.flatnonzero(row_kind == ROW_LIMIT), np.flatnonzero(row_kind == ROW_FREE)
        assert list(active[limit_rows]) == signs
        for k, (lr, fr) in enumerate(zip(limit_rows, free_rows)):
            assert np.array_equal(J[lr], J[fr])                  # same axis, limit and free
            assert abs(dC[lr] - dq[k]) <= TOL * pj.speed()       # limit value moves with φ_k
            assert abs(jv[lr] - dq[k]) <= bound + TOL * pj.speed(), (
                f"{kind} angle {k}: J·V {jv[lr]:.6g} vs φ̇ {dq[k]:.6g}, bound {bound:.3g}")
