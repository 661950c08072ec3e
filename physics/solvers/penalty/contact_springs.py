"""Contacts under the stiff preset: each contact point a one-sided spring of the implicit
system (physics/contacts.py: per touching pair a manifold of ≤ 4 points, their normal
rows J V = ġ, the separation rate, and G = −depth).

α = m ω², β = 2ζ m ω, ω = CONTACT_STIFF_KAPPA/Δt, ζ = CONTACT_ZETA, m = 1/(p (1/m_a +
1/m_b)) over the pair's p points (the whole patch: k = m_eff ω²), so a box resting on the
ground sinks m g/k = g (Δt/κ)² and a load F on a pair closes it by F/k. Seed 000's dead
zone χ = min(0, G), taken at the end of the step, and one-sidedness make the springs an
active set over the solves (check_springs): a row is in when it penetrates at the end of
the step (depth − Δt ġ⁺ > 0) and its force f = α(depth − Δt ġ⁺) − β ġ⁺ pushes, at most
CONTACT_PASSES solves (with the drives' active set), starting from the rows that would
penetrate at the start's velocity. A spring against a static body adds only to the
dynamic body's diagonal block and right side; one between two dynamic bodies couples two
nodes the elimination plan (the joint graph) does not link: those rows enter by the
Woodbury identity — x = A⁻¹b − A⁻¹U (W⁻¹ + Uᵀ A⁻¹ U)⁻¹ Uᵀ A⁻¹b, one solve with A's factor
per row and a dense m×m Cholesky (coupled_springs), the exact solution of the whole
system, as seed 004's Schur complement does for loop joints. Past MAX_COUPLED such rows in
a step, the rest are block Jacobi (each side against the other's velocity of the last
pass). Friction follows the solve (contacts.penalty_contact_friction): per pair the
impulses that stop its friction rows within the step, scaled into the Coulomb ball of
radius μ Σ f_n Δt of the springs just solved, change the velocities before the positions
(explicit friction before the solve misses the normal springs' torques: a box on a slope
creeps). Where a touching body is also a joint's (a driven wheel on its axle), those
friction impulses then act as forces in the implicit solve, done again from the step's
start (friction_as_forces), so the joints pass the traction on within the step (applied
after the solve only, it opens a driven wheel's axle).
"""
import numpy as np
from numba import njit

from ...contacts import N_NOW, N_ROWS
from ...joint_rows import ROW_FREE, row_velocity
from ..row_ops import fill2d
from .assemble import add_force, add_row
from .block_ldl import solve_sparse

# the stiff preset's contact springs (implicit, contact_springs): ωΔt and damping ratio; a
# body resting on the ground sinks m g/k = g(Δt/κ)²
CONTACT_STIFF_KAPPA = 10.0
CONTACT_ZETA = 1.0
CONTACT_PASSES = 8      # most solves per step of the contacts' (and drives') active set
MAX_COUPLED = 256       # most contact rows between two dynamic bodies solved exactly per step (coupled_springs)

@njit(cache=True, error_model="numpy")
def contact_springs(h, bodies, contacts, body_node, spring_w, spring_g, spring_on, spring_depth, coupled):
    """The stiff preset's contact springs (module docstring, "Contacts"): per normal row of
    this step's contacts (contacts.write_contact_rows) its weight w = Δt²α + Δtβ and right
    side g = Δt α depth (depth > 0: penetration; the row's G = −depth), with
    α = m ω², β = 2ζ m ω, ω = CONTACT_STIFF_KAPPA/Δt, ζ = CONTACT_ZETA, m = 1/(p (1/m_a + 1/m_b)) over the pair's p points;
    spring_depth its depth (m); spring_on the first guess of the active set (penetrating at
    the end of the step at the start's velocity); coupled lists the rows between two dynamic bodies (the solve's
    Schur complement, coupled_springs), at most MAX_COUPLED. Returns the number of rows."""
    buf, crows = contacts.buffers, contacts.rows
    row_J, row_kind, row_body = crows.J, crows.kind, crows.body
    cf, row_of, block_of, block_start = buf.cf, buf.row_of, buf.block_of, crows.block_start
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    n_rows = spring_w.shape[0]
    omega = CONTACT_STIFF_KAPPA / h
    for r in range(n_rows):
        spring_w[r] = 0.0
        spring_g[r] = 0.0
        spring_on[r] = 0
        spring_depth[r] = 0.0
    n_coupled = 0
    for q in range(buf.n[N_NOW]):
        r = row_of[q]
        if r < 0:
            continue
        a, b = row_body[r, 0], row_body[r, 1]
        k = body_inv_mass[a] + body_inv_mass[b]
        if k <= 0.0:
            continue
        s = block_start[block_of[q]]
        p = 0
        while row_kind[s + p] != ROW_FREE:
            p += 1
        m = 1.0 / (k * p)
        alpha = m * omega * omega
        depth = cf[q, 6]
        spring_w[r] = h * h * alpha + h * 2.0 * CONTACT_ZETA * m * omega
        spring_g[r] = h * alpha * depth
        spring_depth[r] = depth
        if depth - h * row_velocity(row_J, r, a, b, body_vel, body_omega) > 0.0:
            spring_on[r] = 1
        if body_node[a] >= 0 and body_node[b] >= 0:
            if n_coupled < MAX_COUPLED:
                coupled[n_coupled] = r
                n_coupled += 1
            else:
                spring_on[r] |= 2                    # beyond the Schur complement: lagged (add_springs)
    return n_coupled


@njit(cache=True, error_model="numpy")
def add_springs(row_J, row_body, body_node, spring_w, spring_g, spring_on, body_vel, body_omega, diag, offd, rhs):
    """The contact springs in the active set into one solve's matrix and right side: against
    a static body into the dynamic body's diagonal block; between two dynamic bodies only
    g Jᵀ (the matrix part is coupled_springs' Schur complement), or, past MAX_COUPLED rows,
    each side's own part with the other side's velocity of the last pass (block Jacobi)."""
    none = np.int64(-1)
    late = np.int64(0)
    for r in range(spring_w.shape[0]):
        if spring_on[r] & 1 == 0 or spring_w[r] == 0.0:
            continue
        a, b = row_body[r, 0], row_body[r, 1]
        na, nb = body_node[a], body_node[b]
        w, g = spring_w[r], spring_g[r]
        if na >= 0 and nb >= 0:
            if spring_on[r] & 2 == 0:
                add_force(row_J, r, na, nb, g, rhs)
                continue
            va = vb = 0.0
            for c in range(3):
                va += row_J[r, c] * body_vel[a, c] + row_J[r, 3 + c] * body_omega[a, c]
                vb += row_J[r, 6 + c] * body_vel[b, c] + row_J[r, 9 + c] * body_omega[b, c]
            add_row(row_J, r, na, none, none, late, w, g - w * vb, diag, offd, rhs)
            add_row(row_J, r, none, nb, none, late, w, g - w * va, diag, offd, rhs)
        else:
            add_row(row_J, r, na, nb, none, late, w, g, diag, offd, rhs)


@njit(cache=True, error_model="numpy")
def row_dot_nodes(row_J, r, na, nb, x, y, c):
    """J_r · x over the row's two nodes (x (k,6) when c < 0, else y[c] (…, k, 6))."""
    s = 0.0
    for i in range(6):
        if c < 0:
            s += row_J[r, i] * x[na, i] + row_J[r, 6 + i] * x[nb, i]
        else:
            s += row_J[r, i] * y[c, na, i] + row_J[r, 6 + i] * y[c, nb, i]
    return s


@njit(cache=True, error_model="numpy")
def coupled_springs(row_J, row_body, body_node, spring_w, spring_on, coupled, n_coupled, diag, offd, up_ptr, up_node,
                    x, y):
    """x := (A + U W Uᵀ)⁻¹ b from x = A⁻¹ b (A factored by `factor`), U the Jacobians of the
    coupled contact rows in the active set, W their weights: the Woodbury identity
    x −= A⁻¹U (W⁻¹ + Uᵀ A⁻¹ U)⁻¹ Uᵀ x, one solve per row (solve_sparse; y: (≥ m, k, 6)) and a
    dense m×m Cholesky: the exact solution of the whole system, as the Schur complement of
    seed 004 eq. 12-14 does for loop joints."""
    idx = np.empty(n_coupled, np.int64)
    m = 0
    for c in range(n_coupled):
        r = coupled[c]
        if spring_on[r] & 1 != 0:
            idx[m] = r
            m += 1
    if m == 0:
        return
    for c in range(m):
        r = idx[c]
        na, nb = body_node[row_body[r, 0]], body_node[row_body[r, 1]]
        yc = y[c]
        fill2d(yc, 0.0)
        for i in range(6):
            yc[na, i] = row_J[r, i]
            yc[nb, i] = row_J[r, 6 + i]
        solve_sparse(diag, offd, up_ptr, up_node, yc)
    S = np.empty((m, m))
    t = np.empty(m)
    for c in range(m):
        r = idx[c]
        na, nb = body_node[row_body[r, 0]], body_node[row_body[r, 1]]
        t[c] = row_dot_nodes(row_J, r, na, nb, x, y, -1)
        for d in range(c + 1):
            S[c, d] = row_dot_nodes(row_J, r, na, nb, x, y, d)
        S[c, c] += 1.0 / spring_w[r]
    for j in range(m):                               # S = L Lᵀ (lower), then L Lᵀ z = t
        s = S[j, j]
        for p in range(j):
            s -= S[j, p] * S[j, p]
        s = np.sqrt(s) if s > 0.0 else 1e-150
        S[j, j] = s
        for i in range(j + 1, m):
            v = S[i, j]
            for p in range(j):
                v -= S[i, p] * S[j, p]
            S[i, j] = v / s
    for i in range(m):
        v = t[i]
        for p in range(i):
            v -= S[i, p] * t[p]
        t[i] = v / S[i, i]
    for i in range(m - 1, -1, -1):
        v = t[i]
        for p in range(i + 1, m):
            v -= S[p, i] * t[p]
        t[i] = v / S[i, i]
    for c in range(m):
        z = t[c]
        for k in range(x.shape[0]):
            for i in range(6):
                x[k, i] -= z * y[c, k, i]


@njit(cache=True, error_model="numpy")
def check_springs(h, row_J, row_body, spring_depth, spring_w, spring_g, spring_on, body_vel, body_omega):
    """The contact springs' active set after a solve — seed 000's dead zone at the end of the
    step, one-sided: a row is in when it penetrates at the end of the step
    (depth − Δt J V⁺ > 0) and its force f = (g − w J V⁺)/Δt pushes (f > 0). Returns
    whether anything changed."""
    changed = False
    for r in range(spring_w.shape[0]):
        if spring_w[r] == 0.0:
            continue
        v = row_velocity(row_J, r, row_body[r, 0], row_body[r, 1], body_vel, body_omega)
        on = spring_depth[r] - h * v > 0.0 and spring_g[r] - spring_w[r] * v > 0.0
        if on != (spring_on[r] & 1 != 0):
            spring_on[r] ^= 1
            changed = True
    return changed


@njit(cache=True, error_model="numpy", _nrt=False)
def contact_on_joints(joints, contacts):
    """Whether a touching contact's body is also a joint's (its friction then has to pass
    through the joints within the step: stiff_step solves again)."""
    buf, row_body = contacts.buffers, contacts.rows.body
    n_rows = buf.n[N_ROWS] if buf.n[N_NOW] > 0 else 0
    joint_body = joints.body
    for r in range(n_rows):
        for side in range(2):
            i = row_body[r, side]
            for j in range(joint_body.shape[0]):
                if joint_body[j, 0] == i or joint_body[j, 1] == i:
                    return True
    return False


@njit(cache=True, error_model="numpy", _nrt=False)
def friction_as_forces(h, bodies, work, plan, vel0, omega0, sign):
    """sign = +1: the contact friction's change of the velocities (now (vel, omega), before
    it (pvel, pomega)) as forces m Δv/Δt, I Δω/Δt added to force_acc/torque_acc, kept in
    (pvel, pomega), and the velocities put back to the step's start (vel0, omega0), for the
    implicit solve to be done again; sign = −1: those forces taken off again."""
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    force_acc, torque_acc, pvel, pomega = work.force_acc, work.torque_acc, work.pvel, work.pomega
    inertia_world, node_body = plan.inertia_world, plan.node_body
    for k in range(node_body.shape[0]):
        i = node_body[k]
        if sign > 0.0:
            m = 1.0 / body_inv_mass[i] if body_inv_mass[i] > 0.0 else 0.0
            dwx, dwy, dwz = body_omega[i, 0] - pomega[i, 0], body_omega[i, 1] - pomega[i, 1], \
                body_omega[i, 2] - pomega[i, 2]
            for c in range(3):
                pvel[i, c] = m * (body_vel[i, c] - pvel[i, c]) / h
            for c in range(3):
                pomega[i, c] = (inertia_world[i, 3 * c] * dwx + inertia_world[i, 3 * c + 1] * dwy
                                + inertia_world[i, 3 * c + 2] * dwz) / h
            for c in range(3):
                body_vel[i, c] = vel0[i, c]
                body_omega[i, c] = omega0[i, c]
        for c in range(3):
            force_acc[i, c] += sign * pvel[i, c]
            torque_acc[i, c] += sign * pomega[i, c]
