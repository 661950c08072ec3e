"""The KUKA LBR iiwa falling from a bent pose, Sharnir beside MuJoCo, both loading the same URDF.

MuJoCo is not a dependency of Sharnir: install it in a scratch virtual environment with
the project's own packages, then run this script from the repository's top:

    python3 -m venv /tmp/mjvenv && /tmp/mjvenv/bin/pip install mujoco numpy numba trimesh tomli-w
    PYTHONPATH=. /tmp/mjvenv/bin/python scripts/compare_mujoco_kuka.py [--duration 1] [--dt 0.001] [--json]

The robot: assets/robots/kuka_iiwa/model.urdf with its base fixed, servos off, no joint
friction, the file's viscous damping (<dynamics damping="0.5"> on every joint; both
engines apply it, MuJoCo's Euler step implicitly; `--no-damping` drops it from both),
released at rest from a bent pose, no contacts. MuJoCo reads a copy of the URDF without
its meshes (its URDF reader looks for mesh files by their bare name; the comparison is of
the dynamics): the same links, inertials, joint origins, axes, limits and damping.
Sharnir runs with `gyroscopic = true` (the ω×Iω term MuJoCo's equations of motion have).

Gravity is along +z: the arm hangs from its base, as if mounted on a ceiling, and swings
about that stable pose with its 7 joints coupled, no limit reached. The bend is a few
degrees per joint: from larger bends (×2 and more) the light wrist links whip, and after
1 s MuJoCo's own Euler step is as far from its converged motion (RK4 at Δt/10) as
Sharnir is from it (×2: 4e-3 rad; ×7: 5e-2 rad, Sharnir 4e-2). Standing upright
(`--upright`) the arm falls into its limits within 1 s, or without them (`--no-limits`)
into a whipping motion no first-order step follows (MuJoCo's Euler and RK4 runs 0.1-0.6
rad apart).

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
BENT = dict(zip(JOINTS, (0.05, 0.12, -0.06, -0.15, 0.08, 0.14, 0.03)))     # rad: every joint bent, 3-9°
G = 9.81
GRAVITY = [0.0, 0.0, G]       # the arm hangs from its base (a ceiling mount): see the docstring


def sharnir(solver, dt, duration, limits, damping):
    world = World(dt=dt, solver=solver, gravity=GRAVITY, gyroscopic=True)
    add_robot(world, read_urdf(URDF), "kuka", joint_positions=BENT, servo={"mode": "off"},
              friction={j: 0.0 for j in JOINTS}, damping=None if damping else {j: 0.0 for j in JOINTS})
    if not limits:
        for j in JOINTS:
            world.joint(f"kuka/{j}").limits = None
    world.advance(duration)
    return np.array([world.joint(f"kuka/{j}").angle for j in JOINTS]), world.max_constraint_error()


def mujoco_model(dt, integrator, limits, damping):
    """MuJoCo's model of the same URDF: meshes dropped (with --no-limits the limits too:
    revolute → continuous; with --no-damping the <dynamics> elements)."""
    text = URDF.read_text()
    text = re.sub(r"<visual>.*?</visual>|<collision>.*?</collision>", "", text, flags=re.S)
    if not damping:
        text = re.sub(r"<dynamics[^>]*/>", "", text)
    if not limits:
        text = text.replace('type="revolute"', 'type="continuous"')
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kuka.urdf")
        Path(path).write_text(text)
        model = mujoco.MjModel.from_xml_path(path)
    model.opt.timestep = dt
    model.opt.gravity[:] = GRAVITY
    model.opt.integrator = integrator
    return model


def run_mujoco(dt, duration, integrator, limits, damping):
    model = mujoco_model(dt, integrator, limits, damping)
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
    ap.add_argument("--upright", action="store_true",
                    help="gravity along -z: the arm falls from the bent pose instead of swinging under its base")
    ap.add_argument("--no-limits", dest="limits", action="store_false", help="take the joint limits out of both")
    ap.add_argument("--no-damping", dest="damping", action="store_false",
                    help="take the joints' viscous damping out of both")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.upright:
        GRAVITY[2] = -G
    mj, model = run_mujoco(args.dt, args.duration, mujoco.mjtIntegrator.mjINT_EULER, args.limits, args.damping)
    ref, _ = run_mujoco(args.dt / 10, args.duration, mujoco.mjtIntegrator.mjINT_RK4, args.limits, args.damping)
    rows = {"mujoco euler": mj, "reference rk4 dt/10": ref}
    gaps = {}
    for solver in ("impulse", "lcp"):
        q, gap = sharnir(solver, args.dt, args.duration, args.limits, args.damping)
        rows[f"sharnir {solver}"] = q
        gaps[solver] = gap
    limited = [(float(lo), float(hi)) if args.limits else (-np.inf, np.inf) for lo, hi in model.jnt_range]
    if args.json:
        print(json.dumps({k: v.tolist() for k, v in rows.items()} | {"joint_gap_m": gaps}))
        return 0
    print(f"KUKA iiwa released from {', '.join(f'{v:g}' for v in BENT.values())} rad, {args.duration:g} s at "
          f"dt = {args.dt:g} s, joint damping {'as in the file' if args.damping else 'off'} "
          f"(MuJoCo {mujoco.__version__}); joint angles (rad):")
    print(f"{'joint':>8} " + " ".join(f"{k:>20}" for k in rows) + f" {'impulse-mujoco':>15} {'lcp-mujoco':>12}")
    for i, j in enumerate(JOINTS):
        print(f"{j[-7:]:>8} " + " ".join(f"{rows[k][i]:>20.6f}" for k in rows)
              + f" {rows['sharnir impulse'][i] - mj[i]:>15.2e} {rows['sharnir lcp'][i] - mj[i]:>12.2e}")
    for k in rows:
        if k != "mujoco euler":
            vs_ref = f"; |{k} − reference| = {np.abs(rows[k] - ref).max():.2e} rad" if k.startswith("sharnir") else ""
            print(f"largest |{k} − mujoco euler| = {np.abs(rows[k] - mj).max():.2e} rad{vs_ref}")
    print(f"Sharnir's largest joint gap at the end: impulse {gaps['impulse']:.2e} m, lcp {gaps['lcp']:.2e} m; "
          f"limits reached: {any(not lo < q < hi for q, (lo, hi) in zip(ref, limited))}")
    for solver in ("impulse", "lcp"):
        worst = np.abs(rows[f"sharnir {solver}"] - mj).max()
        print(f"{solver}: {'within' if worst <= 1e-3 else 'NOT within'} 1e-3 rad of MuJoCo ({worst:.2e} rad)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
