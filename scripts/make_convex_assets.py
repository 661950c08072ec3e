"""Write the meshes of scenes/rocks.toml (run once; the OBJ files are committed):

- assets/meshes/rock.obj: the hull of 28 points on a lumpy ellipsoid (0.16 × 0.12 × 0.09 m);
- assets/meshes/ring_pieces.obj: a ring (torus of radii 0.2 m and 0.045 m) cut into 10
  convex pieces — each the hull of one arc of its surface — the way V-HACD decomposes a
  mesh: one file, one object per piece, loaded as a compound (`shape = "compound"`).

    python scripts/make_convex_assets.py
"""
from pathlib import Path

import numpy as np

from physics.hull import convex_hull, triangulate

ROOT = Path(__file__).resolve().parent.parent


def _write(path, pieces, header):
    lines = [f"# {header}"]
    base = 1
    for k, (verts, tris) in enumerate(pieces):
        lines.append(f"o piece_{k}")
        lines += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in verts]
        lines += [f"f {a + base} {b + base} {c + base}" for a, b, c in tris]
        base += len(verts)
    path.write_text("\n".join(lines) + "\n")


def _hull(points):
    verts, faces = convex_hull(points, 1e-9, 1024)
    return verts, triangulate(faces)


def main():
    rng = np.random.default_rng(2024)
    d = rng.normal(size=(28, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    rock = d * [0.16, 0.12, 0.09] * rng.uniform(0.85, 1.1, (28, 1))
    _write(ROOT / "assets/meshes/rock.obj", [_hull(rock)], "a rock: the hull of 28 points (scripts/make_convex_assets.py)")
    R, r, n = 0.2, 0.045, 10
    pieces = []
    for k in range(n):
        phi = np.linspace(2 * np.pi * k / n, 2 * np.pi * (k + 1) / n, 4)
        theta = np.linspace(0, 2 * np.pi, 12, endpoint=False)
        P, T = np.meshgrid(phi, theta, indexing="ij")
        pts = np.column_stack([((R + r * np.cos(T)) * np.cos(P)).ravel(), ((R + r * np.cos(T)) * np.sin(P)).ravel(),
                               (r * np.sin(T)).ravel()])
        pieces.append(_hull(pts))
    _write(ROOT / "assets/meshes/ring_pieces.obj", pieces,
           "a ring (torus R = 0.2 m, r = 0.045 m) as 10 convex pieces (scripts/make_convex_assets.py)")


if __name__ == "__main__":
    main()
