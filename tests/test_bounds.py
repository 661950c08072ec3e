"""Masses, densities and inertias are checked where they come in (physics/bounds.py):
tiny or huge ones are refused with one line (CLI: exit status 2, the file and the key;
API: a ValueError naming the body), the world untouched — never a ZeroDivisionError from
a kernel, nor numpy's overflow warnings."""
import contextlib
import io
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import physics
from physics import Box, Sphere, World, bounds
from physics.rope import Rope
from shell.cli import main

SCENES = Path(__file__).resolve().parent.parent / "scenes"
DOOR, ROPE = str(SCENES / "door.toml"), str(SCENES / "rope_swing.toml")


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # a numpy overflow warning fails the test
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def _refused(argv, *words):
    status, out, err = _run(argv)
    assert status == 2 and out == "", (status, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


@pytest.mark.parametrize("mass", ["1e-300", "1e-200", "1e-100", "1e-7", "0", "-1", "1e13"])
def test_a_door_too_light_or_too_heavy_is_refused_naming_the_key(mass):
    """Issue 27's reproducer: 1e-300 kg (and up to 1e-200) was a ZeroDivisionError in the kernels."""
    _refused([DOOR, "--headless", "--duration", "0.2", "--set", f"body.door.mass={mass}"],
             f"{DOOR}: --set body.door.mass: expected a mass between 1e-06 and 1e+12 kg")


def test_the_bounds_themselves_are_accepted_and_run():
    for mass in (bounds.MASS_MIN, 1e6):
        status, out, err = _run([DOOR, "--headless", "--duration", "0.05", "--set", f"body.door.mass={mass!r}"])
        assert status in (0, 3) and "Traceback" not in err and "internal error" not in err, err


@pytest.mark.parametrize("density", ["1e-300", "0.0001", "1e6"])
def test_a_rope_of_absurd_density_is_refused_without_numpy_warnings(density):
    _refused([ROPE, "--headless", "--duration", "0.1", "--set", f"rope.rope.density={density}"],
             "--set rope.rope.density: expected a density between 0.001 and 100000 kg/m³")


def test_a_body_density_beyond_the_bounds_is_refused(tmp_path):
    path = tmp_path / "dense.toml"
    path.write_text('[[bodies]]\nname = "b"\nshape = "sphere"\nradius = 0.1\ndensity = 1e-300\n')
    _refused([path, "--headless", "--duration", "0.01"], f"{path}: bodies[0].density: expected a density between")


def _counts(world):
    return world.model.bodies.count, len(world.model.body_info), world.model.version


@pytest.mark.parametrize("kwargs, words", [
    (dict(mass=1e-300), "body 'x': mass must be between 1e-06 and 1e+12 kg, got 1e-300"),
    (dict(mass=float("nan")), "body 'x': mass must be between"),
    (dict(mass="heavy"), "body 'x': mass must be a number, got 'heavy'"),
    (dict(density=1e-300), "body 'x': density must be between 0.001 and 100000 kg/m³, got 1e-300"),
    (dict(mass=1e9), "body 'x': mass 1e+09 kg is 1e+09 times heavier than body 'bob' (1 kg)"),
])
def test_the_api_refuses_masses_beyond_the_bounds_and_the_world_is_unchanged(kwargs, words):
    w = World()
    w.add_body("bob", Sphere(0.1), mass=1.0)
    before = _counts(w)
    with pytest.raises(ValueError, match=re.escape(words)):
        w.add_body("x", Sphere(0.1), **kwargs)
    assert _counts(w) == before and not w.has_body("x")


def test_a_light_body_beside_a_heavy_one_is_refused_beyond_the_ratio():
    w = World()
    w.add_body("heavy", Box((0.5, 0.5, 0.5)), mass=1e7)
    with pytest.raises(ValueError, match=r"body 'light': mass 0.01 kg is 1e\+09 times lighter than body 'heavy'"):
        w.add_body("light", Sphere(0.05), mass=0.01)
    w.add_body("light", Sphere(0.05), mass=0.1)            # 1e8: the bound itself
    assert w.body("light").mass == 0.1 and np.all(np.isfinite(w.model.bodies.inv_inertia))


def test_rope_density_is_checked_at_construction_and_when_edited():
    with pytest.raises(ValueError, match="density must be between"):
        Rope.straight((0, 0, 1), (1, 0, 1), segments=4, density=1e-300)
    rope = Rope.straight((0, 0, 1), (1, 0, 1), segments=4)
    with pytest.raises(ValueError, match="density must be between"):
        rope.density = 1e300
    assert rope.density == 1200.0 and np.isfinite(rope.mass)


def test_a_milligram_sphere_steps_without_a_kernel_error():
    """At the lower bound every inverse and product the solvers form stays finite."""
    for solver in physics.solvers.FAMILIES:
        w = World(dt=0.001, solver=solver)
        w.add_body("ground", physics.Plane(), static=True)
        w.add_body("grain", Sphere(0.005), mass=bounds.MASS_MIN, position=(0, 0, 0.0049))
        w.advance(0.05)
        assert np.isfinite(w.state.bodies.pos).all() and np.isfinite(w.state.bodies.vel).all()
