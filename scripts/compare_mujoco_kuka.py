"""The KUKA LBR iiwa falling from a bent pose, Sharnir beside MuJoCo, both loading the same URDF.

MuJoCo is not a dependency of Sharnir: install it in a scratch virtual environment with
the project's own packages, then run this script from the repository's top:

    python3 -m venv /tmp/mjvenv && /tmp/mjvenv/bin/pip install mujoco numpy numba trimesh tomli-w
    PYTHONPATH=. /tmp/mjvenv/bin/python scripts/compare_mujoco_kuka.py [--duration 1] [--dt 0.001] [--json]

The robot: assets/robots/kuka_iiwa/model.urdf with its base fixed, servos off, no joint
friction and no damping (the file's <dynamics damping="0.5"> is dropped for both: Sharnir
does not apply it, MuJoCo would), released at rest from a bent pose under gravity, no
contacts. MuJoCo reads a copy of the URDF without its meshes (its URDF reader looks for
mesh files by their bare name; the comparison is of the dynamics) and without the
<dynamics> elements: the same links, inertials, joint origins, axes and limits. Sharnir
runs with `gyroscopic = true` (the ω×Iω term MuJoCo's equations of motion have).

Printed per joint: the angles after `--duration` s from each engine and their
difference; MuJoCo with its default semi-implicit Euler at the same Δt, and a reference
(MuJoCo's RK4 at Δt/10) to show how far each first-order step is from the converged
motion. The issue's target: |Sharnir − MuJoCo| ≤ 1e-3 rad after 1 s at Δt = 1 ms.
"""
import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

from physics.io.urdf import add_robot, read_urdf
from physics.world import World

try:
    import mujoco
except ModuleNotFoundError:
    sys.exit("compare_mujoco_kuka: needs MuJoCo (pip install mujoco in a scratch venv; see the docstring)")

URDF = Path(__file__).resolve().parent.parent / "assets" / "robots" / "kuka_iiwa" / "model.urdf"
JOINTS = [f"lbr_iiwa_joint_{i}" for i in range(1, 8)]
BENT = dict(zip(JOINTS, (0.3, 0.8, -0.4, -1.0, 0.5, 0.9, 0.2)))     # rad, inside every limit
G = 9.81


def sharnir(solver, dt, duration):
    world = World(dt=dt, solver=solver, gravity=(0, 0, -G), gyroscopic=True)
    add_robot(world, read_urdf(URDF), "kuka", joint_positions=BENT, servo={"mode": "off"},
              friction={j: 0.0 for j in JOINTS})
    world.advance(duration)
    return np.array([world.joint(f"kuka/{j}").angle for j in JOINTS]), world.max_constraint_error()


def mujoco_model(dt, integrator):
    """MuJoCo's model of the same URDF: meshes and <dynamics> dropped, gravity along −z."""
    text = URDF.read_text()
    text = re.sub(r"<visual>.*?</visual>|<collision>.*?</collision>|<dynamics[^>]*/>", "", text, flags=re.S)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kuka.urdf")
        Path(path).write_text(text)
        model = mujoco.MjModel.from_xml_path(path)
    model.opt.timestep = dt
    model.opt.gravity[:] = (0, 0, -G)
    model.opt.integrator = integrator
    return model


def run_mujoco(dt, duration, integrator):
    model = mujoco_model(dt, integrator)
    data = mujoco.MjData(model)
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, k) for k in range(model.njnt)]
    adr = {n: model.jnt_qposadr[k] for k, n in enumerate(names)}
    for j, q in BENT.items():
        data.qpos[adr[j]] = q
    for _ in range(int(round(duration / dt))):
        mujoco.mj_step(model, data)
    return np.array([data.qpos[adr[j]] for j in JOINTS]), model


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--dt", type=float, default=0.001)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    mj, model = run_mujoco(args.dt, args.duration, mujoco.mjtIntegrator.mjINT_EULER)
    ref, _ = run_mujoco(args.dt / 10, args.duration, mujoco.mjtIntegrator.mjINT_RK4)
    rows = {"mujoco euler": mj, "reference rk4 dt/10": ref}
    gaps = {}
    for solver in ("impulse", "lcp"):
        q, gap = sharnir(solver, args.dt, args.duration)
        rows[f"sharnir {solver}"] = q
        gaps[solver] = gap
    limited = [(float(lo), float(hi)) for lo, hi in model.jnt_range]
    if args.json:
        print(json.dumps({k: v.tolist() for k, v in rows.items()} | {"joint_gap_m": gaps}))
        return 0
    print(f"KUKA iiwa released from {', '.join(f'{v:g}' for v in BENT.values())} rad, {args.duration:g} s at "
          f"dt = {args.dt:g} s (MuJoCo {mujoco.__version__}); joint angles (rad):")
    print(f"{'joint':>8} " + " ".join(f"{k:>20}" for k in rows) + f" {'impulse-mujoco':>15} {'lcp-mujoco':>12}")
    for i, j in enumerate(JOINTS):
        print(f"{j[-7:]:>8} " + " ".join(f"{rows[k][i]:>20.6f}" for k in rows)
              + f" {rows['sharnir impulse'][i] - mj[i]:>15.2e} {rows['sharnir lcp'][i] - mj[i]:>12.2e}")
    for k in rows:
        if k != "mujoco euler":
            print(f"largest |{k} − mujoco euler| = {np.abs(rows[k] - mj).max():.2e} rad; "
                  f"|{k} − reference| = {np.abs(rows[k] - ref).max():.2e} rad")
    print(f"Sharnir's largest joint gap at the end: impulse {gaps['impulse']:.2e} m, lcp {gaps['lcp']:.2e} m; "
          f"limits reached: {any(not lo < q < hi for q, (lo, hi) in zip(ref, limited))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
