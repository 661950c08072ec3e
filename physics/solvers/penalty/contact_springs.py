"""Contacts under the stiff preset: rows of the implicit system, like the joints' (physics/
contacts.py: per touching pair a manifold of ≤ 4 points, their normal rows J V = ġ, the
separation rate, and G = −depth; then two friction rows and a twist row at the patch's
centre).

Normal rows — one-sided springs. α = m ω², β = 2ζ m ω, ω = CONTACT_STIFF_KAPPA/Δt,
ζ = CONTACT_ZETA, m = 1/(p (1/m_a + 1/m_b)) over the pair's p points (the patch k = m_eff ω²:
the masses in contact), so a box resting on the ground sinks m g/k = g (Δt/κ)² and a load
F on a pair closes it by F/k. Seed 000's dead zone χ = min(0, G) is taken at the end of
the step, on both the spring and its damper (F = −Jᵀ(α χ + β χ̇), χ̇ ≈ (χ⁺ − χ)/Δt): with
the penetration p⁺ = depth − Δt ġ⁺ at the end of the step and p = max(0, depth) at its
start,

    f = α p⁺ + β (p⁺ − p)/Δt  when p⁺ > 0 and f > 0, else 0,

a force continuous in ġ⁺ (a damper on ġ alone jumps by β ġ where p⁺ crosses zero, and a
closing contact then has no consistent active set: the damper stops it short of touching,
without the damper it passes through), and the damper acts only while the pair is in
contact. Implicitly: w = Δt²α + Δtβ, g = Δt α depth + β min(0, depth), f Δt = g − w ġ⁺.
The spring's push is capped: a penetration is pushed out at most at PUSH_SPEED (the
depth in g at most the one a lone body on the ground leaves at that speed,
PUSH_SPEED Δt (1 + 2ζκ + κ²)/κ²; Box2D's contact push speed) — bodies dropped into each
other, or found a step's travel deep, come apart over a few steps instead of in one at
depth/Δt. A load of m_eff · κ² PUSH_SPEED/Δt per patch (10⁴ m/s² at Δt = 10 ms) is the
most the capped spring carries: far beyond any stack's.
The springs are an active set over the solves (check_contacts: a row is in when p⁺ > 0
and f > 0), starting from the rows that would penetrate at the start's velocity.

Friction rows — the joints' friction law (drives.py), kept a damper: on the patch's sliding
and twist rates ġ_t a damper of weight c Δt, c = S m_b/Δt while it sticks (S = STICK,
m_b = n/Σ_rows J M⁻¹ Jᵀ), and while it slides the damper whose impulse is the Coulomb
ball's radius R = μ Σ f_n Δt of the normal springs (seed 001 eq. 8, 16) at the rate of the
last solve, c Δt = R/|ġ_t| — regularized Coulomb friction solved implicitly (the lagged
damper of TAMSI, Castro et al. 2019): each solve is a passive system (springs and dampers
only: it cannot gain energy whatever the active set), and the passes converge on
|f_t| = R against the sliding. A constant impulse R along an earlier pass's direction
pushes wherever the rates have turned since, and, through the normal springs it loads,
feeds its own radius. The state (stick, or slide and c) is an active set over the solves
with the normal springs', started from the last step's forces (kept with the contacts'
warm start) and R following the normal springs from solve to solve. In the system,
friction sees the normal springs' torques (a box on a slope does not creep) and joints
pass it on within the step (a driven wheel's traction).

Between two dynamic bodies a contact couples their nodes as a joint does: the system is
laid out again with the contact graph (contact_graph.py) and solved exactly.

Inelastic (penalty has no restitution): a contact is found once it overlaps, up to a
step's travel deep, and the spring pushes that depth out within about a step — momentum
the pair never had coming in (a ball dropped at Δt = 10 ms would leave the floor at
~depth/Δt). So the positions take the solved velocities, and then a contact still
penetrating at the end of the step keeps no separating rate (relax_contacts: normal
impulses that only take separating velocity out, Gauss–Seidel, RELAX_SWEEPS sweeps): the
spring moves the body out, not its momentum — the split of position and velocity of
split impulses (Catto's soft step relaxes its bias velocity the same way, Box2D v3).
It only takes kinetic energy out.
"""
from collections import namedtuple

import numpy as np
from ...jit import helper

from ...contacts import N_BLOCKS, N_NOW, N_ROWS
from ...joint_rows import FREE_CONTACT, ROW_FREE, row_velocity
from .assemble import add_row, inv_inertia_quad
from .contact_graph import pair_slot
from .drives import STICK

# the stiff preset's contact springs: ωΔt and damping ratio; a body resting on the ground
# sinks m g/k = g(Δt/κ)²
CONTACT_STIFF_KAPPA = 10.0
CONTACT_ZETA = 1.0
CONTACT_PASSES = 8      # most solves per step of the contacts' (and drives') active set
RELAX_SWEEPS = 4        # Gauss–Seidel sweeps of relax_contacts
PUSH_SPEED = 1.0        # m/s: a spring pushes a penetration out no faster (contact_springs)
FRICTION_PASSES = 2     # most solves of a step that only refine the patches' friction
UNCHANGED, REFINED, SWITCHED = 0, 1, 2  # what a solve changed (check_contacts)
FRICTION_TOL = 1e-3     # a patch's friction impulse may miss the law's by this share of its radius …
WEIGHT_TOL = 1e-2       # … and this share of its weight's impulse m_b |g| Δt (check_contacts)
NO_FRICTION, STUCK, SLIDING = -1, 0, 1    # a patch's friction: none, the sticking damper, the sliding one

Springs = namedtuple("Springs", "w g depth on slot late fric fw fc radius tol")
"""The contact rows of one step in the implicit system (new_springs). Per contact row: w, g
its weight and right side (normal rows), depth (m, a normal row's point), on (1: a normal
row in the active set). Per contact block: slot, late its pair's block in the plan (−1: a
static body) and whether b is the later node; fric NO_FRICTION, STUCK or SLIDING; fw the
sticking damper's weight c Δt (kg), fc the damper's weight in use (fw, or R/|ġ_t|
sliding), radius R = μ Σ f_n Δt (N·s), tol the friction impulse a solve may miss R by
beyond FRICTION_TOL of it (N·s: check_contacts)."""


@helper(cache=True)
def new_springs(contacts):
    """Springs sized for this step's contact rows and blocks."""
    n = contacts.buffers.n
    n_rows = n[N_ROWS] if n[N_NOW] > 0 else 0
    n_blocks = n[N_BLOCKS] if n[N_NOW] > 0 else 0
    z, i = np.zeros, np.int64
    return Springs(z(n_rows), z(n_rows), z(n_rows), z(n_rows, i), z(n_blocks, i), z(n_blocks, i), z(n_blocks, i),
                   z(n_blocks), z(n_blocks), z(n_blocks), z(n_blocks))


@helper(cache=True, error_model="numpy")
def row_inv_mass_full(row_J, r, a, b, body_inv_mass, inv_inertia_world):
    """J_r M⁻¹ J_rᵀ of a contact row (world inverse inertia, 9 numbers per body)."""
    k = 0.0
    for side in range(2):
        i = a if side == 0 else b
        o = 6 * side
        k += body_inv_mass[i] * (row_J[r, o] ** 2 + row_J[r, o + 1] ** 2 + row_J[r, o + 2] ** 2)
        k += inv_inertia_quad(inv_inertia_world, i, row_J[r, o + 3], row_J[r, o + 4], row_J[r, o + 5])
    return k


@helper(cache=True, error_model="numpy")
def first_free(row_kind, start):
    """The first friction row of the block starting at `start` (after its normal rows)."""
    f0 = start
    while row_kind[f0] != ROW_FREE:
        f0 += 1
    return f0


@helper(cache=True, error_model="numpy")
def contact_springs(h, g_norm, bodies, contacts, plan, s):
    """The step's contact rows into s (Springs; module docstring): per normal row its
    weight, right side and depth and the active set's first guess (penetrating at the end
    of the step at the start's velocity); per block its pair's slot in `plan`, its friction
    damper and where the friction's active set starts — sliding (c Δt = R/|ġ_t| at its
    rate now) when the last step's friction was on its Coulomb ball and the sticking
    damper would leave it, else sticking. plan.inv_inertia_world must hold this step's world inverse inertias."""
    buf, crows = contacts.buffers, contacts.rows
    row_J, row_kind, row_body, row_active, row_hi, row_impulse = (crows.J, crows.kind, crows.body, crows.active,
                                                                  crows.hi, crows.impulse)
    block_start, block_count = crows.block_start, crows.block_count
    cf, row_of = buf.cf, buf.row_of
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    inv_inertia_world = plan.inv_inertia_world
    w_, g_, depth_, on_ = s.w, s.g, s.depth, s.on
    omega = CONTACT_STIFF_KAPPA / h
    kappa = CONTACT_STIFF_KAPPA
    push_depth = PUSH_SPEED * h * (1.0 + 2.0 * CONTACT_ZETA * kappa + kappa * kappa) / (kappa * kappa)
    for q in range(buf.n[N_NOW]):
        r = row_of[q]
        if r >= 0:
            depth_[r] = cf[q, 6]
    for blk in range(s.slot.shape[0]):
        start = block_start[blk]
        end = start + block_count[blk]
        a, b = row_body[start, 0], row_body[start, 1]
        slot, late = pair_slot(plan, a, b)
        s.slot[blk], s.late[blk] = slot, late
        s.fric[blk] = NO_FRICTION
        f0 = first_free(row_kind, start)
        k = body_inv_mass[a] + body_inv_mass[b]
        if k <= 0.0:
            continue
        m = 1.0 / (k * (f0 - start))
        alpha = m * omega * omega
        beta = 2.0 * CONTACT_ZETA * m * omega
        fn = 0.0
        for r in range(start, f0):
            d = depth_[r]
            w_[r] = h * h * alpha + h * beta
            g_[r] = h * alpha * min(d, push_depth) + beta * min(0.0, d)
            on_[r] = 1 if d - h * row_velocity(row_J, r, a, b, body_vel, body_omega) > 0.0 else 0
            fn += row_impulse[r]                  # the last step's f_n Δt (warm start)
        if row_active[f0] != FREE_CONTACT:
            continue
        ksum = vn = 0.0
        for r in range(f0, end):
            ksum += row_inv_mass_full(row_J, r, a, b, body_inv_mass, inv_inertia_world)
            v = row_velocity(row_J, r, a, b, body_vel, body_omega)
            vn += v * v
        if ksum <= 0.0:
            continue
        fw = STICK * (end - f0) / ksum
        radius = row_hi[f0] * fn
        s.fw[blk] = fw
        s.fc[blk] = fw
        s.radius[blk] = radius
        s.tol[blk] = WEIGHT_TOL * (end - f0) / ksum * g_norm * h
        s.fric[blk] = STUCK
        vn = np.sqrt(vn)
        if fw * vn > radius:                    # sliding now: its damper at its rate now
            s.fric[blk] = SLIDING
            s.fc[blk] = radius / vn


@helper(cache=True, error_model="numpy")
def add_contacts(contacts, plan, s):
    """The contact rows into one solve's matrix and right side (plan.diag, offd, rhs): the
    normal springs in the active set, each patch's friction damper (fc)."""
    crows = contacts.rows
    row_J, row_kind, row_body, block_start, block_count = (crows.J, crows.kind, crows.body, crows.block_start,
                                                           crows.block_count)
    body_node, diag, offd, rhs = plan.body_node, plan.diag, plan.offd, plan.rhs
    for blk in range(s.slot.shape[0]):
        start = block_start[blk]
        end = start + block_count[blk]
        a, b = row_body[start, 0], row_body[start, 1]
        na, nb = body_node[a], body_node[b]
        slot, late = s.slot[blk], s.late[blk]
        f0 = first_free(row_kind, start)
        for r in range(start, f0):
            if s.on[r] != 0:
                add_row(row_J, r, na, nb, slot, late, s.w[r], s.g[r], diag, offd, rhs)
        if s.fric[blk] != NO_FRICTION:
            for r in range(f0, end):
                add_row(row_J, r, na, nb, slot, late, s.fc[blk], 0.0, diag, offd, rhs)


@helper(cache=True, error_model="numpy")
def check_contacts(h, bodies, contacts, s):
    """The contacts' active set after a solve: a normal row is in when it penetrates at the
    end of the step (p⁺ = depth − Δt ġ⁺ > 0) and its force pushes (g − w ġ⁺ > 0); a patch's
    radius becomes R = μ Σ f_n Δt of this solve; a patch whose sticking damper's impulse
    would leave the ball slides, its damper c Δt = R/|ġ_t| at this solve's rate, one whose
    sticking damper stays within it sticks. Returns SWITCHED when a spring changed state,
    else REFINED when a patch's friction impulse missed the law's at its rate (the
    sticking damper's within the ball, else R) by more than FRICTION_TOL of R and tol,
    else UNCHANGED. (A patch whose normal force is all but nothing — boxes side by side
    in a row — or that is about to slip would take a solve per digit: its friction is
    refined in at most FRICTION_PASSES solves a step, and goes on from the next step's
    start.)"""
    crows = contacts.rows
    row_J, row_kind, row_body, row_hi, block_start, block_count = (crows.J, crows.kind, crows.body, crows.hi,
                                                                   crows.block_start, crows.block_count)
    body_vel, body_omega = bodies.vel, bodies.omega
    changed = UNCHANGED
    for blk in range(s.slot.shape[0]):
        start = block_start[blk]
        end = start + block_count[blk]
        a, b = row_body[start, 0], row_body[start, 1]
        f0 = first_free(row_kind, start)
        fn = 0.0
        for r in range(start, f0):
            if s.w[r] == 0.0:
                continue
            v = row_velocity(row_J, r, a, b, body_vel, body_omega)
            f = s.g[r] - s.w[r] * v
            on = 1 if s.depth[r] - h * v > 0.0 and f > 0.0 else 0
            if on != s.on[r]:
                s.on[r] = on
                changed = SWITCHED
            if on != 0:
                fn += f
        fric = s.fric[blk]
        if fric == NO_FRICTION:
            continue
        radius = row_hi[f0] * fn
        vn = 0.0
        for r in range(f0, end):
            v = row_velocity(row_J, r, a, b, body_vel, body_omega)
            vn += v * v
        vn = np.sqrt(vn)
        fw = s.fw[blk]
        wanted = min(radius, fw * vn)           # the law's impulse at this rate: stick within the ball
        if abs(s.fc[blk] * vn - wanted) > FRICTION_TOL * radius + s.tol[blk]:
            changed = max(changed, REFINED)
        if fw * vn <= radius:
            s.fric[blk] = STUCK
            s.fc[blk] = fw
        else:
            s.fric[blk] = SLIDING
            s.fc[blk] = radius / vn
        s.radius[blk] = radius
    return changed


@helper(cache=True, error_model="numpy")
def store_contact_impulses(bodies, contacts, s):
    """The contact rows' impulses of the last solve into their `impulse` (the readouts, and
    the next step's warm start: contacts.keep_contact_impulses): a normal spring's
    f Δt = g − w ġ⁺, a patch's friction −c Δt ġ⁺ per friction row."""
    crows = contacts.rows
    row_J, row_kind, row_body, row_impulse = crows.J, crows.kind, crows.body, crows.impulse
    block_start, block_count = crows.block_start, crows.block_count
    body_vel, body_omega = bodies.vel, bodies.omega
    for blk in range(s.slot.shape[0]):
        start = block_start[blk]
        end = start + block_count[blk]
        a, b = row_body[start, 0], row_body[start, 1]
        f0 = first_free(row_kind, start)
        for r in range(start, f0):
            row_impulse[r] = 0.0
            if s.on[r] != 0:
                row_impulse[r] = max(0.0, s.g[r] - s.w[r] * row_velocity(row_J, r, a, b, body_vel, body_omega))
        for r in range(f0, end):
            row_impulse[r] = 0.0
            if s.fric[blk] != NO_FRICTION:
                row_impulse[r] = -s.fc[blk] * row_velocity(row_J, r, a, b, body_vel, body_omega)


@helper(cache=True, error_model="numpy")
def relax_contacts(h, bodies, contacts, plan, s):
    """After the positions: a normal row still penetrating at the end of the step
    (p⁺ = depth − Δt ġ⁺ > 0 at the solved rate, whether or not its spring was in the active
    set: a spring that would pull is out of it, yet its pair still overlaps — another
    contact pushed the body away faster) keeps no separating rate — impulses λ ≤ 0 along
    it (accumulated per row, projected Gauss–Seidel, RELAX_SWEEPS sweeps) bring ġ > 0 to 0
    (module docstring, "Inelastic"). Each takes kinetic energy out and keeps momentum."""
    crows = contacts.rows
    row_J, row_kind, row_body = crows.J, crows.kind, crows.body
    block_start = crows.block_start
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    inv_inertia_world = plan.inv_inertia_world
    n_blocks = s.slot.shape[0]
    lam = np.zeros(s.w.shape[0])
    inside = np.zeros(s.w.shape[0], np.bool_)
    for blk in range(n_blocks):
        start = block_start[blk]
        a, b = row_body[start, 0], row_body[start, 1]
        for r in range(start, first_free(row_kind, start)):
            inside[r] = s.depth[r] - h * row_velocity(row_J, r, a, b, body_vel, body_omega) > 0.0
    for sweep in range(RELAX_SWEEPS):
        for blk in range(n_blocks):
            start = block_start[blk]
            a, b = row_body[start, 0], row_body[start, 1]
            f0 = first_free(row_kind, start)
            for r in range(start, f0):
                if not inside[r]:
                    continue
                v = row_velocity(row_J, r, a, b, body_vel, body_omega)
                if v <= 0.0 and lam[r] == 0.0:
                    continue
                k = row_inv_mass_full(row_J, r, a, b, body_inv_mass, inv_inertia_world)
                if k <= 0.0:
                    continue
                new = min(0.0, lam[r] - v / k)
                dl = new - lam[r]
                lam[r] = new
                if dl == 0.0:
                    continue
                for side in range(2):
                    i = a if side == 0 else b
                    o = 6 * side
                    im = body_inv_mass[i]
                    for c in range(3):
                        body_vel[i, c] += im * row_J[r, o + c] * dl
                    jx, jy, jz = row_J[r, o + 3] * dl, row_J[r, o + 4] * dl, row_J[r, o + 5] * dl
                    for c in range(3):
                        body_omega[i, c] += (inv_inertia_world[i, 3 * c] * jx + inv_inertia_world[i, 3 * c + 1] * jy
                                             + inv_inertia_world[i, 3 * c + 2] * jz)
