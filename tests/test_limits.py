"""Joint limits under the impulse and lcp solvers: speculative limit rows
(joint_rows.speculative_limits) stop a joint exactly at its bound, never through it, and
leave alone a joint moving away from a bound or not reaching it within the step."""
import numpy as np
import pytest

from physics import Box, World

DT = 0.01
INERTIA_AXIS = 2.0 * (0.3 ** 2 + 0.05 ** 2) / 12     # a 2 kg, 0.6 × 0.1 m plate about its centre


def _flywheel(solver, omega, angle0=0.0, limits=(-0.5, 0.5), **settings):
    """A plate on a hinge through its centre (axis z, no gravity) at angle0, spinning at omega
    (rad/s); its hinge limited to `limits` (rad)."""
    w = World(dt=DT, solver=solver, gravity=(0.0, 0.0, 0.0))
    half = np.array([0.3, 0.05, 0.3])
    c, s = np.cos(angle0 / 2), np.sin(angle0 / 2)
    w.add_body("plate", Box(tuple(half)), mass=2.0, position=(0, 0, 1))
    w.add_joint("hinge", "revolute", "world", "plate", anchor=(0, 0, 1), axis=(0, 0, 1), limits=limits)
    w.body("plate").orientation = (0.0, 0.0, s, c)         # the hinge reads angle0
    if settings:
        w.configure(solver, **settings)
    w.body("plate").angular_velocity = (0.0, 0.0, omega)
    return w


def _spin_energy(w):
    return 0.5 * INERTIA_AXIS * w.joint("hinge").rate ** 2


@pytest.mark.parametrize("solver", ["impulse", "lcp"])
@pytest.mark.parametrize("omega", [30.0, -60.0])
def test_hinge_swung_fast_into_its_limit_stops_at_the_bound_without_rebound(solver, omega):
    """30-60 rad/s into a ±0.5 rad stop at Δt = 10 ms (0.3-0.6 rad per step): the angle
    never passes the bound by more than 1e-6 rad, the joint stays at it (restitution 0:
    no bounce), and its kinetic energy never rises on the way."""
    w = _flywheel(solver, omega)
    hinge = w.joint("hinge")
    bound = 0.5 if omega > 0 else -0.5
    e_prev = _spin_energy(w)
    worst = 0.0
    for _ in range(60):
        w.step()
        worst = max(worst, (hinge.angle - bound) * np.sign(bound))
        e = _spin_energy(w)
        assert e <= e_prev * (1 + 1e-9) + 1e-12, "a limit must not put energy in"
        e_prev = e
    assert worst <= 1e-6, f"overshoot {worst:.3g} rad"
    assert hinge.angle == pytest.approx(bound, abs=1e-6), "it stops at the bound"
    assert abs(hinge.rate) < 1e-6, "and stays there (no rebound)"
    assert w.max_constraint_error() < 1e-6


@pytest.mark.parametrize("solver", ["impulse", "lcp"])
def test_joint_moving_away_from_a_near_bound_is_not_held(solver):
    """1e-4 rad inside the lower bound, turning away from it at 5 rad/s: the limit row
    does nothing, the plate turns as it would with no limit at all (the unlimited twin:
    same rate, same angle — the integrator's own 2·atan(ωh/2) per step included)."""
    w = _flywheel(solver, 5.0, angle0=-0.5 + 1e-4)
    free = _flywheel(solver, 5.0, angle0=-0.5 + 1e-4, limits=None)
    hinge, twin = w.joint("hinge"), free.joint("hinge")
    for k in range(10):
        w.step()
        free.step()
        assert hinge.rate == pytest.approx(5.0, abs=1e-9)
        assert hinge.angle == pytest.approx(twin.angle, abs=1e-12)
    assert hinge.angle > -0.5 + 0.45


@pytest.mark.parametrize("solver", ["impulse", "lcp"])
def test_joint_approaching_a_bound_it_does_not_reach_this_step_is_not_slowed(solver):
    """Toward the upper bound at 10 rad/s from 0.25 rad away (0.1 rad per step, within the
    rows' speculative reach): the joint moves as the unlimited twin until the step that
    would take it through the bound, and that step ends at the bound, not past it."""
    w = _flywheel(solver, 10.0, angle0=0.25)
    free = _flywheel(solver, 10.0, angle0=0.25, limits=None)
    hinge, twin = w.joint("hinge"), free.joint("hinge")
    for k in range(2):
        w.step()
        free.step()
        assert hinge.rate == pytest.approx(10.0, abs=1e-9)
        assert hinge.angle == pytest.approx(twin.angle, abs=1e-12)
    free.step()
    assert twin.angle > 0.5 + 1e-5, "the unlimited twin passes the bound on the next step"
    w.step()
    assert 0.5 - 1e-3 < hinge.angle <= 0.5 + 1e-6
    for k in range(2):
        w.step()
        assert hinge.angle == pytest.approx(0.5, abs=1e-6)
