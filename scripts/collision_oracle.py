"""Compare physics/collision with coal (FCL's successor) on random pairs — a local check,
not part of the suite, and coal is not a dependency of the project. Run it from a scratch
environment that has coal, e.g.

    python -m venv /tmp/coalvenv --system-site-packages && /tmp/coalvenv/bin/pip install coal
    PYTHONPATH=. /tmp/coalvenv/bin/python scripts/collision_oracle.py [--pairs 500]

For each overlapping pair: our deepest depth against coal's penetration depth (EPA), and
the angle between the normals (both from the first shape to the second). Prints the
largest differences per pair type, and over the shallow contacts (coal depth < 2 cm). Deep
overlaps differ by design: box–box keeps the face axis within 5 % of the SAT minimum and
its deepest clipped point; capsule–box takes the deepest point of the segment, not the
minimum translation; cylinders are capsules except against planes.
"""
import argparse

import numpy as np

import coal
from physics.collision import detect
from physics.quat import q_to_matrix


def coal_shape(kind, p):
    if kind == "box":
        return coal.Box(2 * p[0], 2 * p[1], 2 * p[2])
    if kind == "sphere":
        return coal.Sphere(p[0])
    if kind == "capsule":
        return coal.Capsule(p[0], 2 * p[1])
    if kind == "cylinder":
        return coal.Cylinder(p[0], 2 * p[1])
    raise ValueError(kind)


def random_params(rng, kind):
    if kind == "box":
        return list(rng.uniform(0.1, 0.5, 3))
    if kind == "sphere":
        return [rng.uniform(0.1, 0.5)]
    return [rng.uniform(0.05, 0.3), rng.uniform(0.1, 0.5)]


def compare(ka, kb, pairs, rng):
    depth_err, angles, shallow, n = [], [], [], 0
    for _ in range(pairs):
        pa, pb = random_params(rng, ka), random_params(rng, kb)
        qa, qb = rng.normal(size=4), rng.normal(size=4)
        qa, qb = qa / np.linalg.norm(qa), qb / np.linalg.norm(qb)
        ca, cb = np.zeros(3), rng.uniform(-0.7, 0.7, 3)
        req = coal.CollisionRequest()
        req.enable_contact = True
        res = coal.CollisionResult()
        coal.collide(coal_shape(ka, pa), coal.Transform3s(q_to_matrix(qa), ca),
                     coal_shape(kb, pb), coal.Transform3s(q_to_matrix(qb), cb), req, res)
        ours = detect([ka, kb], [pa, pb], [ca, cb], [qa, qb])
        if not res.isCollision():
            if len(ours["depth"]) and ours["depth"].max() > 1e-6:
                print(f"{ka}-{kb}: we report {ours['depth'].max():.3g} m, coal no contact")
            continue
        c = res.getContact(0)
        if len(ours["depth"]) == 0:
            print(f"{ka}-{kb}: coal depth {abs(c.penetration_depth):.3g} m, we report nothing")
            continue
        n += 1
        k = int(np.argmax(ours["depth"]))
        sign = 1.0 if tuple(ours["pair"][k]) == (0, 1) else -1.0
        depth_err.append(abs(ours["depth"][k] - abs(c.penetration_depth)))
        if abs(c.penetration_depth) < 0.02:
            shallow.append(depth_err[-1])
        cosang = np.clip(sign * ours["normal"][k] @ np.asarray(c.normal), -1, 1)
        angles.append(np.degrees(np.arccos(cosang)))
    if n:
        print(f"{ka:8}-{kb:8} overlapping {n:4d}: depth |Δ| median {np.median(depth_err):.2e} max "
              f"{np.max(depth_err):.2e} m; normal angle median {np.median(angles):.2f}° max {np.max(angles):.2f}°; "
              f"shallow (< 2 cm) {len(shallow)}: depth |Δ| max {max(shallow, default=0.0):.2e} m")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pairs", type=int, default=500)
    args = p.parse_args()
    rng = np.random.default_rng(7)
    for ka, kb in [("sphere", "sphere"), ("sphere", "box"), ("sphere", "capsule"), ("capsule", "capsule"),
                   ("capsule", "box"), ("box", "box"), ("cylinder", "box"), ("cylinder", "cylinder")]:
        compare(ka, kb, args.pairs, rng)


if __name__ == "__main__":
    main()
