"""Impacts that propagate through touching bodies (physics/solvers/impacts.py) and
restitution that holds at large Δt, under the families with restitution, against the
closed forms of sequential two-body collisions (Newton's law ġ⁺ = −e ġ⁻ per pair,
momentum kept in each):

- Newton's cradle, equal balls, e = 1: each collision swaps the two balls' velocities,
  so k balls swung in at v send the last k off at v and leave the others at rest.
- Newton's cradle, e < 1: ball k (v_k) meets ball k + 1 at rest and leaves it
  (1 + e)/2·v_k, keeping (1 − e)/2·v_k, so the last of n leaves at ((1 + e)/2)ⁿ⁻¹·v; the
  others then meet each other below the restitution threshold (0.2 m/s) and go on
  together with the momentum left, m·v·(1 − ((1 + e)/2)ⁿ⁻¹)/(n − 1) each.
- Stacked-ball drop, e = 1: the big ball (m₁) bounces off the floor at v, then meets the
  small one (m₂) still falling at v: the small one leaves at (3m₁ − m₂)/(m₁ + m₂)·v.
- A ball bouncing on the floor: ġ⁺ = e·v at each bounce, so with e = 1 it comes back to
  its drop height.
"""
import math
from pathlib import Path

import numpy as np
import pytest

from physics import load_scene
from physics.shapes import Box, Plane, Sphere
from physics.solvers import FAMILIES as FAMILIES_ALL
from physics.world import World

G = 9.81
FAMILIES = ["impulse", "lcp"]     # the families that honour restitution (penalty does not)


def _cradle(solver, dt, n=5, swung=1, v=1.0, r=0.05, length=0.5, mass=0.2, pulled_deg=0.0, e=1.0):
    """n balls hanging touching on revolute joints (axis y) `length` below their pivots,
    restitution e, no friction; the first `swung` move at v along +x at the bottom of their swing
    (the velocity their joints allow: ω = −v/L about y); the first pulled aside by
    pulled_deg (at rest)."""
    w = World(dt=dt, solver=solver)
    balls = []
    for i in range(n):
        x = 2 * r * i
        moving = i < swung
        th = math.radians(pulled_deg) if i == 0 else 0.0
        position = (x - length * math.sin(th), 0, 1.0 - length * math.cos(th))
        balls.append(w.add_body(f"ball{i}", Sphere(r), mass=mass, position=position,
                                velocity=(v if moving else 0.0, 0, 0),
                                angular_velocity=(0, -v / length if moving else 0.0, 0),
                                restitution=e, friction=0.0))
        w.add_joint(f"pivot{i}", "revolute", "world", f"ball{i}", anchor=(x, 0, 1.0), axis=(0, 1, 0))
    return w, balls


def _energy(balls):
    """Kinetic plus potential energy (J), gravity along −z."""
    e = 0.0
    for b in balls:
        e += 0.5 * b.mass * float(np.dot(b.velocity, b.velocity)) + b.mass * G * b.position[2]
        e += 0.5 * float(np.dot(b.inertia * b.angular_velocity, b.angular_velocity))   # a sphere: isotropic
    return e


@pytest.mark.parametrize("solver", FAMILIES)
@pytest.mark.parametrize("dt", [0.01, 0.001])
@pytest.mark.parametrize("swung", [1, 2])
def test_newtons_cradle_sends_off_as_many_balls_as_swung_in_at_their_speed(solver, dt, swung):
    """Five touching balls, e = 1, the first `swung` striking the row at v = 1 m/s: after
    the impact step the last `swung` balls move at v (2 %), the others are still (|v| ≤
    2 % of v); energy kept within 1 % and momentum along the row within 2 % (the balls
    answer each collision as free bodies and then their joints: a ball of radius r on a
    rod of length L keeps 1/(1 + 0.4 r²/L²) of its speed, 0.4 % here)."""
    v = 1.0
    w, balls = _cradle(solver, dt, swung=swung, v=v)
    e0, p0 = _energy(balls), sum(b.mass * b.velocity[0] for b in balls)
    w.step()
    vx = np.array([b.velocity[0] for b in balls])
    assert np.all(np.abs(vx[-swung:] - v) <= 0.02 * v), vx
    assert np.all(np.abs(vx[:-swung]) <= 0.02 * v), vx
    assert max(np.linalg.norm(b.velocity) for b in balls[:-swung]) <= 0.02 * v
    assert _energy(balls) == pytest.approx(e0, abs=0.01 * 0.5 * swung * 0.2 * v * v)
    assert sum(b.mass * b.velocity[0] for b in balls) == pytest.approx(p0, rel=0.02)


@pytest.mark.parametrize("solver", FAMILIES)
@pytest.mark.parametrize("n", [3, 7])
@pytest.mark.parametrize("hanging", [True, False])
def test_cradles_of_three_to_seven_balls_hanging_or_free_pass_the_first_balls_speed_to_the_last(solver, n, hanging):
    """n touching balls, e = 1, Δt = 10 ms, the first striking at v = 1 m/s — hanging on
    joints, or free in zero gravity: the last leaves at v (2 %), the others stay (2 %)."""
    v = 1.0
    if hanging:
        w, balls = _cradle(solver, 0.01, n=n, v=v)
    else:
        w = World(dt=0.01, solver=solver, gravity=(0.0, 0.0, 0.0))
        balls = [w.add_body(f"ball{i}", Sphere(0.05), mass=0.2, position=(0.1 * i, 0, 1.0),
                            velocity=(v if i == 0 else 0.0, 0, 0), restitution=1.0, friction=0.0)
                 for i in range(n)]
    w.step()
    vx = np.array([b.velocity[0] for b in balls])
    assert abs(vx[-1] - v) <= 0.02 * v and np.all(np.abs(vx[:-1]) <= 0.02 * v), vx
    if not hanging:                                  # free balls: exact (no joint to answer after)
        assert np.allclose(vx, [0.0] * (n - 1) + [v], atol=1e-12)


@pytest.mark.parametrize("solver", FAMILIES)
@pytest.mark.parametrize("dt", [0.01, 0.001])
@pytest.mark.parametrize("n,e", [(3, 0.5), (5, 0.9), (7, 0.8)])
@pytest.mark.parametrize("hanging", [True, False])
def test_cradle_with_e_below_1_sends_the_last_ball_off_at_the_sequential_collisions_speed(solver, dt, n, e, hanging):
    """n touching balls, restitution e, the first striking at v = 1 m/s, hanging on joints
    or free in zero gravity: after the impact step the last ball moves at ((1 + e)/2)ⁿ⁻¹·v
    and the others together at v·(1 − ((1 + e)/2)ⁿ⁻¹)/(n − 1) (module docstring), within
    2 % of v hanging (the joints answer after the collisions) and 0.1 % free (what the
    inelastic passes leave unconverged)."""
    v = 1.0
    if hanging:
        w, balls = _cradle(solver, dt, n=n, v=v, e=e)
    else:
        w = World(dt=dt, solver=solver, gravity=(0.0, 0.0, 0.0))
        balls = [w.add_body(f"ball{i}", Sphere(0.05), mass=0.2, position=(0.1 * i, 0, 1.0),
                            velocity=(v if i == 0 else 0.0, 0, 0), restitution=e, friction=0.0)
                 for i in range(n)]
    w.step()
    vx = np.array([b.velocity[0] for b in balls])
    last = ((1 + e) / 2) ** (n - 1) * v
    expected = [(v - last) / (n - 1)] * (n - 1) + [last]
    assert np.allclose(vx, expected, rtol=0.0, atol=(0.02 if hanging else 1e-3) * v), (vx, expected)


@pytest.mark.parametrize("solver", FAMILIES)
def test_newtons_cradle_swings_back_and_forth_for_a_second(solver):
    """Released from 30° at Δt = 5 ms (the shipped scene's setting), the row hands the
    swing end to end: after the first impact only the last ball swings out; at 1 s the
    energy is within 2 % of the start (nothing blows up, nothing is lost in the
    repeated impacts)."""
    w, balls = _cradle(solver, 0.005, v=0.0, pulled_deg=30.0)
    e0 = _energy(balls)
    v = math.sqrt(2 * G * 0.5 * (1 - math.cos(math.radians(30))))     # at the bottom: 1.146 m/s
    x, vx = [], []
    for _ in range(int(0.6 / 0.005)):
        w.step()
        x.append([b.position[0] - 0.1 * i for i, b in enumerate(balls)])
        vx.append([b.velocity[0] for b in balls])
    x, vx = np.array(x), np.array(vx)
    first_impact = int(np.argmax(vx[:, 4] > 0.5 * v))
    assert 0.3 < first_impact * 0.005 < 0.45            # a quarter swing: π/2·√(L/g) = 0.35 s
    assert vx[first_impact, 4] == pytest.approx(v, rel=0.02)
    assert np.abs(vx[first_impact:, :4]).max() < 0.02 * v     # the others stay
    assert x[:, 4].max() > 0.2                           # the last one swings out to 0.25 m
    w.advance(0.4)
    assert _energy(balls) == pytest.approx(e0, rel=0.02)


def _drop(solver, dt, ratio, height=1.0, big_r=0.1):
    """A small ball resting on a big one (masses 1 : ratio), both dropped from `height`
    onto the floor, e = 1; returns (v: the big ball's speed at the start of the step in
    which it meets the floor, the small ball's velocity after that step, m₁, m₂)."""
    w = World(dt=dt, solver=solver)
    w.add_body("ground", Plane(), static=True)
    m1, m2 = 1.0, 1.0 / ratio
    r = big_r * ratio ** (-1.0 / 3.0)
    big = w.add_body("big", Sphere(big_r), mass=m1, position=(0, 0, height + big_r), restitution=1.0, friction=0.0)
    small = w.add_body("small", Sphere(r), mass=m2, position=(0, 0, height + 2 * big_r + r), restitution=1.0,
                       friction=0.0)
    for _ in range(int(1.0 / dt)):
        v = -big.velocity[2]
        w.step()
        if small.velocity[2] > 0.0:
            return v, small.velocity[2], m1, m2
    raise AssertionError("the small ball never bounced")


@pytest.mark.parametrize("solver", FAMILIES)
@pytest.mark.parametrize("dt", [0.01, 0.001])
@pytest.mark.parametrize("ratio", [3.0, 10.0])
def test_small_ball_on_a_big_one_leaves_at_the_sequential_collision_speed(solver, dt, ratio):
    """Dropped together from 1 m, touching: the small ball leaves at (3m₁ − m₂)/(m₁ + m₂)·v
    within 3 % (2 v for masses 3 : 1, 29/11 v for 10 : 1)."""
    v, small, m1, m2 = _drop(solver, dt, ratio)
    assert v == pytest.approx(math.sqrt(2 * G * 1.0), rel=0.03)      # it fell freely
    assert small == pytest.approx((3 * m1 - m2) / (m1 + m2) * v, rel=0.03)


@pytest.mark.parametrize("solver", FAMILIES)
@pytest.mark.parametrize("dt", [0.01, 0.001])
def test_two_equal_boxes_dropped_flat_leave_the_floor_together_at_the_impact_speed(solver, dt):
    """Two equal boxes stacked, e = 1, dropped flat from 1 m (four contact points a pair,
    each pair's taken together): the floor turns the bottom one back (v up), it swaps
    velocities with the top one, the floor turns it back again: both leave at v (2 %),
    without turning (|ω| < 1e-3 rad/s). (The simultaneous answer agrees here: what this
    checks is that a pair's four points, taken as one collision, do not turn the boxes.)"""
    w = World(dt=dt, solver=solver)
    w.add_body("ground", Plane(), static=True)
    low = w.add_body("low", Box((0.1, 0.1, 0.05)), mass=1.0, position=(0, 0, 1.05), restitution=1.0)
    top = w.add_body("top", Box((0.1, 0.1, 0.05)), mass=1.0, position=(0, 0, 1.15), restitution=1.0)
    for _ in range(int(1.0 / dt)):
        v = -low.velocity[2]
        w.step()
        if low.velocity[2] > 0.0:
            break
    assert v == pytest.approx(math.sqrt(2 * G * 1.0), rel=0.05)
    assert low.velocity[2] == pytest.approx(v, rel=0.02) and top.velocity[2] == pytest.approx(v, rel=0.02)
    assert max(np.abs(low.angular_velocity).max(), np.abs(top.angular_velocity).max()) < 1e-3


def _bounces(solver, dt, e, height=1.0, r=0.1, duration=None):
    w = World(dt=dt, solver=solver)
    w.add_body("ground", Plane(), static=True)
    ball = w.add_body("ball", Sphere(r), mass=1.0, position=(0, 0, height + r), restitution=e, friction=0.0)
    z, vz = [], []
    for _ in range(int(duration / dt)):
        vz.append(ball.velocity[2])
        w.step()
        z.append(ball.position[2] - r)
    return np.array(z), np.array(vz + [ball.velocity[2]])


@pytest.mark.parametrize("solver", FAMILIES)
def test_elastic_ball_keeps_its_bounce_height_at_ten_millisecond_steps(solver):
    """e = 1, dropped from 1 m, Δt = 10 ms: each of five bounces comes back to 1 m within 1 %."""
    z, vz = _bounces(solver, 0.01, 1.0, duration=5.5 * 2 * math.sqrt(2 / G))
    apexes = [z[i] for i in range(1, len(z)) if vz[i] > 0.0 >= vz[i + 1]]
    assert len(apexes) >= 5
    assert np.allclose(apexes[:5], 1.0, rtol=0.01), apexes


@pytest.mark.parametrize("solver", FAMILIES)
@pytest.mark.parametrize("dt", [0.01, 0.001])
def test_half_elastic_ball_rebounds_at_half_its_impact_speed(solver, dt):
    """e = 0.5: the velocity after the bounce step is 0.5 × the approach speed at its start
    (2 %), for the first two bounces."""
    z, vz = _bounces(solver, dt, 0.5, duration=2.0)
    bounces = [i for i in range(len(vz) - 1) if vz[i] < 0.0 < vz[i + 1] and vz[i] < -0.5]
    assert len(bounces) >= 2
    for i in bounces[:2]:
        assert vz[i + 1] == pytest.approx(-0.5 * vz[i], rel=0.02)


SCENES = Path(__file__).resolve().parent.parent / "scenes"


@pytest.mark.parametrize("scene", ["newtons_cradle", "ball_drop"])
def test_impact_scenes_run_with_the_solver_switched_live_through_every_family(scene):
    """The shipped scenes, switched every 0.5 s through FAMILIES twice: no blow-up (the
    runaway watch included), the state finite."""
    w = load_scene(SCENES / f"{scene}.toml")
    for family in list(FAMILIES_ALL) * 2:
        w.solver = family
        w.advance(0.5)
        w.check_runaway()
        assert w.blown_up is None, (family, w.blown_up)
    assert np.all(np.isfinite(w.state.bodies.pos)) and np.all(np.isfinite(w.state.bodies.vel))


def test_penalty_cradle_moves_off_together_as_an_inelastic_impact():
    """penalty has no restitution (damped contact springs): the struck row takes the first
    ball's momentum together, each ball at v/5 (10 %) — not the textbook cradle."""
    w = load_scene(SCENES / "newtons_cradle.toml", {"solver.kind": "penalty"})
    v = math.sqrt(2 * G * 0.5 * (1 - math.cos(math.radians(30))))
    w.advance(0.45)
    vx = np.array([w.body(f"ball_{i}").velocity[0] for i in range(1, 6)])
    assert np.allclose(vx, v / 5, rtol=0.1), vx
