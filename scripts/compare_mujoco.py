"""Side-by-side with MuJoCo on the benchmark chains, timed interleaved in one process.

MuJoCo is not a dependency of Sharnir: install it in a scratch virtual environment that
also sees the project's packages, then run this script from the repository's top:

    python -m venv --system-site-packages /tmp/mjvenv && /tmp/mjvenv/bin/pip install mujoco
    PYTHONPATH=. /tmp/mjvenv/bin/python scripts/compare_mujoco.py [--repeat 5] [--json] [--case "dt 3 ms"]

Cases (the issues' speed targets):
- 100-hinge chain, Δt = 10 ms: Sharnir's World defaults (`impulse`) against MuJoCo;
- 100-hinge chain, Δt = 3 ms: Sharnir `penalty` at its default preset against MuJoCo;
- 100-ball-joint chain, Δt = 1 ms: Sharnir `lcp` (its defaults: projection on) and
  `impulse` against MuJoCo.

The chain is physics.builders.make_chain's (capsule links of 0.1 m, 0.1 kg, r = 2 cm,
released from horizontal); MuJoCo gets the same masses and principal inertias
(`<inertial>`), the same joint anchors and axes, its default integrator (semi-implicit
Euler) and solver (Newton), and contacts between non-adjacent links as Sharnir has them
(MuJoCo excludes parent–child pairs as Sharnir excludes jointed bodies).

Per case and engine: process CPU µs per step (the smallest of `repeat` runs; the runs of
the two engines alternate, so load on the machine hits both alike), the ratio to
MuJoCo's, Sharnir's worst joint gap over the run (MuJoCo works in joint coordinates: its
gap is 0 by construction), the total energy at the end over the start (gravity's zero at
the pivot), and whether the state stayed finite (MuJoCo resets a diverged state and
counts a warning: finite means no such reset).
"""
import argparse
import json
import math
import sys
import time

import numpy as np

from physics.builders import make_chain
from physics.world import SimulationBlowUp, World

try:
    import mujoco
except ModuleNotFoundError:
    sys.exit("compare_mujoco: needs MuJoCo (pip install mujoco in a scratch venv; see the docstring)")

G = 9.81
CASES = (
    # name, joint, links, dt, duration (s), Sharnir solvers
    ("100-hinge chain, dt 10 ms", "revolute", 100, 0.01, 3.0, ("impulse",)),
    ("100-hinge chain, dt 3 ms", "revolute", 100, 0.003, 1.5, ("penalty",)),
    ("100-ball chain, dt 1 ms", "spherical", 100, 0.001, 0.5, ("lcp", "impulse")),
)


def sharnir_chain(joint, links, dt, solver):
    w = World(dt=dt, solver=solver)
    make_chain(w, links=links, joint=joint)
    w.step()                        # kernels compiled / loaded outside the timing
    w.reset()
    return w


def mujoco_chain(joint, links, dt, inertia, mass, link=0.1, radius=0.02):
    """MJCF of the same chain: body i hangs from body i−1 at its end, along +x."""
    ix, iy, iz = inertia          # Sharnir's principal moments about the capsule's local x, y, z (z: its axis)
    # the capsule's axis is along world x here: MuJoCo's inertial frame is the body frame,
    # so its diagonal is (about x = the axis, y, z)
    jt = "hinge" if joint == "revolute" else "ball"
    axis = ' axis="0 1 0"' if jt == "hinge" else ""
    body = ""
    close = ""
    for i in range(links):
        pos = "0 0 0" if i == 0 else f"{link} 0 0"
        body += (f'<body name="l{i}" pos="{pos}"><joint type="{jt}" pos="0 0 0"{axis} damping="0"/>'
                 f'<inertial pos="{0.5 * link} 0 0" mass="{mass}" diaginertia="{iz} {ix} {iy}"/>'
                 f'<geom type="capsule" fromto="{radius} 0 0 {link - radius} 0 0" size="{radius}" mass="0"/>')
        close += "</body>"
    xml = (f'<mujoco><option timestep="{dt}" gravity="0 0 {-G}"/>'
           f'<worldbody>{body}{close}</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    return model, mujoco.MjData(model)


def mujoco_energy(model, data):
    mujoco.mj_energyPos(model, data)
    mujoco.mj_energyVel(model, data)
    return float(data.energy[0] + data.energy[1])


def time_sharnir(w, steps):
    w.reset()
    c0 = time.process_time()
    try:
        w.advance_steps(steps)
        ok = True
    except SimulationBlowUp:
        ok = False
    return (time.process_time() - c0) / steps * 1e6, ok


def time_mujoco(model, data, steps):
    mujoco.mj_resetData(model, data)
    c0 = time.process_time()
    for _ in range(steps):
        mujoco.mj_step(model, data)
    return (time.process_time() - c0) / steps * 1e6


def sharnir_run(w, steps):
    """Untimed rerun: worst joint gap over every step and the energy at the end."""
    w.reset()
    e0 = w.energy()
    worst = 0.0
    for _ in range(steps):
        w.step()
        worst = max(worst, w.max_constraint_error())
    e1 = w.energy()
    return worst, e0, e1


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--json", action="store_true")
    p.add_argument("--case", default="", help="only the cases whose name contains this (e.g. 'dt 3 ms')")
    a = p.parse_args(argv)
    records = []
    for name, joint, links, dt, duration, solvers in CASES:
        if a.case not in name:
            continue
        steps = int(round(duration / dt))
        worlds = {s: sharnir_chain(joint, links, dt, s) for s in solvers}
        w0 = next(iter(worlds.values()))
        link = w0.body("chain_0")
        inertia, mass = tuple(float(x) for x in link.inertia), float(link.mass)
        model, data = mujoco_chain(joint, links, dt, inertia, mass)
        time_mujoco(model, data, 10)
        best = {s: math.inf for s in solvers}
        best_mj = math.inf
        finite = {}
        for _ in range(max(a.repeat, 1)):
            for s, w in worlds.items():
                us, ok = time_sharnir(w, steps)
                best[s] = min(best[s], us)
                finite[s] = ok
            best_mj = min(best_mj, time_mujoco(model, data, steps))
        mujoco.mj_resetData(model, data)
        bad0 = int(data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number)
        mujoco.mj_forward(model, data)
        mj_e0 = mujoco_energy(model, data)
        for _ in range(steps):
            mujoco.mj_step(model, data)
        mj_e1 = mujoco_energy(model, data)
        # MuJoCo resets a state that went bad and counts it as a warning
        bad = int(data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number) - bad0
        mj_finite = bad == 0 and bool(np.isfinite(data.qpos).all() and np.isfinite(data.qvel).all())
        for s, w in worlds.items():
            gap, e0, e1 = sharnir_run(w, steps)
            records.append({"case": name, "engine": f"sharnir {s}", "cpu_us_per_step": round(best[s], 1),
                            "ratio_to_mujoco": round(best[s] / best_mj, 3), "worst_gap_m": gap,
                            "energy_end_minus_start_J": None if e0 is None else round(e1 - e0, 6),
                            "finite": finite[s]})
        records.append({"case": name, "engine": f"mujoco {mujoco.__version__}", "cpu_us_per_step": round(best_mj, 1),
                        "ratio_to_mujoco": 1.0, "worst_gap_m": 0.0,
                        "energy_end_minus_start_J": round(mj_e1 - mj_e0, 6), "finite": mj_finite})
    if a.json:
        print(json.dumps(records, indent=1))
        return
    print(f"{'case':28s} {'engine':18s} {'cpu us/step':>11s} {'x mujoco':>9s} {'worst gap m':>12s} "
          f"{'dE J':>10s} finite")
    for r in records:
        de = r["energy_end_minus_start_J"]
        print(f"{r['case']:28s} {r['engine']:18s} {r['cpu_us_per_step']:11.1f} {r['ratio_to_mujoco']:9.3f} "
              f"{r['worst_gap_m']:12.2e} {'' if de is None else f'{de:10.4f}':>10s} {r['finite']}")


if __name__ == "__main__":
    main()
