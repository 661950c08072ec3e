"""Cosserat rope (seed 002) against closed-form results."""
import math

import numpy as np
import pytest

from physics.rope import kernels as K
from physics.integrate import integrate_positions
from physics.model import Bodies
from physics.quat import q_from_axis_angle, q_mul, q_rotate
from physics.rope import Rope

G = 9.81
GRAVITY = np.array([0.0, 0.0, -G])
PAPER = dict(radius=0.015, density=1200.0, E=0.05e6, G=0.1e6)     # the paper's rope, L = 2.8 m


# ---------------------------------------------------------------- the tridiagonal solves (eq. 11)
def test_thomas_solver_equals_dense_solve_on_diagonally_dominant_tridiagonal_systems():
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 17, 200):
        lower, upper = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
        lower[0] = upper[-1] = 0.0
        diag = np.abs(lower) + np.abs(upper) + rng.uniform(0.1, 2.0, n)
        diag *= rng.choice([-1.0, 1.0], n)
        rhs = rng.normal(size=n)
        dense = np.diag(diag) + np.diag(lower[1:], -1) + np.diag(upper[:-1], 1)
        out = np.empty(n)
        K.thomas_solve(lower, diag, upper, rhs, np.empty(n), out)
        assert np.abs(out - np.linalg.solve(dense, rhs)).max() <= 1e-10 * max(1.0, np.abs(out).max())


def _dense_rows(rope):
    """J (3E × (3N + 3E)) of C_j = r_{j+1} − r_j − l_j d3(q_j) and M⁻¹, built by hand."""
    n, e = rope.n_nodes, rope.n_elements
    q, m = rope.state.elem_quat, rope.model
    jac = np.zeros((3 * e, 3 * n + 3 * e))
    minv = np.zeros((3 * n + 3 * e, 3 * n + 3 * e))
    for i in range(n):
        minv[3 * i:3 * i + 3, 3 * i:3 * i + 3] = m.node_w[i] * np.eye(3)
    for j in range(e):
        axes = np.array(K.frame_axes(*q[j])).reshape(3, 3)          # rows d1, d2, d3
        o = 3 * n + 3 * j
        minv[o:o + 3, o:o + 3] = sum(m.elem_inv_inertia[j, a] * np.outer(axes[a], axes[a]) for a in range(3))
        d3 = axes[2]
        jac[3 * j:3 * j + 3, 3 * j:3 * j + 3] = -np.eye(3)
        jac[3 * j:3 * j + 3, 3 * j + 3:3 * j + 6] = np.eye(3)
        jac[3 * j:3 * j + 3, o:o + 3] = m.seg_rest[j] * np.array([[0, -d3[2], d3[1]], [d3[2], 0, -d3[0]],
                                                                  [-d3[1], d3[0], 0]])
    return jac, minv


@pytest.mark.parametrize("pinned", [(), (0,), (0, -1)])
def test_block_thomas_solve_equals_dense_solve_of_J_Minv_Jt(pinned):
    rng = np.random.default_rng(len(pinned))
    pts = np.cumsum(rng.normal(size=(9, 3)) * 0.1, axis=0)
    rope = Rope(pts, **PAPER)
    q = rope.state.elem_quat
    q += rng.normal(size=q.shape) * 0.2                       # frames off the tangents: a general A
    q /= np.linalg.norm(q, axis=1)[:, None]
    for node in pinned:
        rope.attach_world(node)
    jac, minv = _dense_rows(rope)
    a = jac @ minv @ jac.T
    b = rng.normal(size=3 * rope.n_elements)
    m, blk = rope.model, rope.work.blk
    x = np.linalg.solve(a, b)
    K.rod_frames(rope.state.node_pos, q, m.seg_rest, blk)
    for general in (False, True):                 # the plain-node fast path and the 3×3-W path
        if general:
            K.block_factor_general(m.elem_inv_inertia, m.seg_rest, m.node_w, m.node_batt, rope.work.att, False, blk)
            plain = False
        else:
            plain = K.block_factor(m.elem_inv_inertia, m.seg_rest, m.node_w, m.node_batt, rope.work.att, False, blk)
            assert plain
        blk[:, K.B_X:K.B_X + 3] = b.reshape(-1, 3)
        K.block_solve(blk, plain)
        assert np.abs(blk[:, K.B_X:K.B_X + 3].ravel() - x).max() <= 1e-10 * np.abs(x).max()


@pytest.mark.parametrize("clamps", [(), (0,), (0, -1)])
def test_coupled_block_solve_with_bending_rows_equals_dense_solve(clamps):
    """The velocity stage's 6×6 block Thomas solve: bending/twist rows (soft, Γ on the
    diagonal) of every element pair and end clamp, plus the rows C_j."""
    rng = np.random.default_rng(7 + len(clamps))
    pts = np.cumsum(rng.normal(size=(8, 3)) * 0.1, axis=0)
    rope = Rope(pts, damping=0.01, **PAPER)
    q = rope.state.elem_quat
    q += rng.normal(size=q.shape) * 0.2
    q /= np.linalg.norm(q, axis=1)[:, None]
    for node in clamps:
        rope.attach_world(node, clamp=True)
    rope.attach_world(3)                                     # an immovable interior node too
    h, st, m, w, prm = 0.01, rope.state, rope.model, rope.work, rope.prm
    ew = m.elem_inv_inertia
    K.rod_frames(st.node_pos, q, m.seg_rest, w.blk)
    K.attach_prepare(st, m, rope.links, prm, h, 0.0, w.att, w.clamp, ew, *(np.zeros((0, 3)), np.zeros((0, 4)),
                     np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3))))
    K.pair_prepare(st, m, prm, h, w.blk, ew, w.bw)
    K.coupled_gather(w.bw, w.clamp, rope.links, True)
    K.coupled_factor(w.blk, w.bw, ew, m.seg_rest, m.node_w, m.node_batt, w.att, w.tmp)
    jac, minv = _dense_rows(rope)
    n, e = rope.n_nodes, rope.n_elements
    rows = []
    for j in range(e + 1):
        src = w.bw[j, K.BW_SRC]
        row = np.zeros((3, jac.shape[1]))
        g = np.ones(3)
        if src == 1:
            t = w.bw[j, K.BW_T:K.BW_T + 9].reshape(3, 3)
            row[:, 3 * n + 3 * (j - 1):3 * n + 3 * j] = -t
            row[:, 3 * n + 3 * j:3 * n + 3 * j + 3] = t
            g = w.bw[j, K.BW_GAMMA:K.BW_GAMMA + 3]
        elif src == 2:
            a = int(w.bw[j, K.BW_IDX])
            t = w.clamp[a, K.PR_T:K.PR_T + 9].reshape(3, 3)
            el = 0 if j == 0 else e - 1
            row[:, 3 * n + 3 * el:3 * n + 3 * el + 3] = t
            g = w.clamp[a, K.PR_GAMMA:K.PR_GAMMA + 3]
        rows.append((row, g, src != 0))
        lam = jac[3 * j:3 * j + 3] if j < e else np.zeros((3, jac.shape[1]))
        rows.append((lam, np.zeros(3), j < e))
    big = np.vstack([r for r, _, _ in rows])
    a = big @ minv @ big.T
    for k, (_, g, used) in enumerate(rows):
        for c in range(3):
            a[3 * k + c, 3 * k + c] += g[c] if used else 1.0
    assert [int(w.bw[j, K.BW_SRC]) for j in (0, e)] == [2 if 0 in clamps else 0, 2 if -1 in clamps else 0]
    b = rng.normal(size=6 * (e + 1))
    for k, (_, _, used) in enumerate(rows):
        if not used:
            b[3 * k:3 * k + 3] = 0.0
    w.bw[:, K.BW_X:K.BW_X + 6] = b.reshape(-1, 6)
    K.coupled_solve(w.bw)
    x = np.linalg.solve(a, b)
    assert np.abs(w.bw[:, K.BW_X:K.BW_X + 6].ravel() - x).max() <= 1e-9 * np.abs(x).max()


# ---------------------------------------------------------------- inextensibility and tangents
@pytest.mark.parametrize("dt", [0.015, 0.01])
def test_released_horizontally_the_paper_rope_keeps_its_length_and_tangents(dt):
    """2.8 m, 28 segments, pinned at one end, released horizontally: 10 s of swinging.
    Bound on the tangent coupling: the projection stops at max |C_j|/l_j < 1e-4 and
    |n_j − d3| ≤ 2|C_j|/l_j, so 2e-4 (measured: ~1e-6)."""
    rope = Rope.straight((0, 0, 3.0), direction=(1, 0, 0), length=2.8, segments=28, ground=False, **PAPER)
    rope.attach_world(0)
    worst_seg = worst_tan = 0.0
    lowest = np.inf
    for _ in range(int(round(10.0 / dt))):
        rope.step(dt, GRAVITY)
        worst_seg = max(worst_seg, rope.max_stretch())
        worst_tan = max(worst_tan, rope.tangent_violation())
        lowest = min(lowest, rope.positions[-1, 2])
        assert abs(rope.total_length() / 2.8 - 1.0) < 1e-3
    assert worst_seg < 1e-3
    assert worst_tan < 2e-4
    assert lowest < 3.0 - 2.5                      # it did swing down (tip below the anchor by most of L)


@pytest.mark.parametrize("segments", [200, 1000])
def test_a_fine_rope_at_the_paper_step_keeps_its_length(segments):
    """Transverse waves cross c·h/l ≈ 3 (200) and 17 (1000) segments per 15 ms step, where
    only the implicit step is stable: still within 0.1 %, and energy does not grow."""
    rope = Rope.straight((0, 0, 3.0), direction=(1, 0, 0), length=2.8, segments=segments, ground=False, **PAPER)
    rope.attach_world(0)
    e0 = rope.kinetic_energy() + rope.potential_energy(GRAVITY)
    worst = 0.0
    for _ in range(150):
        rope.step(0.015, GRAVITY)
        worst = max(worst, rope.max_stretch())
    assert worst < 1e-3
    assert rope.kinetic_energy() + rope.potential_energy(GRAVITY) < e0
    assert rope.positions[-1, 2] < 3.0 - 1.5                         # it swings down


# ---------------------------------------------------------------- bending (eq. 12-14)
def test_clamped_cantilever_sags_like_euler_bernoulli():
    """δ = qL⁴/(8EI) for a built-in end, small deflection (δ/L ≈ 1 %)."""
    length, r, rho, e_mod = 0.3, 0.005, 1200.0, 6.4e8
    rope = Rope.straight((0, 0, 1.0), direction=(1, 0, 0), length=length, segments=20, radius=r, density=rho,
                         E=e_mod, G=e_mod / 2.6, damping=0.01, drag=2.0, ground=False)
    rope.attach_world(0, clamp=True)
    for _ in range(600):
        rope.step(0.002, GRAVITY)
    q = rho * math.pi * r * r * G
    ei = e_mod * math.pi * r ** 4 / 4
    expected = q * length ** 4 / (8 * ei)
    assert expected / length == pytest.approx(0.01, rel=0.1)
    sag = 1.0 - rope.positions[-1, 2]
    assert sag == pytest.approx(expected, rel=0.05)
    assert np.abs(rope.state.node_vel).max() < 1e-3         # settled
    # the deflection curve, w(x) = q x²(6L² − 4Lx + x²)/(24 EI), at mid-span too
    mid = rope.positions[10]
    x = mid[0]
    assert 1.0 - mid[2] == pytest.approx(q * x * x * (6 * length ** 2 - 4 * length * x + x * x) / (24 * ei),
                                         rel=0.05)


def test_twisted_rope_untwists_and_its_elastic_energy_decays_to_rest():
    """Clamped at one end, each element turned about its axis linearly in s up to θ at the
    free end: the energy is ½K33θ²/L (eq. 13, uniform twist rate θ/L), then it untwists."""
    length, segs, theta = 1.0, 20, 1.0
    rope = Rope.straight((0, 0, 1.0), direction=(1, 0, 0), length=length, segments=segs, damping=0.05,
                         ground=False, **PAPER)
    q0 = rope.frames[0].copy()
    for j in range(segs):
        d3 = [1.0, 0.0, 0.0]
        rope.state.elem_quat[j] = q_mul(q_from_axis_angle(d3, theta * (j + 0.5) / segs), rope.state.elem_quat[j])
    rope.attach_world(0, clamp=True, orientation=q0)
    k33 = rope.stiffness[2]
    l = length / segs
    # discrete energy: E−1 pairs with u3 = (2/l) sin(Δφ/2), the clamp pair over l/2
    expected = (0.5 * k33 * (segs - 1) * l * (2 / l * math.sin(theta / segs / 2)) ** 2
                + 0.5 * k33 * (l / 2) * (4 / l * math.sin(theta / segs / 4)) ** 2)
    e0 = rope.elastic_energy()
    assert e0 == pytest.approx(expected, rel=1e-6)
    assert e0 == pytest.approx(0.5 * k33 * theta ** 2 / length, rel=0.05)
    total = [e0]
    for _ in range(300):
        rope.step(0.01, np.zeros(3))
        total.append(rope.elastic_energy() + rope.kinetic_energy())
    total = np.array(total)
    assert np.all(np.diff(total) <= 1e-9 * e0)         # damping only takes energy out
    assert rope.elastic_energy() < 1e-4 * e0
    # the free end's frame has turned back to the clamp's (twist angle ~ 0)
    rel = q_mul(np.array([-q0[0], -q0[1], -q0[2], q0[3]]), rope.frames[-1])
    assert 2 * math.asin(min(1.0, np.linalg.norm(rel[:3]))) < 0.01


# ---------------------------------------------------------------- tension
def test_hanging_load_tension_at_the_top_equals_the_weight_below():
    """Rope hanging from a pin with a 2 kg point load, settled from a tilted start. The top
    segment carries everything but the pinned node (whose weight goes straight into the
    anchor): (m_rope − m_0 + m_load) g within 1 %."""
    load = 2.0
    rope = Rope.straight((0, 0, 3.0), end=(1.0, 0, 3.0 - 2.6), segments=28, drag=3.0, damping=0.02, ground=False,
                         **PAPER)
    rope.set_point_mass(-1, load)
    top = rope.attach_world(0)
    for _ in range(500):
        rope.step(0.01, GRAVITY)
    assert np.abs(rope.state.node_vel).max() < 2e-3
    below = rope.mass - rope.model.node_mass[0]               # the pinned node's own weight is the anchor's
    assert rope.tension(0) == pytest.approx(below * G, rel=0.01)
    assert rope.attachment_force(top) == pytest.approx([0, 0, -below * G], abs=0.01 * below * G)
    # and falls linearly along it: every segment carries the nodes below it, T(s) = (m_load + ρA(L − s)) g
    below_each = np.cumsum(rope.model.node_mass[::-1])[::-1][1:] * G
    assert rope.segment_tension() == pytest.approx(below_each, rel=0.01)


# ---------------------------------------------------------------- rigid bodies
def _bodies(mass, pos, inertia=(0.01, 0.01, 0.01)):
    """World layout: body 0 is the static world, body 1 a free body."""
    pos = np.array([[0.0, 0.0, 0.0], pos], float)
    quat = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]])
    vel = np.zeros((2, 3))
    omega = np.zeros((2, 3))
    inv_mass = np.array([0.0, 1.0 / mass])
    inv_inertia = np.array([[0.0, 0.0, 0.0], 1.0 / np.asarray(inertia, float)])
    return pos, quat, vel, omega, inv_mass, inv_inertia


def _step_with_bodies(rope, h, gravity, bodies):
    pos, quat, vel, omega, inv_mass, inv_inertia = bodies
    vel[1:] += h * gravity                                          # 1. forces into velocities
    rope.step(h, gravity, pos, quat, vel, omega, inv_mass, inv_inertia)  # 2. rope + coupling impulses
    integrate_positions(Bodies(pos, quat, vel, omega, inv_mass, np.zeros_like(inv_inertia), inv_inertia), h)  # 3. positions


def test_body_hanging_on_a_rope_is_held_and_pulls_with_its_weight():
    mass = 3.0
    rope = Rope.straight((0, 0, 3.0), end=(0, 0, 1.0), segments=20, drag=1.0, damping=0.02, ground=False, **PAPER)
    bodies = _bodies(mass, (0, 0, 1.0 - 0.05))
    top = rope.attach_world(0)
    hook = rope.attach_body(-1, 1, local_point=(0, 0, 0.05))
    for _ in range(300):
        _step_with_bodies(rope, 0.01, GRAVITY, bodies)
    pos, _, vel, _, _, _ = bodies
    assert pos[1, 2] == pytest.approx(0.95, abs=2e-3)              # it does not fall
    assert np.abs(vel[1]).max() < 1e-3
    assert rope.attachment_force(hook) == pytest.approx([0, 0, mass * G], rel=0.01, abs=0.02)
    below = rope.mass - rope.model.node_mass[0] + mass
    assert rope.tension(0) == pytest.approx(below * G, rel=0.01)
    assert rope.attachment_force(top) == pytest.approx([0, 0, -below * G], abs=0.01 * below * G)
    assert rope.max_stretch() < 1e-3


def test_body_kicked_sideways_swings_the_rope_and_momentum_is_conserved_without_gravity():
    mass = 1.0
    rope = Rope.straight((0, 0, 1.0), direction=(1, 0, 0), length=1.0, segments=20, ground=False, **PAPER)
    bodies = _bodies(mass, (1.05, 0, 1.0))
    rope.attach_body(-1, 1, local_point=(-0.05, 0, 0))
    vel = bodies[2]
    vel[1] = (1.0, 0.5, 0.0)                                      # pulls the rope along and sideways
    p0 = mass * vel[1].copy()
    for _ in range(150):
        _step_with_bodies(rope, 0.01, np.zeros(3), bodies)
        p = mass * vel[1] + (rope.model.node_mass[:, None] * rope.state.node_vel).sum(axis=0)
        assert p == pytest.approx(p0, abs=1e-6)
    # the body has handed a good part of its momentum to the rope, which it drags along
    rope_p = (rope.model.node_mass[:, None] * rope.state.node_vel).sum(axis=0)
    assert rope_p[0] > 0.3 * p0[0] and rope_p[1] > 0.1 * p0[1]
    assert rope.state.node_vel[0, 0] > 0.1                        # even the far end moves
    assert rope.max_stretch() < 1e-3


def test_hanging_body_pushed_sideways_swings_the_rope():
    mass = 2.0
    rope = Rope.straight((0, 0, 3.0), end=(0, 0, 1.0), segments=20, ground=False, **PAPER)
    bodies = _bodies(mass, (0, 0, 0.95))
    rope.attach_world(0)
    rope.attach_body(-1, 1, local_point=(0, 0, 0.05))
    bodies[2][1] = (1.0, 0.0, 0.0)
    for _ in range(20):
        _step_with_bodies(rope, 0.01, GRAVITY, bodies)
    v = rope.state.node_vel
    assert np.all(v[1:, 0] > 0.0)                               # every node swings the body's way
    lever = q_rotate(bodies[1][1], (0, 0, 0.05))                # the body turns too: the hook is off its centre
    assert rope.positions[-1] == pytest.approx(bodies[0][1] + lever, abs=1e-6)
    assert v[-1] == pytest.approx(bodies[2][1] + np.cross(bodies[3][1], lever), abs=0.005)
    assert v[10, 0] == pytest.approx(v[-1, 0] * 0.5, rel=0.25)   # a pendulum: speed ∝ distance from the pin


# ---------------------------------------------------------------- contact
def test_rope_dropped_on_the_ground_comes_to_rest_on_it():
    r = 0.015
    rope = Rope.straight((0, 0, 0.5), direction=(1, 0, 0), length=1.0, segments=20, friction=0.5, **PAPER)
    rope.positions[:, 2] += 0.1 * np.sin(np.linspace(0, 3, 21))     # uneven, so it lands node by node
    lowest = np.inf
    for _ in range(150):
        rope.step(0.01, GRAVITY)
        lowest = min(lowest, rope.positions[:, 2].min())
    assert lowest > r - 0.2 * r                                   # surface never more than 0.2 r into the ground
    assert rope.positions[:, 2] == pytest.approx(np.full(21, r), abs=1e-4)
    assert np.abs(rope.state.node_vel).max() < 1e-3
    assert rope.max_stretch() < 1e-3


def test_rope_dropped_on_a_box_comes_to_rest_on_its_top():
    r = 0.015
    rope = Rope.straight((-0.4, 0, 0.6), direction=(1, 0, 0), length=0.8, segments=16, friction=0.8, **PAPER)
    rope.add_box((0, 0, 0.2), (0.5, 0.3, 0.2))
    lowest = np.inf
    for _ in range(150):
        rope.step(0.01, GRAVITY)
        lowest = min(lowest, rope.positions[:, 2].min())
    assert lowest > 0.4 + r - 0.2 * r
    assert rope.positions[:, 2] == pytest.approx(np.full(17, 0.4 + r), abs=1e-4)
    assert np.abs(rope.state.node_vel).max() < 1e-3


def test_rope_sliding_on_the_ground_decelerates_at_mu_g():
    """Coulomb friction: a straight rope lying on the ground, pushed along itself at v0,
    slows at μg and stops after v0/(μg), having slid v0²/(2μg)."""
    mu, v0, r = 0.4, 2.0, 0.015
    rope = Rope.straight((0, 0, r), direction=(1, 0, 0), length=1.0, segments=20, friction=mu, **PAPER)
    for _ in range(20):                                            # settle the contacts
        rope.step(0.005, GRAVITY)
    rope.state.node_vel[:, 0] = v0
    x0 = rope.positions[:, 0].mean()
    speeds = []
    for _ in range(120):
        rope.step(0.005, GRAVITY)
        speeds.append(rope.state.node_vel[:, 0].mean())
    speeds = np.array(speeds)
    t = 0.005 * np.arange(1, 121)
    moving = speeds > 0.2
    slope = np.polyfit(t[moving], speeds[moving], 1)[0]
    assert -slope == pytest.approx(mu * G, rel=0.05)
    assert speeds[-1] == pytest.approx(0.0, abs=1e-3)
    assert rope.positions[:, 0].mean() - x0 == pytest.approx(v0 ** 2 / (2 * mu * G), rel=0.05)


# ---------------------------------------------------------------- the viewer's grab
def test_grab_spring_is_critically_damped_and_force_bounded():
    """Zero gravity, a free straight rope pulled along itself by its end: the whole rope is
    the mass on the spring, so the default damping 2√(k m) brings it to the target without
    overshoot; a far target saturates the force at max_force."""
    rope = Rope.straight((0, 0, 1.0), direction=(1, 0, 0), length=1.0, segments=20, ground=False, **PAPER)
    rope.grab_node(-1, (1.5, 0.0, 1.0), stiffness=50.0, max_force=100.0)
    ends = []
    for _ in range(300):
        rope.step(0.01, np.zeros(3))
        ends.append(rope.positions[-1, 0])
    ends = np.array(ends)
    assert ends.max() < 1.5 + 0.01 * 0.5                        # no overshoot (1 % of the pull)
    assert ends[-1] == pytest.approx(1.5, abs=2e-3)
    assert np.all(np.diff(ends) > -1e-6)                          # monotone approach
    rope.grab_node(-1, (10.0, 0.0, 1.0), stiffness=50.0, max_force=2.0)
    forces = []
    for _ in range(50):
        rope.step(0.01, np.zeros(3))
        forces.append(np.linalg.norm(rope.grab_force()))
    assert max(forces) <= 2.0 + 1e-9
    assert forces[-1] == pytest.approx(2.0, rel=1e-6)
    v = rope.state.node_vel[:, 0].mean()                          # the rope accelerates as F/m
    rope.step(0.01, np.zeros(3))
    assert (rope.state.node_vel[:, 0].mean() - v) / 0.01 == pytest.approx(2.0 / rope.mass, rel=0.02)
    rope.release_node()
    assert rope.grabbed_node is None


def test_grabbed_node_of_a_hanging_rope_is_held_near_the_target():
    """At rest the spring force is k times the distance to the target."""
    rope = Rope.straight((0, 0, 1.0), direction=(1, 0, 0), length=1.0, segments=20, drag=4.0, damping=0.02,
                         ground=False, **PAPER)
    rope.attach_world(0)
    rope.grab_node(-1, (0.7, 0.0, 0.8), stiffness=400.0, max_force=50.0)
    for _ in range(400):
        rope.step(0.01, GRAVITY)
    f = rope.grab_force()
    assert np.abs(rope.state.node_vel).max() < 1e-3
    assert rope.positions[-1] - (0.7, 0, 0.8) == pytest.approx(-f / 400.0, abs=1e-5)
    # the pin and the spring carry the rope's weight
    assert f[2] - rope.attachment_force(0)[2] == pytest.approx((rope.mass - rope.model.node_mass[0]) * G, rel=0.01)
    rope.release_node()
    for _ in range(50):
        rope.step(0.01, GRAVITY)
    assert rope.positions[-1, 2] < 0.5                                     # it falls once released
