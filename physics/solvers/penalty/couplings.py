"""Couplings between joints, q_f = m·q_l + o (World.add_coupling; ../couplings.py writes
their rows: two halves on the two joints' bodies), under the penalty family: each an
implicit spring of the step's system in every preset, as the stiff preset's rows
(assemble.stiff_rows): α = m_c ω², β = 2ζ m_c ω with ω = κ_s/Δt, ζ = ζ_s on the
coupling's effective mass m_c = 1/(J M⁻¹ Jᵀ), w = Δt²α + Δtβ, g = −Δt α C_lin. Its
weight w JᵀJ spans up to four bodies: the blocks between each two of them (the layout has
room for them: coupling_pairs). Per coupling, `vec` holds the spring's C_lin (its
linearized value at the end of the step, after the solve), w and g of the step's last
linearization.
"""
from ...jit import helper

from ..couplings import coupling_velocity, prepare_couplings
from .block_ldl import find_slot


def coupling_pairs(model):
    """[(a, b)]: each two distinct bodies of a coupling's two joints, for the layout."""
    out = []
    for follower, leader in model.couplings.joint[:model.couplings.count]:
        bodies = sorted({int(b) for b in (*model.joints.body[follower], *model.joints.body[leader])})
        out += [(a, b) for i, a in enumerate(bodies) for b in bodies[i + 1:]]
    return out


@helper(cache=True, error_model="numpy", _nrt=False)
def first_on_body(body, c, e):
    """Whether entry e (half e // 2, side e % 2) of coupling c is the first on its body."""
    b = body[c, e // 2, e % 2]
    for f in range(e):
        if body[c, f // 2, f % 2] == b:
            return False
    return True


@helper(cache=True, error_model="numpy", _nrt=False)
def body_part(body, J, c, e, i):
    """Component i of coupling c's Jacobian on entry e's body: the halves' parts on it summed."""
    b = body[c, e // 2, e % 2]
    s = 0.0
    for f in range(4):
        if body[c, f // 2, f % 2] == b:
            s += J[c, f // 2, 6 * (f % 2) + i]
    return s


@helper(cache=True, error_model="numpy", _nrt=False)
def coupling_springs(params, h, relin, bodies, cp, plan):
    """The couplings' springs into the step's matrix (plan.diag0, offd0, rhs0), linearized
    at the poses their rows were written at (X_k = X + Δt V_k with `relin`, as stiff_rows).
    Needs plan.inv_inertia_world (body_blocks)."""
    body, J, mass, vec = cp.body, cp.J, cp.mass, cp.vec
    body_node, up_ptr, up_node = plan.body_node, plan.up_ptr, plan.up_node
    diag0, offd0, rhs0 = plan.diag0, plan.offd0, plan.rhs0
    prepare_couplings(cp, bodies.inv_mass, plan.inv_inertia_world)
    omega = params.stiff_kappa / h
    for c in range(mass.shape[0]):
        m = mass[c]
        alpha = m * omega * omega
        w = h * h * alpha + h * 2.0 * params.stiff_zeta * m * omega
        c_lin = cp.C[c]
        if relin:
            c_lin -= h * coupling_velocity(cp, c, plan.vel_k, plan.omega_k)
        g = -h * alpha * c_lin
        vec[0, c], vec[1, c], vec[2, c] = c_lin, w, g
        for e in range(4):
            ne = body_node[body[c, e // 2, e % 2]]
            if ne < 0 or not first_on_body(body, c, e):
                continue
            for i in range(6):
                ui = body_part(body, J, c, e, i)
                rhs0[ne, i] += g * ui
                for j in range(i + 1):
                    diag0[ne, 6 * i + j] += w * ui * body_part(body, J, c, e, j)
            for f in range(e + 1, 4):
                nf = body_node[body[c, f // 2, f % 2]]
                if nf < 0 or nf == ne or not first_on_body(body, c, f):
                    continue
                slot = find_slot(up_ptr, up_node, min(ne, nf), max(ne, nf))
                late, early = (e, f) if ne > nf else (f, e)     # rows of the later node, columns of the earlier
                for i in range(6):
                    wi = w * body_part(body, J, c, late, i)
                    for j in range(6):
                        offd0[slot, 6 * i + j] += wi * body_part(body, J, c, early, j)


@helper(cache=True, error_model="numpy", _nrt=False)
def store_coupling_impulses(h, cp, bodies):
    """Each coupling's impulse over the step, g − w J·V⁺ (its force times Δt), and its
    linearized value at the end of the step, C_lin + Δt J·V⁺ (as assemble.store_impulses)."""
    for c in range(cp.mass.shape[0]):
        v = coupling_velocity(cp, c, bodies.vel, bodies.omega)
        cp.impulse[c] = cp.vec[2, c] - cp.vec[1, c] * v
        cp.vec[0, c] += h * v


@helper(cache=True, error_model="numpy", _nrt=False)
def coupling_nonlinearity(cp):
    """Largest |C(X⁺) − C_lin| over the couplings (rad or m): how far their linearization
    missed the poses the step reached (C at the rows just written; assemble.nonlinearity)."""
    worst = 0.0
    for c in range(cp.C.shape[0]):
        worst = max(worst, abs(cp.C[c] - cp.vec[0, c]))
    return worst

