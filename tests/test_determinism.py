"""Bit-for-bit determinism of fixed scenes stepped 1000 times.

The state after the run (body_pos, body_quat, body_vel, body_omega as float64
little-endian, concatenated; see state_digest) is hashed with SHA-256 and compared with a
recorded digest, so any change to the physics — intended or not — shows up here.
Within one process, the same scene built twice, stepped in one call or one step at a
time, or rewound with save_state()/restore_state() and re-stepped, must give the same
bits.

The recorded digests are of this machine's build (x86-64, numba 0.68, numpy 2.4, kernels
the tree solve compiled with fastmath): another CPU or compiler version may legitimately round
differently. The within-process checks hold everywhere.
"""
import functools
import hashlib
from pathlib import Path

import numpy as np
import pytest

from physics import World, load_scene
from physics.builders import make_chain

ROOT = Path(__file__).resolve().parent.parent
STEPS = 1000

# SHA-256 of state_digest() after STEPS steps from a fresh build of each scene.
# Update deliberately when the physics changes, never silently: the commit that changes a
# digest says why (its history is in git log -p of this file).
EXPECTED_DIGESTS = {
    "gallery": "101648e543c8de7307202da40c86d3362b933cf4732826ebdf724bea1e2e1eae",
    "chain20_impulse": "fc2ed944a970121bfcb5076d5a429c65561a4563816a178b52101725261b838d",
    # this preset's joints open by centimetres, so links touch their neighbours' neighbours:
    # the digest depends on contacts
    "chain20_penalty": "d8fae1933fa7f1594e5394b288575fd6baf8141ed71db6dbbca6bf2eb8a5d763",
}

STATE_FIELDS = ("pos", "quat", "vel", "omega")          # world.state.bodies


def state_digest(world):
    """SHA-256 (hex) of body_pos, body_quat, body_vel, body_omega — every body, the static
    world included — as float64 little-endian, row-major, concatenated in that order."""
    h = hashlib.sha256()
    for name in STATE_FIELDS:
        h.update(np.ascontiguousarray(getattr(world.state.bodies, name), dtype="<f8").tobytes())
    return h.hexdigest()


def _gallery():
    """One of each joint type with limits, impulse solver, 20 iterations, 2 substeps, dt 5 ms."""
    return load_scene(ROOT / "scenes" / "gallery.toml")


def _chain_impulse():
    """A 20-link revolute chain released horizontal, impulse solver with its defaults (dt 3 ms)."""
    w = World(solver="impulse")
    make_chain(w, links=20)
    return w


def _chain_penalty():
    """The same chain under the penalty solver. The "critical" preset: with the default
    "paper" coefficients these 0.1 kg links blow up within 6 steps at dt 3 ms."""
    w = World(solver="penalty", settings={"penalty_preset": "critical"})
    make_chain(w, links=20)
    return w


SCENES = {"gallery": _gallery, "chain20_impulse": _chain_impulse, "chain20_penalty": _chain_penalty}


def _stepped(scene, steps=STEPS):
    w = SCENES[scene]()
    w.advance_steps(steps)
    return w


@functools.lru_cache(maxsize=None)
def _reference_digest(scene):
    """Digest of a fresh build stepped STEPS times in one call (computed once per run)."""
    w = _stepped(scene)
    assert np.isfinite(w.state.bodies.pos).all() and w.step_count == STEPS
    return state_digest(w)


@pytest.mark.parametrize("scene", list(SCENES))
def test_scene_stepped_1000_times_reaches_the_recorded_state(scene):
    got = _reference_digest(scene)
    assert got == EXPECTED_DIGESTS[scene], (
        f"{scene}: the state after {STEPS} steps changed (digest {got}). If the physics changed "
        "on purpose, update EXPECTED_DIGESTS and say why in the commit; otherwise find what did.")


@pytest.mark.parametrize("scene", list(SCENES))
def test_same_scene_stepped_twice_in_one_process_gives_identical_state(scene):
    assert state_digest(_stepped(scene)) == _reference_digest(scene)


@pytest.mark.parametrize("scene", ["chain20_impulse", "chain20_penalty"])
def test_one_call_of_1000_steps_equals_1000_single_steps(scene):
    """The kernels run many steps per call (readouts on the last one); splitting the run
    into single calls must not change a bit."""
    w = SCENES[scene]()
    for _ in range(STEPS):
        w.step()
    assert state_digest(w) == _reference_digest(scene)


@pytest.mark.parametrize("scene", list(SCENES))
def test_restored_state_restepped_reproduces_the_same_digest(scene):
    """Step half, save, step the other half (= the reference run); restore, step the
    other half again: same bits both times, also after another world ran in between
    (module-level caches such as the impulse solver's tree plans must not leak)."""
    w = _stepped(scene, STEPS // 2)
    saved = w.save_state()
    w.advance_steps(STEPS - STEPS // 2)
    assert state_digest(w) == _reference_digest(scene)
    w.restore_state(saved)
    assert w.step_count == STEPS // 2
    w.advance_steps(STEPS - STEPS // 2)
    assert state_digest(w) == _reference_digest(scene)
    w.restore_state(saved)
    _stepped("chain20_impulse", 10)           # another world steps in between
    w.advance_steps(STEPS - STEPS // 2)
    assert state_digest(w) == _reference_digest(scene)


def test_state_digest_sees_every_field_and_every_bit():
    w = _chain_impulse()
    d0 = state_digest(w)
    for name in STATE_FIELDS:
        arr = getattr(w.state.bodies, name)
        old = arr[-1, -1]
        arr[-1, -1] = np.nextafter(old, np.inf)
        assert state_digest(w) != d0, name
        arr[-1, -1] = old
    assert state_digest(w) == d0


def _full_digest(world):
    """state_digest plus the ropes' nodes and element frames and the rows' impulses."""
    h = hashlib.sha256(state_digest(world).encode())
    for rope in world.ropes.values():
        h.update(np.ascontiguousarray(rope.positions).tobytes() + np.ascontiguousarray(rope.frames).tobytes())
    h.update(np.ascontiguousarray(world.state.rows.impulse).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("scene", ["stack", "rope_tow"])
@pytest.mark.parametrize("family", ["penalty", "impulse", "lcp"])
def test_a_state_restored_into_a_fresh_world_replays_1_s_bit_for_bit(scene, family):
    """save_state holds everything a step carries over (the contacts' warm start and the
    size of their buffers, the energy budget): a fresh World of the same scene, given the
    state, runs the next second exactly as the world that saved it."""
    path = ROOT / "scenes" / f"{scene}.toml"
    a = load_scene(path)
    a.solver = family
    a.advance(0.3)
    saved = a.save_state()
    a.advance(1.0)
    b = load_scene(path)
    b.solver = family
    b.restore_state(saved)
    assert (b.time, b.step_count) == tuple(saved["clock"][:2])
    b.advance(1.0)
    assert b.time == a.time and _full_digest(b) == _full_digest(a)
