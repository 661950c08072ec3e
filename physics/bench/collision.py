"""Collision detection benchmark: `python -m physics.bench.collision [--n 100] [--calls 2000]
[--repeat 7] [--json]`.

Scenes (boxes of half extent 0.1 m, a ground plane z = 0):
- `resting`: n boxes on a square grid, 0.3 m apart, each sunk 1 mm into the ground
  (4 corner contacts each, no box–box pairs);
- `heap`: n boxes in a pile 4 layers high, 0.19 m apart (neighbours overlap a little),
  each turned by a random yaw (±30°) and tilt (±8°), jittered 1 cm.

Convex pairs (physics/collision/convex.py), n/2 pairs 1 m apart, no ground; `pair us` is
the call's time over the pairs:
- `hulls64_resting`: hulls of about 64 points on an ellipsoid (0.1 × 0.08 × 0.06 m) with a
  flat octagonal top and bottom (~120 faces, as a V-HACD piece), one resting on the
  other's top, sunk 1 mm, turned ±30° and tilted ±1° (face contact: GJK then EPA, the
  octagons clipped, 4 points);
- `hulls64_crossed`: the same hulls in random orientations, overlapping by ~1 cm;
- `hulls16_resting`: 16-point hulls as `hulls64_resting`.

For each: microseconds per detection call (broad + narrow phase, one `collide` kernel call
with the workspaces prebuilt: the median over `repeat` runs of `calls` calls each; kernels
compiled beforehand; wall clock and the thread's CPU time); the same for `collide_packed`
(the contacts left in the kernels' packed buffers, no copy); the wall clock through `Detector.__call__` (the Python entry that checks
the buffers), the candidate pairs and the contacts found. Whole World steps with these
contacts solved: `python -m physics.bench.contacts`.
"""
import argparse
import math
import sys
import time

import numpy as np

from ..collision import Detector, collide, collide_packed, make_shapes
from ..quat import q_from_euler_deg, q_rotate, q_to_matrix
from ..shapes import Convex
from . import print_records

HALF = 0.1


def resting(n):
    side = int(math.ceil(math.sqrt(n)))
    pos = [[0.0, 0.0, 0.0]]
    for k in range(n):
        pos.append([0.3 * (k % side), 0.3 * (k // side), HALF - 0.001])
    quats = [[0.0, 0.0, 0.0, 1.0]] * (n + 1)
    return make_shapes(["plane"] + ["box"] * n, [[0.0]] + [[HALF] * 3] * n, pos, quats)


def heap(n, seed=0):
    rng = np.random.default_rng(seed)
    layers = 4
    per = int(math.ceil(n / layers))
    side = int(math.ceil(math.sqrt(per)))
    pos = [[0.0, 0.0, 0.0]]
    quats = [[0.0, 0.0, 0.0, 1.0]]
    for k in range(n):
        layer, j = divmod(k, per)
        x, y = 0.19 * (j % side) + 0.095 * (layer % 2), 0.19 * (j // side) + 0.095 * (layer % 2)
        pos.append(np.array([x, y, HALF - 0.002 + 0.19 * layer]) + rng.uniform(-0.01, 0.01, 3))
        quats.append(q_from_euler_deg(rng.uniform(-8, 8), rng.uniform(-8, 8), rng.uniform(-30, 30)))
    return make_shapes(["plane"] + ["box"] * n, [[0.0]] + [[HALF] * 3] * n, pos, quats)


def _ellipsoid_hull(points, rng):
    """The hull of `points` points: a quarter on the rims of its flat top and bottom (z = ±0.042
    m, octagonal caps), the rest on the ellipsoid (0.1 × 0.08 × 0.06 m) between them."""
    k = max(points // 8, 3)
    d = rng.normal(size=(8 * points, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    d = d[np.abs(d[:, 2]) < 0.65][:points - 2 * k]
    t = 2 * np.pi * (np.arange(k) + 0.5) / k
    rim = np.column_stack([np.cos(t) * 0.714, np.sin(t) * 0.714, np.full(k, 0.7)])
    pts = np.vstack([d, rim, rim * [1, 1, -1]]) * [0.1, 0.08, 0.06]
    return Convex(pts)


def hull_pairs(n, points, crossed, seed=0):
    """n // 2 pairs of hulls of `points` points, 1 m apart (see the module docstring). A
    resting pair is placed by the points' frame (flat caps along z), turned into the body's
    pose by Convex.body_pose: the body frame is the hull's principal axes, which an irregular
    hull has tilted."""
    rng = np.random.default_rng(seed)
    hull = _ellipsoid_hull(points, rng)
    com, q_frame = hull.frame
    pts = hull.vertices @ q_to_matrix(q_frame).T + com      # the vertices in the points' frame
    low = float(-pts[:, 2].min())
    high = float(pts[:, 2].max())
    pos, quats = [], []
    for k in range(max(1, n // 2)):
        base = np.array([1.0 * (k % 10), 1.0 * (k // 10), 0.0])
        if crossed:
            qa, qb = (q / np.linalg.norm(q) for q in rng.normal(size=(2, 4)))
            reach = (max(np.abs(q_rotate(qa, v)[2]) for v in hull.vertices)
                     + max(np.abs(q_rotate(qb, v)[2]) for v in hull.vertices))
            pos += [base, base + [0.0, 0.0, reach - 0.01]]
            quats += [qa, qb]
            continue
        qb = q_from_euler_deg(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-30, 30))
        for origin, q in ((base, [0.0, 0.0, 0.0, 1.0]), (base + [0.0, 0.0, high + low - 0.001], qb)):
            p, q = hull.body_pose(origin, q)
            pos.append(p)
            quats.append(q)
    m = len(pos)
    return make_shapes(["convex"] * m, [hull] * m, pos, quats)


def time_calls(fn, calls, repeat):
    """Median over `repeat` runs of the mean µs per call of `calls` calls: wall clock, and
    this thread's CPU time (the same on an idle machine; on a shared one the wall clock
    also counts the time the thread waited for a core)."""
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(calls):
            fn()
        wall.append((time.perf_counter() - t0) / calls * 1e6)
        cpu.append((time.thread_time() - c0) / calls * 1e6)
    return float(np.median(wall)), float(np.median(cpu))


def bench(name, shapes, calls, repeat, margin=0.0):
    det = Detector(shapes.kind.shape[0])
    contacts = det(shapes, margin)
    args = (*shapes, det.skip_keys, margin, det.pairs, *det.contacts)
    pairs = collide(*args)
    kernel_us, kernel_cpu = time_calls(lambda: collide(*args), calls, repeat)
    m = det.contacts.depth.shape[0]
    packed = (*shapes, det.skip_keys, margin, det.pairs, np.empty((m, 3), np.int64), np.empty((m, 7)),
              np.zeros(2, np.int64))
    assert collide_packed(*packed) == pairs and packed[-1][0] == contacts
    packed_us, packed_cpu = time_calls(lambda: collide_packed(*packed), calls, repeat)
    entry_us, _ = time_calls(lambda: det(shapes, margin), calls, repeat)
    return {"scene": name, "bodies": int(shapes.kind.shape[0]), "pairs": int(pairs), "contacts": contacts,
            "us_per_call": kernel_us, "cpu_us_per_call": kernel_cpu, "us_per_call_packed": packed_us,
            "cpu_us_per_call_packed": packed_cpu, "us_per_call_python_entry": entry_us,
            "margin": margin}


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m physics.bench.collision", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100, help="boxes")
    p.add_argument("--calls", type=int, default=2000, help="calls per timed run")
    p.add_argument("--repeat", type=int, default=7, help="timed runs; the median is reported")
    p.add_argument("--json", action="store_true", help="print a JSON list of records")
    args = p.parse_args(argv)
    records = [bench("resting", resting(args.n), args.calls, args.repeat),
               bench("heap", heap(args.n), args.calls, args.repeat),
               bench("hulls64_resting", hull_pairs(args.n, 64, False), args.calls, args.repeat),
               bench("hulls64_crossed", hull_pairs(args.n, 64, True), args.calls, args.repeat),
               bench("hulls16_resting", hull_pairs(args.n, 16, False), args.calls, args.repeat)]
    for r in records:
        r["us_per_pair"] = r["us_per_call_packed"] / max(r["pairs"], 1)
    print_records(records, args.json,
                  f"{'scene':16} {'bodies':>6} {'pairs':>6} {'contacts':>8} {'us/call':>9} {'cpu us/call':>12} "
                  f"{'packed us':>10} {'packed cpu us':>14} {'entry us':>9} {'pair us':>8}",
                  lambda r: (f"{r['scene']:16} {r['bodies']:6d} {r['pairs']:6d} {r['contacts']:8d} "
                             f"{r['us_per_call']:9.2f} {r['cpu_us_per_call']:12.2f} {r['us_per_call_packed']:10.2f} "
                             f"{r['cpu_us_per_call_packed']:14.2f} {r['us_per_call_python_entry']:9.2f} "
                             f"{r['us_per_pair']:8.2f}"), "records")


if __name__ == "__main__":
    sys.exit(main())
