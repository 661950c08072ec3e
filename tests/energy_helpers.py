"""The energy the impulse step's energy projection keeps, for the tests that check it."""
import numpy as np

from physics.integrate import body_energy


def kept_energy(w, index=None):
    """The energy the impulse step keeps (of the bodies `index`, default all): kinetic +
    gravity's potential taken at x − ½hv, h = Δt / substeps. Semi-implicit Euler's
    positions lead its velocities by half a substep; under gravity alone it keeps this
    exactly, while K + U(x) (World.energy) falls by ½m(gh)² a substep and swings around it
    by ½h·Σ m g·v along a swing."""
    mb, sb = w.model.bodies, w.state.bodies
    i = np.flatnonzero(mb.inv_mass > 0) if index is None else np.asarray(index)
    h = w.dt / w.solvers["impulse"].settings["substeps"]
    lead = 0.5 * h * float(((sb.vel[i] @ np.asarray(w.model.gravity)) / mb.inv_mass[i]).sum())
    return float(body_energy(sb.pos[i], sb.quat[i], sb.vel[i], sb.omega[i], mb.inv_mass[i], mb.inertia[i],
                             w.model.gravity)) + lead
