"""The solver kernels' HULLS feature: a world whose colliding bodies include no Convex or
Compound runs the narrow phase of the primitive pairs only (collision/narrow.py
narrow_phase_primitive, contacts.narrow_contacts_primitive), one with a hull the full one;
both give the same contacts, bit for bit, where there is no hull. A hull or a coupling
between joints compiles both features (World.robot_features), and a family whose kernels
always have them (ROBOT_FEATURES_ALWAYS) compiles them for every world."""
from pathlib import Path

import numpy as np
import pytest

import physics
from physics import Box, Capsule, Convex, Cylinder, Plane, Sphere
from physics.collision import make_shapes, pack_bodies, candidate_pairs, joined_keys
from physics.collision.narrow import narrow_phase, narrow_phase_primitive
from physics.contacts import N_NOW, N_OVERFLOW, broad_contacts, narrow_contacts, narrow_contacts_primitive
from physics.quat import q_from_axis_angle, q_to_matrix
from physics.solvers import FAMILIES

ROOT = Path(__file__).resolve().parent.parent
ROCK = np.array([[0.1, 0.0, 0.0], [-0.08, 0.07, 0.0], [-0.06, -0.09, 0.01], [0.0, 0.01, 0.12], [0.02, -0.02, -0.05]])


def _compiled_flags(world):
    """The compile-time constants of the kernel the world's next step calls (its closure's)."""
    fn = world.active_solver.begin(world, False)["kernel"].py_func
    return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))


def _compiled_with_hulls(world):
    """The HULLS constant of the kernel the world's next step calls."""
    return _compiled_flags(world)["HULLS"]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_world_takes_the_hulls_narrow_phase_once_a_colliding_hull_is_added_and_the_hull_rests_on_the_floor(family):
    w = physics.World(dt=0.005, solver=family)
    w.add_body("ground", Plane(), static=True)
    w.add_body("box", Box((0.1, 0.1, 0.1)), mass=1.0, position=(0.0, 0.0, 0.1))
    w.add_body("ghost", Convex(ROCK), mass=0.5, position=(1.0, 0.0, 0.5), collide=False)   # touches nothing
    assert not w.has_hulls() and _compiled_with_hulls(w) == FAMILIES[family].ROBOT_FEATURES_ALWAYS
    w.advance(0.1)
    rock = Convex(ROCK)
    w.add_body("rock", rock, mass=0.5, position=(-0.5, 0.0, 0.05 - float(rock.vertices[:, 2].min())))  # 5 cm up
    assert w.has_hulls() and _compiled_with_hulls(w)
    w.advance(1.0)
    c = w.contacts()
    rock_id = w.body("rock").index
    assert np.any(c["bodies"] == rock_id)                       # found by the hulls' narrow phase
    body = w.body("rock")
    bottom = float((rock.vertices @ q_to_matrix(body.orientation).T)[:, 2].min() + body.position[2])
    assert -0.03 < bottom < 0.01                    # on the floor (penalty's springs a little in), not through it
    assert np.linalg.norm(body.velocity) < 0.05


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_coupling_or_a_hull_compiles_both_features_and_a_hull_world_takes_an_empty_coupling_bundle(family):
    geared = physics.World(dt=0.005, solver=family)
    geared.add_body("ground", Plane(), static=True)
    geared.add_body("crate", Box((0.1, 0.1, 0.1)), mass=1.0, position=(0.0, 0.0, 0.1))
    for name, x in (("a", 1.0), ("b", 1.5)):
        geared.add_body(name, Box((0.05, 0.05, 0.2)), mass=1.0, position=(x, 0.0, 0.8))
        geared.add_joint(f"h{name}", "revolute", "world", name, (x, 0.0, 1.0), axis=(0.0, 1.0, 0.0))
    plain = _compiled_flags(geared)
    assert plain["HULLS"] == plain["COUPLINGS"] == FAMILIES[family].ROBOT_FEATURES_ALWAYS
    geared.add_coupling("hb", "ha", -1.0)
    flags = _compiled_flags(geared)
    assert not geared.has_hulls() and flags["HULLS"] and flags["COUPLINGS"]
    geared.body("a").angular_velocity = (0.0, 2.0, 0.0)
    geared.advance(0.1)
    qa, qb = geared.joint("ha").angle, geared.joint("hb").angle
    assert abs(qa) > 0.01 and abs(qb + qa) < 0.02 * abs(qa)     # the gear held: q_b = −q_a
    assert abs(geared.body("crate").position[2] - 0.1) < 0.01    # the crate rests on the floor

    rocky = physics.World(dt=0.005, solver=family)
    rocky.add_body("ground", Plane(), static=True)
    rock = Convex(ROCK)
    rocky.add_body("rock", rock, mass=0.5, position=(0.0, 0.0, 0.01 - float(rock.vertices[:, 2].min())))
    flags = _compiled_flags(rocky)
    assert flags["HULLS"] and flags["COUPLINGS"]
    assert rocky.coupling_data().joint.shape[0] == 0
    rocky.advance(0.5)
    assert np.linalg.norm(rocky.body("rock").velocity) < 0.05     # fell 1 cm and rests


def _random_primitives(rng, n):
    """n primitives (sphere, capsule, box, cylinder) tumbled in a 0.8 m cube over a floor
    plane: many overlapping pairs of every kind."""
    kinds, params, pos, quat = ["plane"], [[0.0]], [[0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0, 1.0]]
    for _ in range(n):
        k = rng.choice(["sphere", "capsule", "box", "cylinder"])
        kinds.append(k)
        size = rng.uniform(0.05, 0.2, 3)
        params.append(size[:1] if k == "sphere" else (size[:2] if k in ("capsule", "cylinder") else size))
        pos.append([*rng.uniform(-0.4, 0.4, 2), rng.uniform(-0.05, 0.6)])
        quat.append(q_from_axis_angle(rng.normal(size=3), rng.uniform(0, np.pi)))
    return kinds, params, np.array(pos), np.array(quat)


@pytest.mark.parametrize("seed", range(6))
def test_the_primitive_narrow_phase_gives_the_full_narrow_phases_contacts_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    shapes = make_shapes(*_random_primitives(rng, 40))
    pairs = np.zeros((4000, 2), np.int64)
    margin = 0.02
    n_pairs = candidate_pairs(shapes.kind, shapes.params, shapes.position, shapes.quaternion, shapes.static,
                              shapes.hulls, joined_keys(np.zeros((0, 2)), 41), margin, pairs)
    assert 60 < n_pairs <= pairs.shape[0]
    body = pack_bodies(shapes.params, shapes.position, shapes.quaternion)
    out = []
    for fn, hulls in ((narrow_phase, (shapes.hulls,)), (narrow_phase_primitive, ())):
        ci, cf, count = np.full((4 * n_pairs, 3), -7, np.int64), np.full((4 * n_pairs, 7), np.nan), np.zeros(2, np.int64)
        fn(shapes.kind, body, *hulls, pairs, n_pairs, margin, ci, cf, count)
        out.append((ci, cf, count))
    (ci, cf, count), (ci2, cf2, count2) = out
    assert count[0] > 100 and count[1] == 0
    kinds = {tuple(sorted(shapes.kind[ci[k, :2]])) for k in range(count[0])}
    assert len(kinds) >= 12                                     # most kind pairs took part
    np.testing.assert_array_equal(count2, count)
    np.testing.assert_array_equal(ci2, ci)
    assert cf2.tobytes() == cf.tobytes()                         # the same bits, NaN padding included


def test_a_shipped_scene_without_hulls_finds_the_same_contacts_by_either_narrow_phase():
    w = physics.load_scene(ROOT / "scenes" / "stack.toml")
    assert not w.has_hulls()
    w.advance(0.5)
    primitive = w.contact_data()
    assert primitive.shapes.hulls is None                   # no hull: the kernels take no hull table
    full = w.contact_data(True)                             # a kernel with the robots' features takes the table
    assert full.shapes.hulls is not None and full.buffers is primitive.buffers
    bodies = w.kernel_bundles(w.active_solver.free_rows_used(w))[1]
    found = []
    for narrow, data in ((narrow_contacts, full), (narrow_contacts_primitive, primitive)):
        n_pairs = broad_contacts(data, bodies)
        m = narrow(data, n_pairs)
        b = data.buffers
        found.append((m, b.ci[:m].copy(), b.cf[:m].copy(), b.count.copy(), int(b.n[N_NOW]), int(b.n[N_OVERFLOW])))
    (m, ci, cf, count, now, over), (m2, ci2, cf2, count2, now2, over2) = found
    assert m > 40 and over == 0                                 # the stack's boxes on each other and the floor
    assert (m2, now2, over2) == (m, now, over)
    np.testing.assert_array_equal(ci2, ci)
    np.testing.assert_array_equal(count2, count)
    assert cf2.tobytes() == cf.tobytes()


def test_only_a_colliding_convex_or_compound_body_asks_for_the_hulls_narrow_phase():
    w = physics.World(dt=0.01)
    w.add_body("ground", Plane(), static=True)
    for i, shape in enumerate((Sphere(0.1), Capsule(0.05, 0.1), Box((0.1, 0.1, 0.1)), Cylinder(0.1, 0.1))):
        w.add_body(f"b{i}", shape, mass=1.0, position=(0.3 * i, 0.0, 0.3))
    assert not w.has_hulls()
    w.add_body("rock", Convex(ROCK), mass=1.0, position=(2.0, 0.0, 0.3))
    assert w.has_hulls()
    w.body("rock").collide = False
    assert not w.has_hulls()
