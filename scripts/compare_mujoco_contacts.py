"""Side-by-side with MuJoCo on the box pyramids of the contact benchmark, timed interleaved in one process.

MuJoCo is not a dependency of Sharnir: install it in a scratch virtual environment and
let that one also see the project's packages (its virtual environment's site-packages,
here `.venv`), then run this script from the repository's top:

    python3 -m venv /tmp/mjvenv && /tmp/mjvenv/bin/pip install mujoco
    PYTHONPATH=.:.venv/lib/python3.11/site-packages /tmp/mjvenv/bin/python scripts/compare_mujoco_contacts.py \
        [--repeat 5] [--json] [--case "210"]

Cases: the pyramids of 55 boxes (10 rows) and 210 boxes (20 rows) of
physics.bench.contacts.pyramid_world at Δt = 10 ms: Sharnir `impulse` and `lcp` (their
defaults) against MuJoCo.

MuJoCo gets the same scene: boxes of half extent 0.1 m and 1 kg (uniform inertia), each
on a free joint at the very position the Sharnir World gives it (faces touching), a
ground plane through the origin, the World's gravity and Δt, sliding friction μ equal to
Sharnir's for these bodies (MuJoCo takes the larger μ of a pair, Sharnir √(μa μb): the
ground and the boxes have the same μ here, so a pair's μ is the same in both), and no
restitution (MuJoCo has none; its contacts are critically damped). Everything else is
MuJoCo's default: semi-implicit Euler, Newton solver, pyramidal friction cones, condim 3,
solref "0.02 1", solimp "0.9 0.95 0.001 0.5 2" (soft contacts: boxes sink a little into
each other and into the ground under load, by design).

Per case and engine: each engine steps 0.3 s (untimed), then runs of 20 steps are timed
in process CPU time, the engines' runs alternating (so load on the machine hits both
alike), the smallest of `repeat` runs reported as ms per step with its ratio to MuJoCo's.
Behaviour, from a fresh start over 5 s simulated: how far the top box has moved (mm) and
the largest displacement of any box (mm). A Sharnir run that blows up is reported as such.
"""
import argparse
import json
import math
import sys
import time

import numpy as np

from physics.bench.contacts import HALF, pyramid_world
from physics.world import SimulationBlowUp

try:
    import mujoco
except ModuleNotFoundError:
    sys.exit("compare_mujoco_contacts: needs MuJoCo (pip install mujoco in a scratch venv; see the docstring)")

CASES = (
    # name, rows, dt, Sharnir solvers
    ("pyramid 55, dt 10 ms", 10, 0.01, ("impulse", "lcp")),
    ("pyramid 210, dt 10 ms", 20, 0.01, ("impulse", "lcp")),
)
SETTLE = 0.3        # simulated s before the timed runs
STEPS = 20          # steps per timed run
BEHAVIOUR = 5.0     # simulated s of the behaviour run


def sharnir_pyramid(solver, rows, dt):
    """The bench's pyramid, its kernels compiled (one step), back at t = 0."""
    w = pyramid_world(solver, rows=rows, dt=dt)
    w.step()
    w.reset()
    return w


def box_positions(w):
    """The boxes' positions (n, 3), in creation order (bottom row first)."""
    return np.array([b.position for b in w.bodies if b.name.startswith("box")])


def mujoco_pyramid(w):
    """MJCF of the same pyramid as World `w`: free boxes at its positions on a ground plane."""
    box = w.body("box0")
    mu, mass = float(box.friction), float(box.mass)
    if not math.isclose(float(w.body("ground").friction), mu):
        sys.exit("compare_mujoco_contacts: the ground's friction differs from the boxes'; the pair μ would not match")
    fr = f'friction="{mu} 0.005 0.0001"'
    bodies = "".join(f'<body pos="{x!r} {y!r} {z!r}"><freejoint/>'
                     f'<geom type="box" size="{HALF} {HALF} {HALF}" mass="{mass}" {fr}/></body>'
                     for x, y, z in box_positions(w).tolist())
    gx, gy, gz = (float(g) for g in w.gravity)
    xml = (f'<mujoco><option timestep="{w.dt}" gravity="{gx} {gy} {gz}"/><worldbody>'
           f'<geom type="plane" size="0 0 1" {fr}/>{bodies}</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    return model, mujoco.MjData(model)


def mujoco_positions(data):
    """The boxes' positions (n, 3): the first three of each free joint's seven qpos."""
    return data.qpos.reshape(-1, 7)[:, :3].copy()


def time_sharnir(w, steps):
    """CPU ms per step of `steps` steps from the current state (None: it blew up)."""
    c0 = time.process_time()
    try:
        w.advance_steps(steps)
    except SimulationBlowUp:
        return None
    return (time.process_time() - c0) / steps * 1e3


def time_mujoco(model, data, steps):
    """CPU ms per step of `steps` steps from the current state."""
    c0 = time.process_time()
    for _ in range(steps):
        mujoco.mj_step(model, data)
    return (time.process_time() - c0) / steps * 1e3


def moved_mm(p0, p1):
    """(top box's displacement, the largest of any box) in mm; the top box is the last."""
    d = np.linalg.norm(p1 - p0, axis=1) * 1e3
    return float(d[-1]), float(d.max())


def sharnir_behaviour(w, steps):
    """Displacements (mm) after `steps` steps from t = 0, or None if it blew up."""
    w.reset()
    p0 = box_positions(w)
    try:
        w.advance_steps(steps)
    except SimulationBlowUp:
        return None
    return moved_mm(p0, box_positions(w))


def mujoco_behaviour(model, data, steps):
    """Displacements (mm) after `steps` steps from t = 0, and the count of MuJoCo's resets."""
    mujoco.mj_resetData(model, data)
    bad0 = int(data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number)
    p0 = mujoco_positions(data)
    for _ in range(steps):
        mujoco.mj_step(model, data)
    bad = int(data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number) - bad0
    return moved_mm(p0, mujoco_positions(data)), bad


def run_case(name, rows, dt, solvers, repeat):
    """The records of one case: each Sharnir solver, then MuJoCo."""
    worlds = {s: sharnir_pyramid(s, rows, dt) for s in solvers}
    model, data = mujoco_pyramid(next(iter(worlds.values())))
    settle = int(round(SETTLE / dt))
    for w in worlds.values():
        w.advance_steps(settle)
    for _ in range(settle):
        mujoco.mj_step(model, data)
    best = {s: math.inf for s in solvers}
    best_mj = math.inf
    blew = set()
    for _ in range(max(repeat, 1)):
        for s, w in worlds.items():
            if s in blew:
                continue
            ms = time_sharnir(w, STEPS)
            if ms is None:
                blew.add(s)
            else:
                best[s] = min(best[s], ms)
        best_mj = min(best_mj, time_mujoco(model, data, STEPS))
    steps = int(round(BEHAVIOUR / dt))
    records = []
    for s, w in worlds.items():
        moved = None if s in blew else sharnir_behaviour(w, steps)
        records.append({"case": name, "boxes": len(w.bodies) - 1, "engine": f"sharnir {s}",
                        "cpu_ms_per_step": None if s in blew else round(best[s], 4),
                        "ratio_to_mujoco": None if s in blew else round(best[s] / best_mj, 3),
                        "top_moved_mm": None if moved is None else round(moved[0], 3),
                        "max_moved_mm": None if moved is None else round(moved[1], 3),
                        "blew_up": s in blew or moved is None})
    (top, most), resets = mujoco_behaviour(model, data, steps)
    records.append({"case": name, "boxes": model.nbody - 1, "engine": f"mujoco {mujoco.__version__}",
                    "cpu_ms_per_step": round(best_mj, 4), "ratio_to_mujoco": 1.0,
                    "top_moved_mm": round(top, 3), "max_moved_mm": round(most, 3), "blew_up": resets > 0})
    return records


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5, help="timed runs per engine; the smallest is reported")
    p.add_argument("--json", action="store_true", help="print a JSON list of records")
    p.add_argument("--case", default="", help="only the cases whose name contains this (e.g. '210')")
    a = p.parse_args(argv)
    records = []
    for name, rows, dt, solvers in CASES:
        if a.case in name:
            records += run_case(name, rows, dt, solvers, a.repeat)
    if a.json:
        print(json.dumps(records, indent=1))
        return
    print(f"{'case':22s} {'engine':16s} {'cpu ms/step':>11s} {'x mujoco':>9s} {'top moved mm':>12s} "
          f"{'max moved mm':>12s}")
    for r in records:
        if r["cpu_ms_per_step"] is None:
            print(f"{r['case']:22s} {r['engine']:16s} blew up")
            continue
        top = "blew up" if r["top_moved_mm"] is None else f"{r['top_moved_mm']:.2f}"
        most = "" if r["max_moved_mm"] is None else f"{r['max_moved_mm']:.2f}"
        print(f"{r['case']:22s} {r['engine']:16s} {r['cpu_ms_per_step']:11.3f} {r['ratio_to_mujoco']:9.3f} "
              f"{top:>12s} {most:>12s}" + ("  (MuJoCo reset a diverged state)" if r["engine"].startswith("mujoco")
                                            and r["blew_up"] else ""))


if __name__ == "__main__":
    main()
