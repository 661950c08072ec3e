"""Dense reference solves: ground truth for tests, never on a hot path.

Everything here builds the full matrices (6 numbers per body: v then ω) and solves them
with numpy.linalg, so a test can check a solver that works row by row or in O(N)
against a plain linear solve of the same rows.
"""
import numpy as np

from .quat import q_to_matrix


def world_inertia(world):
    """(n, 9) world-frame inertia matrices R diag(I) Rᵀ, row-major; zero for static bodies."""
    sb, mb = world.state.bodies, world.model.bodies
    out = np.zeros((len(sb.pos), 9))
    for i in range(len(sb.pos)):
        if mb.inv_mass[i] > 0.0:
            rot = q_to_matrix(sb.quat[i])
            out[i] = (rot @ np.diag(mb.inertia[i]) @ rot.T).ravel()
    return out


def inverse_mass_matrix(body_inv_mass, body_I):
    """M⁻¹ (6n × 6n) from inverse masses and (n, 9) world inertia matrices; static bodies
    (inverse mass 0) get zero blocks."""
    nb = len(body_inv_mass)
    minv = np.zeros((6 * nb, 6 * nb))
    for i in range(nb):
        if body_inv_mass[i] > 0.0:
            minv[6 * i:6 * i + 3, 6 * i:6 * i + 3] = np.eye(3) * body_inv_mass[i]
            minv[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = np.linalg.inv(np.asarray(body_I[i]).reshape(3, 3))
    return minv


def jacobian_matrix(row_J, row_body, rows, n_bodies):
    """J (len(rows) × 6n) of the listed rows, each row's 12 numbers placed on its bodies."""
    J = np.zeros((len(rows), 6 * n_bodies))
    for k, r in enumerate(rows):
        a, b = row_body[r]
        J[k, 6 * a:6 * a + 6] += row_J[r, :6]
        J[k, 6 * b:6 * b + 6] += row_J[r, 6:]
    return J


def velocities(world):
    """V (6n,): every body's (v, ω)."""
    sb = world.state.bodies
    return np.hstack([sb.vel, sb.omega]).ravel()


def equality_step_velocities(world):
    """One step of the world's equality rows solved exactly: V⁻ = V + Δt g (gravity on
    every dynamic body), J M⁻¹ Jᵀ λ = −J V⁻, V⁺ = V⁻ + M⁻¹ Jᵀ λ. Returns V⁺ as (n, 6)."""
    nb = world.model.bodies.count
    table = world.rows                      # the row table at the current poses
    rows = np.flatnonzero((table.active != 0) & (table.kind == 0))
    minv = inverse_mass_matrix(world.model.bodies.inv_mass, world_inertia(world))
    J = jacobian_matrix(table.J, table.body, rows, nb)
    V = velocities(world).copy()
    for i in range(nb):
        if world.model.bodies.inv_mass[i] > 0.0:
            V[6 * i:6 * i + 3] += world.gravity * world.dt
    lam = np.linalg.solve(J @ minv @ J.T, -J @ V)
    return (V + minv @ J.T @ lam).reshape(nb, 6)
