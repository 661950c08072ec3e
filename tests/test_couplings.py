"""Coupling rows between joints, q_f = m·q_l + o (a URDF <mimic>): the geared pair's
closed form under every family, energy through a coupling, the API's checks and the
state."""
import math
from pathlib import Path

import numpy as np
import pytest

import physics
from physics.shapes import Box, Capsule
from energy_helpers import kept_energy

DT = 0.01
HALF_A, HALF_B = (0.4, 0.05, 0.4), (0.2, 0.05, 0.2)      # half extents (m)
MASS_A, MASS_B = 2.0, 1.0


def _gears(ratio, method="auto", keep_energy=True, family="impulse"):
    """Two boxes on fixed hinges about y through their centres, b coupled to a."""
    w = physics.World(dt=DT, solver=family)
    w.configure("impulse", method=method, keep_energy=keep_energy)
    w.add_body("a", Box(HALF_A), mass=MASS_A, position=(0, 0, 1))
    w.add_body("b", Box(HALF_B), mass=MASS_B, position=(1, 0, 1))
    w.add_joint("ha", "revolute", "world", "a", (0, 0, 1), axis=(0, 1, 0))
    w.add_joint("hb", "revolute", "world", "b", (1, 0, 1), axis=(0, 1, 0))
    w.add_coupling("hb", "ha", ratio, 0.0)
    return w


def _mirrored_pendulums(family):
    """Capsule pendulums of 1 and 2 kg hung from the world at ±0.6 rad, the second's hinge
    tied to the first's at ratio −1."""
    w = physics.World(dt=DT, solver=family)
    for name, x, tilt, mass in (("p", 0.0, 0.6, 1.0), ("q", 1.0, -0.6, 2.0)):
        w.add_body(name, Capsule(0.03, 0.2), mass=mass,
                   position=(x + 0.25 * math.sin(tilt), 0, 1 - 0.25 * math.cos(tilt)),
                   orientation=(0, math.sin(tilt / 2), 0, math.cos(tilt / 2)))
        w.add_joint(f"h{name}", "revolute", "world", name, (x, 0, 1), axis=(0, 1, 0))
    w.add_coupling("hq", "hp", -1.0)
    return w


def _inertia_y(half, mass):
    return mass * ((2 * half[0]) ** 2 + (2 * half[2]) ** 2) / 12.0


@pytest.mark.parametrize("method", ["iterative", "direct", "lcp"])
@pytest.mark.parametrize("ratio", [1.0, -2.0, 0.5])
def test_a_torque_on_a_geared_pair_accelerates_it_by_torque_over_the_reflected_inertia(ratio, method):
    # α_a = τ / (I_a + m² I_b): the coupling's impulse carries m·τ_b to b and its reaction to a;
    # semi-implicit Euler from rest: q_n = α h² n(n + 1)/2 (impulse on both its paths; lcp
    # with the coupling a loop row of its LCP)
    tau, n = 3.0, 50
    w = _gears(ratio, family="lcp") if method == "lcp" else _gears(ratio, method)
    w.add_load("a", torque=(0, tau, 0))
    w.advance_steps(n)
    alpha = tau / (_inertia_y(HALF_A, MASS_A) + ratio ** 2 * _inertia_y(HALF_B, MASS_B))
    qa, qb = w.joint("ha").angle, w.joint("hb").angle
    assert qa == pytest.approx(alpha * DT ** 2 * n * (n + 1) / 2, rel=1e-3)
    assert qb == pytest.approx(ratio * qa, rel=1e-3)
    assert w.joint("ha").rate == pytest.approx(alpha * DT * n, rel=1e-3)


@pytest.mark.parametrize("preset", ["stiff", "critical"])
@pytest.mark.parametrize("ratio", [1.0, -2.0, 0.5])
def test_penalty_springs_a_geared_pair_to_torque_over_the_reflected_inertia(ratio, preset):
    # the coupling an implicit spring of penalty's system in every preset (ω = κ_s/Δt on its
    # effective mass): backward Euler from rest gives ω_n = α h n, q_n = α h² n(n + 1)/2;
    # the spring gives by its load over its stiffness, q_b − m q_a within 1e-4 rad (as a
    # penalty joint by F Δt²/(κ² m)). (The paper preset's explicit hinge springs do not
    # hold the small box turning at this Δt, coupled or not.)
    tau, n = 3.0, 50
    w = _gears(ratio, family="penalty")
    w.configure("penalty", penalty_preset=preset)
    w.add_load("a", torque=(0, tau, 0))
    w.advance_steps(n)
    alpha = tau / (_inertia_y(HALF_A, MASS_A) + ratio ** 2 * _inertia_y(HALF_B, MASS_B))
    qa, qb = w.joint("ha").angle, w.joint("hb").angle
    assert qa == pytest.approx(alpha * DT ** 2 * n * (n + 1) / 2, rel=1e-3)
    assert abs(qb - ratio * qa) <= 1e-4
    assert w.joint("ha").rate == pytest.approx(alpha * DT * n, rel=1e-3)
    assert w.unhonoured() == []


def test_energy_passes_through_a_coupling_between_two_pendulums_and_their_sum_is_kept():
    # two capsule pendulums of 1 and 2 kg hung from the world at ±0.6 rad, the second tied
    # to the first at ratio −1 (they swing mirrored, one degree of freedom): one grounded
    # group for the energy projection, its kinetic and potential energy kept (at the turns,
    # where there is too little motion to scale, what is owed is paid on the way down)
    w = _mirrored_pendulums("impulse")
    e0 = kept_energy(w)
    worst, apart, swing, last = 0.0, 0.0, 0.0, 0.0
    for _ in range(200):
        w.step()
        last = kept_energy(w) - e0
        worst = max(worst, abs(last))
        apart = max(apart, abs(w.joint("hq").angle + w.joint("hp").angle))
        swing = max(swing, abs(w.joint("hp").angle))
    assert swing > 1.0                      # it swings through the bottom (1.2 rad peak to peak)
    assert worst <= 1e-4 * e0 and abs(last) <= 1e-9 * e0 and apart <= 1e-6


def test_a_coupling_refuses_what_it_cannot_tie_naming_the_joints():
    w = _gears(1.0)
    w.add_body("c", Box((0.1, 0.1, 0.1)), mass=1.0, position=(2, 0, 1))
    w.add_joint("ball", "spherical", "world", "c", (2, 0, 1))
    cases = [(("nope", "ha"), "'nope' is not a joint"), (("ball", "ha"), "spherical"),
             (("ha", "ha"), "cannot follow itself"), (("hb", "ha"), "already follows"),
             (("ha", "hb", math.nan), "finite")]
    for args, words in cases:
        with pytest.raises(ValueError, match=words):
            w.add_coupling(*args)
    assert w.couplings() == [("hb", "ha", 1.0, 0.0)]


def test_a_saved_state_keeps_the_couplings_impulses_and_replays_bit_for_bit():
    w = _gears(-2.0, "direct")
    w.add_load("a", torque=(0, 3.0, 0), start=0.0, end=0.2)
    w.advance_steps(10)
    s = w.save_state()
    w.advance_steps(20)
    q, impulse = w.joint("hb").angle, w.state.couplings.impulse.copy()
    w.restore_state(s)
    w.advance_steps(20)
    assert w.joint("hb").angle == q and np.array_equal(w.state.couplings.impulse, impulse)


@pytest.mark.parametrize("family, tol", [("impulse", 1e-6), ("lcp", 1e-6), ("penalty", 1e-4)])
def test_every_family_holds_two_pendulums_mirrored_through_their_swing(family, tol):
    # the two pendulums of the energy test released under each family: q_q = −q_p along
    # the whole swing (penalty's spring gives by its load over its stiffness)
    w = _mirrored_pendulums(family)
    assert w.unhonoured() == []
    apart, swing = 0.0, 0.0
    for _ in range(200):
        w.step()
        apart = max(apart, abs(w.joint("hq").angle + w.joint("hp").angle))
        swing = max(swing, abs(w.joint("hp").angle))
    assert swing > 0.5 and apart <= tol


def test_saving_a_scene_refuses_a_coupling_made_in_python_and_keeps_a_robots_mimic(tmp_path):
    from physics.io.scene_writer import scene_dict
    with pytest.raises(ValueError, match="'hb' follows another through a coupling made in Python"):
        scene_dict(_gears(1.0))
    w = physics.load_scene(Path(__file__).resolve().parents[1] / "scenes" / "xarm_pick.toml")
    assert len(w.couplings()) == 5 and "robots" in scene_dict(w)       # the URDF's <mimic>: written as [[robots]]
