"""`penalty` contacts (its default, the stiff preset: implicit one-sided springs,
physics/solvers/penalty/contact_springs.py) against closed forms: stacks stand, an
inelastic contact does not bounce, Coulomb friction on an incline, momentum in a
collision between free bodies."""
import math

import numpy as np
import pytest

from physics import Box, Plane, Sphere, World
from physics.bench.contacts import HALF, pyramid_world

G = 9.81


@pytest.mark.parametrize("dt", [0.01, 1 / 60], ids=["10ms", "60Hz"])
@pytest.mark.parametrize("rows", [10, 20], ids=["55_boxes", "210_boxes"])
def test_box_pyramid_stands_ten_seconds_with_no_box_moving_more_than_25_mm(rows, dt):
    """A pyramid of rows(rows + 1)/2 boxes (0.2 m, 1 kg, faces touching) on the ground is
    in equilibrium: stepped 10 s, no box moves more than 25 mm, everything is at
    rest, and the top sinks by the springs' sag in series. A patch of stiffness
    k = m_eff (κ/Δt)² (box–box m_eff = ½ kg, box–ground 1 kg) closes by its load over k;
    below layer l from the top ((l + 1)(l + 2)/2 boxes on 2(l + 1) patches) a patch carries
    (l + 2)/4 boxes on average, a ground patch (rows + 1)/2: the top sinks
    g (Δt/κ)² [(rows(rows + 1)/2 − 1)/2 + (rows + 1)/2] (1.1 mm for 210 boxes at 10 ms);
    within −10 %/+30 % (the middle column carries more than the average)."""
    from physics.solvers.penalty import CONTACT_STIFF_KAPPA
    w = pyramid_world("penalty", rows, dt)
    p0 = w.state.bodies.pos[2:].copy()
    w.advance_steps(int(round(10.0 / dt)))
    moved = np.linalg.norm(w.state.bodies.pos[2:] - p0, axis=1)
    assert moved.max() < 0.025
    top = np.argmax(p0[:, 2])
    sag = G * (dt / CONTACT_STIFF_KAPPA) ** 2 * ((rows * (rows + 1) / 2 - 1) / 2 + (rows + 1) / 2)
    assert 0.9 * sag < p0[top, 2] - w.state.bodies.pos[2 + top, 2] < 1.3 * sag
    assert np.linalg.norm(w.state.bodies.vel[2:], axis=1).max() < 1e-3


@pytest.mark.parametrize("dt", [0.01, 1 / 60], ids=["10ms", "60Hz"])
def test_ball_with_zero_restitution_dropped_one_metre_does_not_rebound(dt):
    """A ball (e = 0) dropped from 1 m reaches the floor at √(2 g h) = 4.4 m/s, i.e. 44 mm
    per step at Δt = 10 ms — a step's travel deep when found. A perfectly inelastic
    contact leaves it resting: after the first touch it never rises above 5 mm, and it ends
    at rest within 1 mm of touching."""
    r = 0.1
    w = World(dt=dt, solver="penalty")
    w.add_body("ground", Plane(), static=True)
    ball = w.add_body("ball", Sphere(r), mass=1.0, position=(0, 0, 1.0 + r), restitution=0.0)
    heights = []
    for _ in range(int(round(2.0 / dt))):
        w.step()
        heights.append(ball.position[2] - r)
    heights = np.array(heights)
    first = int(np.argmax(heights <= 0.0))
    assert heights[first] <= 0.0
    assert heights[first:].max() < 5e-3
    assert abs(heights[-1]) < 1e-3
    assert np.linalg.norm(ball.velocity) < 1e-3


def _incline(mu, dt, theta_deg=30.0):
    """A 0.2 m, 1 kg box resting on a static ramp 10 m long tilted theta about y, 3 m up
    from its middle, both of friction mu. Returns the world, the box, the slope's downhill
    direction and its normal."""
    theta = math.radians(theta_deg)
    w = World(dt=dt, solver="penalty")
    tilt = (0.0, math.sin(theta / 2), 0.0, math.cos(theta / 2))
    w.add_body("ramp", Box((5.0, 1.0, 0.1)), static=True, orientation=tilt, friction=mu)
    down = np.array([math.cos(theta), 0.0, -math.sin(theta)])       # the ramp's x axis
    normal = np.array([math.sin(theta), 0.0, math.cos(theta)])
    box = w.add_body("box", Box((HALF, HALF, HALF)), mass=1.0, position=tuple((0.1 + HALF) * normal - 3.0 * down),
                     orientation=tilt, friction=mu)
    return w, box, down, normal


@pytest.mark.parametrize("dt", [0.01, 1 / 60, None], ids=["10ms", "60Hz", "default"])
def test_box_on_30_degree_incline_with_mu_above_tan_sticks_and_creeps_under_a_millimetre(dt):
    """μ = 0.7 > tan 30° = 0.577: static friction holds the box. After 0.3 s of settling it
    creeps less than 1 mm in 2 s."""
    w, box, _, _ = _incline(0.7, dt if dt is not None else World().dt)
    w.advance(0.3)
    p1 = box.position
    w.advance(2.0)
    assert np.linalg.norm(box.position - p1) < 1e-3
    assert np.linalg.norm(box.velocity) < 1e-4


@pytest.mark.parametrize("dt", [0.01, None], ids=["10ms", "default"])
def test_box_on_30_degree_incline_with_mu_below_tan_slides_at_g_sin_minus_mu_cos(dt):
    """μ = 0.3 < tan 30°: the box slides down the slope with a = g(sin θ − μ cos θ)
    = 2.356 m/s² (Coulomb friction μ N, N = m g cos θ); measured from its speed along the
    slope between 0.5 s and 1.5 s (2.7 m down the slope, on the ramp), within 1 %, and it stays on the ramp's surface (its
    speed along the normal below 1 mm/s)."""
    w, box, down, normal = _incline(0.3, dt if dt is not None else World().dt)
    theta = math.radians(30.0)
    w.advance(0.5)
    v0, t0 = float(box.velocity @ down), w.time
    w.advance(1.0)
    v1, t1 = float(box.velocity @ down), w.time
    a = (v1 - v0) / (t1 - t0)
    assert a == pytest.approx(G * (math.sin(theta) - 0.3 * math.cos(theta)), rel=0.01)
    assert abs(float(box.velocity @ normal)) < 1e-3


@pytest.mark.parametrize("m2", [1.0, 3.0])
def test_head_on_collision_of_free_boxes_keeps_momentum_and_ends_at_the_common_velocity(m2):
    """No gravity: a 1 kg box at 2 m/s hits a box of m2 at rest face on (e = 0). The
    contact forces are equal and opposite, so momentum is kept to round-off; a perfectly
    inelastic impact leaves both at the common velocity v = m1 v1/(m1 + m2) (within
    1 mm/s) and takes away the kinetic energy ½ m1 m2/(m1 + m2) v1² (within 1 %); nothing
    spins or leaves the line."""
    m1, v1 = 1.0, 2.0
    w = World(dt=0.01, solver="penalty", gravity=(0.0, 0.0, 0.0))
    a = w.add_body("a", Box((HALF, HALF, HALF)), mass=m1, position=(-0.5, 0, 0), velocity=(v1, 0, 0))
    b = w.add_body("b", Box((HALF, HALF, HALF)), mass=m2, position=(0.0, 0, 0))
    p0 = m1 * a.velocity + m2 * b.velocity
    e0 = 0.5 * m1 * v1 * v1
    w.advance(1.0)
    p1 = m1 * a.velocity + m2 * b.velocity
    assert np.abs(p1 - p0).max() < 1e-9 * m1 * v1
    common = m1 * v1 / (m1 + m2)
    assert np.abs(a.velocity - (common, 0, 0)).max() < 1e-3
    assert np.abs(b.velocity - (common, 0, 0)).max() < 1e-3
    e1 = 0.5 * m1 * a.velocity @ a.velocity + 0.5 * m2 * b.velocity @ b.velocity
    assert e0 - e1 == pytest.approx(0.5 * m1 * m2 / (m1 + m2) * v1 * v1, rel=0.01)
    assert np.abs(a.angular_velocity).max() < 1e-6 and np.abs(b.angular_velocity).max() < 1e-6
