"""Impacts (seed 004 eqs. 8-11): the contact points classified at the step's start as
impacting, resting or speculative, the kinetic energy around the impact LCP, and the
impact records (LcpStats.impacts)."""
from ...jit import helper

from ...contacts import N_NOW
from ...joint_rows import FREE_CONTACT, FREE_OFF, free_rows, row_velocity
from ...quat import rotate_inv



@helper(cache=True)
def classify_contacts(threshold, h, contacts, crows, vel, omega, c_vn, c_imp, c_gap):
    """The contacts' rows as the lcp family uses them (package docstring, impacts): ġ⁻ =
    J·V of every point's normal row at the step's start (c_vn) and its gap (c_gap, 0 when
    touching). A point impacts (c_imp = 1, target e·ġ⁻: ġ⁺ + e ġ⁻ ≥ 0) when it approaches
    faster than the threshold and touches or — with restitution — would reach the surface
    in the first half of this step at that speed (gap < −ġ⁻·h/2); reached in the second
    half, its row stays off and it touches and bounces next step. Every other point with
    a gap is a speculative row (ġ ≥ −gap/h), including the bouncing ones physics/
    contacts.py leaves off until they touch; a contact with such a row has its friction
    on. Returns how many points impact."""
    buf, cs = contacts.buffers, contacts.shapes
    ci, cf, row_of, restitution = buf.ci, buf.cf, buf.row_of, cs.restitution
    c_J, c_active, c_bias, c_body, c_kind, c_hi = crows.J, crows.active, crows.bias, crows.body, crows.kind, crows.hi
    block_start, block_count = crows.block_start, crows.block_count
    m = buf.n[N_NOW] if block_start.shape[0] > 0 else 0
    for r in range(c_J.shape[0]):
        c_imp[r] = 0
    n = 0
    for q in range(m):
        r = row_of[q]
        if r < 0:
            continue                        # a gap the pair cannot close: no row (contacts.py)
        vn = row_velocity(c_J, r, c_body[r, 0], c_body[r, 1], vel, omega)
        depth = cf[q, 6]
        c_vn[r] = vn
        c_gap[r] = max(-depth, 0.0)
        e = max(restitution[ci[q, 0]], restitution[ci[q, 1]])
        if vn < -threshold and (depth >= 0.0 or (e > 0.0 and -depth < -0.5 * vn * h)):
            c_imp[r] = 1
            c_active[r] = 1
            c_bias[r] = e * vn
            n += 1
        elif vn < -threshold and e > 0.0 and -depth < -vn * h:
            c_active[r] = 0                 # reached in the second half: bounces next step
        elif c_active[r] == 0:
            c_active[r] = 1
            c_bias[r] = -depth / h
    for blk in range(block_start.shape[0]):
        start = block_start[blk]
        end = start + block_count[blk]
        f0 = free_rows(c_kind, start, end)[0]
        if f0 < end and c_active[f0] == FREE_OFF and c_hi[f0] > 0.0 and f0 > start:
            for r in range(f0, end):
                c_active[r] = FREE_CONTACT
    return n


@helper(cache=True)
def kinetic_energy(bodies):
    """½ m v² + ½ ωᵀ I ω over the dynamic bodies (J)."""
    body_quat, body_vel, body_omega = bodies.quat, bodies.vel, bodies.omega
    body_inv_mass, body_inertia = bodies.inv_mass, bodies.inertia
    e = 0.0
    for i in range(body_vel.shape[0]):
        if body_inv_mass[i] == 0.0:
            continue
        bx, by, bz = rotate_inv(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                body_omega[i, 0], body_omega[i, 1], body_omega[i, 2])
        e += 0.5 / body_inv_mass[i] * (body_vel[i, 0] ** 2 + body_vel[i, 1] ** 2 + body_vel[i, 2] ** 2)
        e += 0.5 * (body_inertia[i, 0] * bx * bx + body_inertia[i, 1] * by * by + body_inertia[i, 2] * bz * bz)
    return e


@helper(cache=True)
def record_impact(impacts, n, t, r, crows, c_vn, vel, omega, ke0, ke1, S):
    """Impact record n (LcpStats.impacts) of contact row r, if it fits; returns n + 1."""
    if n < impacts.shape[0]:
        a, b = crows.body[r, 0], crows.body[r, 1]
        vn = c_vn[r]
        rec = impacts[n]
        rec[0] = t
        rec[1] = a
        rec[2] = b
        rec[3] = vn
        rec[4] = row_velocity(crows.J, r, a, b, vel, omega)
        rec[5] = crows.bias[r] / vn if vn != 0.0 else 0.0
        rec[6] = ke0
        rec[7] = ke1
        rec[8] = S
    return n + 1
