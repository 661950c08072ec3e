"""Scene builders shared by scene files, benchmarks and tests."""
import numpy as np

from .shapes import Capsule


def make_chain(world, name="chain", links=10, joint="revolute", link_length=0.1, radius=0.02,
               mass=0.1, origin=(0.0, 0.0, 0.0), direction=(1.0, 0.0, 0.0), axis=(0.0, 1.0, 0.0),
               parent="world", color=(0.85, 0.55, 0.2)):
    """A pendulum chain of capsule links laid out from `origin` along `direction`.

    Link i is the body f"{name}_{i}" (mass kg, centre-to-centre length m); joint i,
    f"{name}_j{i}", joins link i−1 (or `parent`) to link i at their shared end, a
    revolute about `axis` or a spherical joint. Returns the list of link bodies.
    Built with World.add_bodies / add_joints: O(links) numpy work, the same arrays as
    adding the links one by one.
    """
    if joint not in ("revolute", "spherical"):
        raise ValueError(f"chain joint must be revolute or spherical, got {joint!r}")
    links = int(links)
    if links < 1:
        raise ValueError(f"chain needs at least one link, got {links}")
    d = np.asarray(direction, float)
    d = d / np.linalg.norm(d)
    origin = np.asarray(origin, float)
    # capsule axis (local z) along the chain direction
    z = np.array([0.0, 0.0, 1.0])
    v = np.cross(z, d)
    s, c = np.linalg.norm(v), float(np.dot(z, d))
    if s < 1e-12:
        quat = np.array([0.0, 0.0, 0.0, 1.0]) if c > 0 else np.array([1.0, 0.0, 0.0, 0.0])
    else:
        ang = np.arctan2(s, c)
        quat = np.concatenate([v / s * np.sin(ang / 2), [np.cos(ang / 2)]])
    half = max(0.5 * link_length - radius, 1e-6)
    step = d * link_length
    names = [f"{name}_{i}" for i in range(links)]
    bodies = world.add_bodies(names, Capsule(radius, half), mass=mass,
                              position=origin + step * (np.arange(links) + 0.5)[:, None], orientation=quat,
                              color=color)
    world.add_joints([f"{name}_j{i}" for i in range(links)], joint, [parent] + names[:-1], names,
                     anchors=origin + step * np.arange(links)[:, None], axis=axis)
    return bodies
