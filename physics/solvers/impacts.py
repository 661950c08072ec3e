"""Impacts that propagate: sequential pairwise restitution through the contact graph,
shared by the `impulse` and `lcp` families (called at the start of each (sub)step, on
the start velocities, before the step's forces and its contact solve).

Model (Guendelman, Bridson & Fedkiw 2003, "Nonconvex rigid bodies with stacking", the
collision passes; per-contact Newton restitution as in Moreau's and Frémond's impact
laws): an impact in a group of touching bodies is a sequence of two-body collisions.
Sweeps run over the touching pairs in the contact graph's order; a pair whose contact
approaches faster than the restitution threshold collides with its own restitution,
ġ⁺ ≥ −e ġ⁻ at each of its points (ġ⁻ the pair's normal speed when it collides; a
manifold's points together, by projected Gauss–Seidel on its K = J M⁻¹ Jᵀ ≤ 4×4, so a
box landing flat bounces flat), and the impulse it takes moves the two bodies, so the
next pair sees it. Sweeps repeat until no pair approaches faster than the threshold
(or min(pairs + 8, MAX_SWEEPS) sweeps); then passes of the same kind with e = 0 take
what still approaches inelastically (GBF03's last pass), so a pair that separated keeps
its speed unless a later collision changes it. A Newton's cradle hands the first ball's
momentum down the row (the last ball leaves, the others stay; with e < 1 at
((1 + e)/2)ⁿ⁻¹ of the first's speed); a small ball resting on a big one that hits the
floor leaves at (3m₁ − m₂)/(m₁ + m₂)·v.

Then the contact rows of those groups are re-targeted for the step's solve: a point of
a pair that collided keeps its separation speed (ġ ≥ max(ġ⁺, 0): the step's gravity or
motor does not take back what the impact gave, as the impulse family's restitution
target), the other touching points rest (ġ ≥ 0), and a gap keeps physics/contacts.py's rule at
the new speeds (a bouncing approach waits until it touches, else ġ ≥ −gap/h).

Where: only groups (bodies joined by touching or near contacts, not through static
bodies) with two pairs or more, one of them with e > 0. A lone pair's impact is the
same sequentially or at once, and sequential inelastic collisions (e = 0 everywhere)
converge to the simultaneous inelastic answer: both stay with their family (the impulse
family's restitution rows, the lcp impact LCP, which include the joints exactly). "Touching": a gap below TOUCH, or one the pair
closes in the first `reach` of the step at its speed (lcp: ½, its impact rule; impulse:
0, it bounces when it touches).

Limits: each pairwise collision moves the two bodies as free bodies (M⁻¹, no joints);
their joints act in the step's solve that follows. That is exact where the impulse
does not load a joint (a ball hanging on a long rod struck sideways, within I/(m L²)
of its speed) and wrong for a link driven into a stack through its joints. A truly
simultaneous impact (a ball striking two touching balls symmetrically) has no unique
answer: the sequence follows the contact order. Friction does not act during the
collisions (the step's solve applies it after).
"""
import math

from ..jit import helper

from ..contacts import N_NOW, S_THRESHOLD
from ..joint_rows import FREE_CONTACT, FREE_OFF, ROW_FREE, row_velocity
from ..quat import world_inv_inertia_times
from .row_ops import scatter_row

TOUCH = 1e-9            # m: a gap below this is touching (bodies placed touching, to round-off)
MAX_SWEEPS = 64         # sweeps over a step's pairs at most
INELASTIC_REST = 1e-9   # m/s: the inelastic passes leave a pair approaching slower than this to the step's solve
BLOCK_PASSES = 30       # Gauss–Seidel passes over a manifold's points in one collision
I_GAP, I_E, I_COLLIDED, I_TARGET, I_LAMBDA = range(5)   # ContactWork.impact's columns per contact row


@helper(cache=True, error_model="numpy", _nrt=False)
def _find(parent, i):
    """Root of body i in the union–find forest (path halving)."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@helper(cache=True, error_model="numpy", _nrt=False)
def _minv_jt(row_J, r, a, b, bodies, out):
    """out[r] = M⁻¹Jᵀ of row r (free bodies, world inverse inertia); returns J M⁻¹ Jᵀ."""
    quat, inv_mass, inv_inertia = bodies.quat, bodies.inv_mass, bodies.inv_inertia
    k = 0.0
    for side in range(2):
        i = a if side == 0 else b
        o = 6 * side
        im = inv_mass[i]
        for q in range(3):
            out[r, o + q] = im * row_J[r, o + q]
        wx, wy, wz = world_inv_inertia_times(quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3], inv_inertia[i, 0],
                                             inv_inertia[i, 1], inv_inertia[i, 2], row_J[r, o + 3],
                                             row_J[r, o + 4], row_J[r, o + 5])
        out[r, o + 3], out[r, o + 4], out[r, o + 5] = wx, wy, wz
        for q in range(6):
            k += row_J[r, o + q] * out[r, o + q]
    return k


@helper(cache=True, error_model="numpy", _nrt=False)
def _in_contact(gap, vn, reach, h):
    """Whether a point with this gap (m) and normal speed ġ (m/s) takes part in a collision."""
    return gap <= TOUCH or gap <= -reach * vn * h


@helper(cache=True, error_model="numpy", _nrt=False)
def _normal_end(row_kind, start, end):
    """The first friction row of a block (its normal rows precede it)."""
    f0 = start
    while f0 < end and row_kind[f0] != ROW_FREE:
        f0 += 1
    return f0


@helper(cache=True, error_model="numpy", _nrt=False)
def _fastest_approach(row_J, start, f0, a, b, vel, omega, impact, reach, h):
    """The most negative normal speed ġ (m/s) among a manifold's normal rows start…f0−1 in
    contact (0 if none approaches)."""
    fastest = 0.0
    for r in range(start, f0):
        vn = row_velocity(row_J, r, a, b, vel, omega)
        if _in_contact(impact[r, I_GAP], vn, reach, h):
            fastest = min(fastest, vn)
    return fastest


@helper(cache=True, error_model="numpy", _nrt=False)
def _collide(row_J, start, f0, a, b, e, reach, h, impact, mass, minv_jt, bodies):
    """One two-body collision of a manifold's normal rows start…f0−1, those in contact at
    its start: ġ⁺_i ≥ −e·min(ġ⁻_i, 0) with impulses λ_i ≥ 0 complementary to it
    (Gauss–Seidel on the bodies' velocities, the rows' M⁻¹Jᵀ and effective masses as
    free bodies into minv_jt, mass; one point: exact in one pass). The bodies'
    velocities updated; returns whether any impulse acted."""
    vel, omega = bodies.vel, bodies.omega
    for r in range(start, f0):
        k = _minv_jt(row_J, r, a, b, bodies, minv_jt)
        mass[r] = 1.0 / k if k > 0.0 else 0.0
        vn = row_velocity(row_J, r, a, b, vel, omega)
        impact[r, I_LAMBDA] = 0.0
        impact[r, I_TARGET] = -e * min(vn, 0.0) if _in_contact(impact[r, I_GAP], vn, reach, h) else math.nan
    acted = False
    for _ in range(BLOCK_PASSES):
        largest = 0.0
        for r in range(start, f0):
            t = impact[r, I_TARGET]
            if mass[r] <= 0.0 or math.isnan(t):
                continue
            old = impact[r, I_LAMBDA]
            new = max(old - mass[r] * (row_velocity(row_J, r, a, b, vel, omega) - t), 0.0)
            dl = new - old
            if dl == 0.0:
                continue
            impact[r, I_LAMBDA] = new
            scatter_row(minv_jt, r, a, b, dl, vel, omega)
            acted = True
            largest = max(largest, abs(dl) / mass[r])
        if largest <= 1e-12 or f0 - start == 1:
            break
    return acted


@helper(cache=True, error_model="numpy", _nrt=False)
def _group(graph, inv_mass, a, b):
    """2 if the group of the pair (a, b) propagates impacts (two pairs or more, one of
    them with e > 0), else 0."""
    root = _find(graph[:, 0], b if inv_mass[b] > 0.0 else a)
    return 2 if graph[root, 1] >= 2 and graph[root, 2] > 0 else 0


@helper(cache=True)
def propagate_impacts(contacts, crows, bodies, h, reach):
    """Sequential pairwise impacts over the contact rows crows (physics/contacts.py's
    layout, just written at the step's start, the bodies at their start velocities), then
    the rows re-targeted for the step's solve (module docstring). reach: the share of the
    step within which a closing gap counts as touching. Returns the number of pairwise
    collisions (0: nothing changed)."""
    buf, cs, work = contacts.buffers, contacts.shapes, contacts.work
    block_start, block_count = crows.block_start, crows.block_count
    nb = block_start.shape[0]
    if nb < 2:
        return 0
    ci, cf, row_of, restitution = buf.ci, buf.cf, buf.row_of, cs.restitution
    row_J, row_body, row_kind, row_active, row_bias, row_hi = crows.J, crows.body, crows.kind, crows.active, \
        crows.bias, crows.hi
    impact, graph, minv_jt, mass = work.impact, work.graph, work.minv_jt, work.mass
    vel, omega, inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    threshold = cs.settings[S_THRESHOLD]
    # each normal row's gap and restitution
    for q in range(buf.n[N_NOW]):
        r = row_of[q]
        if r >= 0:
            impact[r, I_GAP] = max(-cf[q, 6], 0.0)
            impact[r, I_E] = max(restitution[ci[q, 0]], restitution[ci[q, 1]])
            impact[r, I_COLLIDED] = 0.0
    # the groups: bodies joined by contact pairs (union–find, never through a static
    # body), each with its number of pairs and of pairs with e > 0
    for i in range(vel.shape[0]):
        graph[i, 0] = i
        graph[i, 1] = 0
        graph[i, 2] = 0
    parent = graph[:, 0]
    for k in range(nb):
        a, b = row_body[block_start[k], 0], row_body[block_start[k], 1]
        if inv_mass[a] > 0.0 and inv_mass[b] > 0.0:
            ra, rb = _find(parent, a), _find(parent, b)
            if ra != rb:
                parent[ra] = rb
    for k in range(nb):
        a, b = row_body[block_start[k], 0], row_body[block_start[k], 1]
        root = _find(parent, b if inv_mass[b] > 0.0 else a)
        graph[root, 1] += 1
        if impact[block_start[k], I_E] > 0.0:
            graph[root, 2] += 1
    n_prop = 0
    for k in range(nb):
        if _group(graph, inv_mass, row_body[block_start[k], 0], row_body[block_start[k], 1]) >= 2:
            n_prop += 1
    if n_prop == 0:
        return 0
    # the sweeps: every pair in contact approaching faster than the threshold collides with
    # its own e; then the last passes: what still approaches is taken inelastically, pair by
    # pair, so a pair that collided keeps the separation it took unless a later one changes it
    n_collisions = 0
    for phase in range(2):
        elastic = phase == 0
        slowest = threshold if elastic else INELASTIC_REST
        for _ in range(min(n_prop + 8, MAX_SWEEPS)):
            collided = 0
            for k in range(nb):
                start = block_start[k]
                a, b = row_body[start, 0], row_body[start, 1]
                if _group(graph, inv_mass, a, b) < 2:
                    continue
                f0 = _normal_end(row_kind, start, start + block_count[k])
                if _fastest_approach(row_J, start, f0, a, b, vel, omega, impact, reach, h) >= -slowest:
                    continue
                e = impact[start, I_E] if elastic else 0.0
                if _collide(row_J, start, f0, a, b, e, reach, h, impact, mass, minv_jt, bodies):
                    collided += 1
                    if elastic:
                        for r in range(start, f0):
                            impact[r, I_COLLIDED] = 1.0
            n_collisions += collided
            if collided == 0:
                break
        if n_collisions == 0:
            return 0
    # the rows' targets for the step's solve, at the new speeds
    for k in range(nb):
        start = block_start[k]
        end = start + block_count[k]
        a, b = row_body[start, 0], row_body[start, 1]
        if _group(graph, inv_mass, a, b) < 2:
            continue
        f0 = _normal_end(row_kind, start, end)
        any_active = False
        for r in range(start, f0):
            vn = row_velocity(row_J, r, a, b, vel, omega)
            gap = impact[r, I_GAP]
            row_active[r] = 1
            if impact[r, I_COLLIDED] != 0.0 and not math.isnan(impact[r, I_TARGET]):
                row_bias[r] = -max(vn, 0.0)         # it collided: keep the separation speed it took
            elif _in_contact(gap, vn, reach, h):
                row_bias[r] = gap / h if gap > TOUCH else 0.0
            elif impact[r, I_E] > 0.0 and vn < -threshold:
                row_active[r] = 0                   # a bounce waits until it touches
            else:
                row_bias[r] = gap / h               # speculative: close the gap, no more
            any_active = any_active or row_active[r] != 0
        for r in range(f0, end):
            row_active[r] = FREE_CONTACT if (any_active and row_hi[r] > 0.0) else FREE_OFF
    return n_collisions
