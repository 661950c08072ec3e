"""Position servos solved with their joints in the impulse family's direct tree solve
(impulse/direct_sets.choose_direct_rows, tree/factor._motor_axes): a servo is the soft row
J V + bias + γλ = 0 of Box2D's soft step, so the direct solve must land on the fixed point
that sequential impulses converge to — checked here against seed 001's iterations run to
round-off on the same state — and a servo that reaches its torque bound must hold the bound."""
import numpy as np
import pytest

from physics import Box, World


def _servo_arm(max_force):
    """Six links hanging from the world: hinges about alternating axes and one slider, each
    joint a 20 Hz position servo towards a pose away from the present one."""
    w = World(dt=0.005, solver="impulse")
    parent, x = "world", 0.0
    kinds = ["revolute", "revolute", "prismatic", "revolute", "revolute", "revolute"]
    axes = [(0, 1, 0), (0, 0, 1), (1, 0, 0), (0, 1, 0), (1, 0, 0), (0, 1, 0)]
    for i, (kind, axis) in enumerate(zip(kinds, axes)):
        name = f"link{i}"
        w.add_body(name, Box((0.2, 0.04, 0.04)), mass=0.5 + 0.3 * i, position=(x + 0.1, 0.0, 0.0))
        w.add_joint(f"j{i}", kind, parent, name, anchor=(x, 0.0, 0.0), axis=axis)
        target = 0.05 if kind == "prismatic" else 0.4 * (-1) ** i
        w.joint(f"j{i}").set_motor("position", target, max_force=max_force, frequency=20.0, damping=1.0)
        parent, x = name, x + 0.2
    w.keep_apart([f"link{i}" for i in range(6)])      # the joints alone: no contact rows to iterate
    w.configure("impulse", stabilization="none", warm_start=True)
    return w


def _step_with(w, state, **settings):
    w.restore_state(state)
    w.configure("impulse", **settings)
    w.advance_steps(1)
    return np.concatenate([w.state.bodies.vel.ravel(), w.state.bodies.omega.ravel()]), w.stats


@pytest.mark.parametrize("max_force", [1e4, 3.0])
def test_servos_in_the_tree_solve_land_on_the_sequential_impulses_fixed_point(max_force):
    # max_force 3: the shoulder servos saturate (their gravity torque is larger), leave the
    # direct solve and hold their bound; 1e4: every servo stays inside its bound
    w = _servo_arm(max_force)
    w.advance(0.2)
    state = w.save_state()
    direct, stats = _step_with(w, state, method="direct", iterations=50, epsilon=1e-12)
    reference, _ = _step_with(w, state, method="iterative", iterations=100000, epsilon=1e-15)
    assert np.abs(direct - reference).max() <= 1e-9 * max(1.0, np.abs(reference).max())
    if max_force > 100:
        assert stats.iterations <= 2            # nothing left to iterate: one exact solve
    w.restore_state(state)
    w.configure("impulse", method="direct", iterations=50, epsilon=1e-12)
    w.advance_steps(1)
    torque = np.array([abs(w.joint(f"j{i}").friction_torque) for i in range(6)])
    assert torque.max() <= max_force * (1 + 1e-9)
    if max_force < 100:
        assert np.isclose(torque.max(), max_force, rtol=1e-9)    # a servo at its bound holds it

