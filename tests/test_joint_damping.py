"""Viscous joint damping (Joint.damping, a URDF's <dynamics damping>) under every family
against closed forms: a damped wheel, slider and ball lose speed as e^(−c t/I), a damped
pendulum rings down at c/(2I), a damped chain loses exactly the dampers' work ∫c q̇² dt,
and a damper of any size never adds energy."""
import math

import numpy as np
import pytest

from physics import Box, Sphere, World
from physics.builders import make_chain

from energy_helpers import kept_energy

FAMILIES = ("impulse", "lcp", "penalty")


def _spinner(family, kind, c, speed=10.0):
    """One body on a joint to the world at its centre, no gravity, moving along the joint's
    free DOF at `speed`: a 2 kg box wheel on a hinge, a 2 kg box on a slide, a 2 kg ball on a
    ball joint spinning about a skew axis. Returns the world, the body, its inertia (or
    mass) along the DOF and the unit direction of the motion."""
    w = World(dt=1 / 240, gravity=(0, 0, 0), solver=family)
    if kind == "spherical":
        w.add_body("b", Sphere(0.1), mass=2.0, position=(0, 0, 1))
        inertia = 0.4 * 2.0 * 0.1 ** 2
    else:
        w.add_body("b", Box((0.2, 0.2, 0.05)), mass=2.0, position=(0, 0, 1))
        inertia = 2.0 * (0.4 ** 2 + 0.4 ** 2) / 12 if kind == "revolute" else 2.0
    axis = np.array([0.0, 0.0, 1.0])
    w.add_joint("j", kind, "world", "b", anchor=(0, 0, 1), axis=tuple(axis), damping=c)
    direction = np.array([1.0, 2.0, 3.0]) / math.sqrt(14.0) if kind == "spherical" else axis
    if kind == "prismatic":
        w.body("b").velocity = tuple(speed * direction)
    else:
        w.body("b").angular_velocity = tuple(speed * direction)
    return w, w.body("b"), inertia, direction


def _speed(body, kind, direction):
    v = body.velocity if kind == "prismatic" else body.angular_velocity
    return float(np.dot(v, direction)), float(np.linalg.norm(np.cross(v, direction)))


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kind", ["revolute", "prismatic", "spherical"])
def test_a_damped_joint_loses_speed_as_exp_of_minus_c_t_over_I(family, kind):
    """c/I = 1 /s: after 1 s at Δt = 1/240 s the speed is e^(−1) of the start within
    0.3 % (the impulse and lcp families' damper at the start rate gives (1 − cΔt/I)^n,
    penalty's backward Euler 1/(1 + cΔt/I)^n: both 0.2 % from the exponential), along
    the same direction."""
    w0, _, inertia, _ = _spinner(family, kind, 0.0)
    w, body, _, direction = _spinner(family, kind, inertia)       # c = I · 1 /s
    w.advance_steps(240)
    along, across = _speed(body, kind, direction)
    assert along / 10.0 == pytest.approx(math.exp(-1.0), rel=3e-3)
    assert across <= 1e-9
    w0.advance_steps(240)
    assert _speed(w0.body("b"), kind, direction)[0] == pytest.approx(10.0, rel=1e-9)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_huge_damper_stops_the_joint_at_once_and_never_adds_energy(family):
    """c = 1e9 N·m·s/rad on a spinning wheel: the joint stops within a step (the damper's
    impulse is capped at the one that stops it) and nothing blows up."""
    w, body, _, direction = _spinner(family, "revolute", 1e9)
    speeds = []
    for _ in range(10):
        w.advance_steps(1)                  # a blow-up would raise SimulationBlowUp
        speeds.append(abs(_speed(body, "revolute", direction)[0]))
    assert max(speeds) <= 1e-6


def _pendulum(family, gamma, kick=0.5):
    """A 1 kg, 0.5 m rod hanging from a hinge, kicked at `kick` rad/s, with damping
    c = 2γI (I about the hinge): small swings ring down as e^(−γt). Returns the world and
    c."""
    w = World(dt=1 / 240, solver=family)
    length, m = 0.5, 1.0
    w.add_body("rod", Box((0.02, 0.02, length / 2)), mass=m, position=(0, 0, 1 - length / 2))
    inertia = m * (length ** 2 + 0.04 ** 2) / 12 + m * (length / 2) ** 2
    c = 2.0 * gamma * inertia
    w.add_joint("pin", "revolute", "world", "rod", anchor=(0, 0, 1), axis=(0, 1, 0), damping=c)
    w.body("rod").angular_velocity = (0, kick, 0)
    w.body("rod").velocity = (-kick * length / 2, 0, 0)
    return w


@pytest.mark.parametrize("family", FAMILIES)
def test_a_damped_pendulum_rings_down_at_c_over_2I(family):
    """γ = c/(2I) = 1 /s: the swings' peaks over 5 s fall as e^(−γt) with γ within 2 %;
    undamped, the peaks stay (|γ| ≤ 1e-3 /s)."""
    for gamma, tol in ((1.0, 0.02), (0.0, 1e-3)):
        w = _pendulum(family, gamma)
        pin = w.joint("pin")
        q = []
        for _ in range(5 * 240):
            w.step()
            q.append(pin.angle)
        q = np.array(q)
        t = np.arange(1, len(q) + 1) * w.dt
        peaks = [i for i in range(1, len(q) - 1) if q[i] > 0 and q[i - 1] < q[i] >= q[i + 1]]
        assert len(peaks) >= 4
        rate = -np.polyfit(t[peaks], np.log(q[peaks]), 1)[0]
        assert abs(rate - gamma) <= tol * max(gamma, 1.0)


@pytest.mark.parametrize("family", ["impulse", "penalty"])
def test_a_damped_chain_loses_exactly_the_dampers_work(family):
    """Three 0.1 kg, 0.3 m links released from horizontal, c = 0.005 N·m·s/rad on each
    hinge: over 2 s the energy falls by ∫ c Σ q̇² dt (the joints' rates, trapezoid) within
    1 %. The impulse family's energy projection
    counts the dampers' work, as it counts friction's; penalty's backward Euler puts the
    dampers into its implicit system. (lcp loses energy of its own on this chain: not a
    check of the dampers.)"""
    w = World(dt=1 / 240, solver=family)
    make_chain(w, "ch", links=3, link_length=0.3, radius=0.02, origin=(0, 0, 2))
    joints = [w.joint(info.name) for info in w.joint_info]
    c = 0.005
    for j in joints:
        j.damping = c
    e0, work = kept_energy(w), 0.0
    before = np.array([j.rate for j in joints])
    for _ in range(2 * 240):
        w.step()
        after = np.array([j.rate for j in joints])
        work += c * 0.5 * ((before ** 2).sum() + (after ** 2).sum()) * w.dt
        before = after
    assert work > 0.3
    assert (e0 - kept_energy(w)) / work == pytest.approx(1.0, abs=0.01)


def test_damping_is_checked_and_reported_honoured_by_every_family():
    w = World()
    w.add_body("b", Box((0.1, 0.1, 0.1)), mass=1.0)
    with pytest.raises(ValueError, match="damping"):
        w.add_joint("j", "revolute", "world", "b", anchor=(0, 0, 0), damping=-1.0)
    j = w.add_joint("j", "revolute", "world", "b", anchor=(0, 0, 0), damping=0.5)
    assert j.damping == 0.5
    for bad in (-0.1, math.nan, math.inf):
        with pytest.raises(ValueError, match="damping"):
            j.damping = bad
    for family in FAMILIES:
        w.solver = family
        assert w.unhonoured() == []
