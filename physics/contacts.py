"""Contacts: the bodies that collide, detection every (sub)step, and contact rows.

The contact manifold of two touching bodies (up to four points, physics/collision) is a
block of rows in the row-table layout (physics/model.py Rows) with no joint behind it
(owner −1), written into a second row table of the same layout that the solvers sweep
after the joints' (`ContactData.rows`, trimmed each substep):

    normal rows   one per point: Ċ = n·(v_b + ω_b×r_b − v_a − ω_a×r_a), n from a to b;
                  one-sided: its accumulated impulse λ_n ≥ 0 (kind ROW_LIMIT, lo 0)
    friction rows at the centre c of the points: two along t1, t2 ⟂ n and, when the
                  points span a patch, a twist row r̄·(ω_b − ω_a)·n (r̄ the points' mean
                  distance from c: the sliding speed at r̄, so its impulse is in N·s like
                  the others and its torque is λ_tw·r̄ ≤ μ Σλ_n·r̄, a ring of radius r̄); their
                  impulses stay in one Coulomb ball ‖(λ_t1, λ_t2, λ_tw)‖ ≤ μ Σλ_n — the
                  coupled friction solve and ball clamp of seed 001 eq. 15-16, as for a
                  joint's free rows, with the radius μ Σλ_n instead of F·h (active
                  FREE_CONTACT, hi = μ). Friction at the centre does not depend on how the
                  normal impulse is shared among the points (with four points it is not
                  unique), so a sliding box does not yaw.

Velocity targets (the row's bias, J·V⁺ = −bias):
    touching (depth ≥ 0) and approaching faster than the restitution threshold:
        Newton restitution ġ⁺ = −e·ġ⁻, ġ⁻ the normal velocity at the start of the step;
    touching, slower: resting contact, ġ⁺ ≥ 0;
    a gap g below the margin (depth < 0): speculative contact, ġ⁺ ≥ −g/h (the body may
        close the gap in this step, no more) — except for a bouncing contact (e > 0,
        approaching faster than the threshold), which waits until it touches and bounces
        then. Gaps beyond the margin are not seen: a body faster than margin/h may sink
        in by up to its travel in one step, and is pushed out by the drift correction.
        Gaps the pair cannot close within the substep make no rows.
Position drift (split impulses, or Baumgarte): C = min(0, slop − depth), so a resting
contact settles `slop` deep and is never pushed apart beyond touching.

Mixing of the two bodies' values: μ = √(μ_a μ_b), e = max(e_a, e_b).

Warm start: a contact is keyed by its two bodies and the feature id of the narrow phase
(physics/collision); last substep's normal impulse and friction impulse (kept as a world
vector, projected on the new tangents) seed the matching contact. A point whose key is new
takes the impulse of the pair's last point within SAME_POINT of it: the same point named
by other features (an edge lying along a side of the face it is clipped by is cut there or
not by round-off), which would otherwise start from nothing and send a settled stack's
load through it again.

Bodies that never collide: the static world (body 0), bodies with collide = false,
bodies joined by a joint (with each other), static bodies with each other.
"""
from collections import namedtuple
import math

import numpy as np
from .jit import kernel, helper

from .collision import KIND_CODES, joined_keys
from .collision.broad import joined_starts, lower_bound, sweep_pairs
from .collision.hulls import HullTable, has_solids
from .collision.narrow import narrow_phase, narrow_phase_primitive
from .collision.common import BODY_WIDTH, COMPOUND, CONVEX, FEATURE_BITS
from .joint_rows import FREE_CONTACT, FREE_OFF, ROW_FREE, ROW_LIMIT, row_velocity
from .model import Rows, Scratch
from .quat import world_inv_inertia_times
from .settings import Setting, checked, defaults
from .solvers.row_ops import pair_run_end, scatter_row

CONTACT_SETTINGS = (
    Setting("enabled", "bool", True, label="contacts", help="Bodies collide with each other and with the ground."),
    Setting("margin", "float", 0.02, 0.0, 1.0, unit="m", label="margin",
            help="Contacts are found while the gap is below this (m): a closing gap is a speculative contact, "
                 "closed in one step and no further."),
    Setting("slop", "float", 0.002, 0.0, 0.1, unit="m", label="slop",
            help="Penetration left to resting contacts (m), so that they do not jitter in and out of touch."),
    Setting("restitution_threshold", "float", 0.2, 0.0, 100.0, unit="m/s", label="bounce threshold",
            help="Contacts approaching slower than this (m/s) come to rest instead of bouncing."),
)
S_ENABLED, S_MARGIN, S_SLOP, S_THRESHOLD = range(4)
# feature ids of the narrow phase are < 2^FEATURE_BITS − 1 (physics/collision): keys
# (a·k + b)·2^FEATURE_BITS + id stay below 2⁶² for k < 2¹⁸ colliding bodies

ContactShapes = namedtuple("ContactShapes", "body kind size static friction restitution skip_keys settings hulls")
"""The colliding bodies (k of them): body (k,) their World index; kind (k,) collision kind code;
size (k,4) shape numbers (collision/common.py); static (k,) bool; friction (k,) μ; restitution
(k,) e; skip_keys sorted keys of the joined pairs (collision/broad.joined_keys, compact indices);
settings (4,) enabled, margin (m), slop (m), restitution threshold (m/s); hulls the hull table
of the convex and compound bodies (collision/hulls.py), None for kernels compiled without
the hulls' narrow phase (World.robot_features false: they then unbox and pass on none of its
arrays)."""
ContactBuffers = namedtuple("ContactBuffers", "table first aabb sweep_key order pairs ci cf count key row_of "
                                             "block_of block_key prev_key prev_impulse n")
"""Detection and warm-start buffers: table (k, BODY_WIDTH) the colliding bodies' poses and
shape numbers (collision.pack_bodies' layout: the poses written each substep); the broad
phase's scratch (collision/broad.sweep_pairs): first (k+1,) the joined pairs' starts, aabb
(k,6), sweep_key (k,), order (k,) int64; pairs
(P,2) candidate pairs; ci (M,3) a, b (compact), feature; cf (M,7) point, normal, depth; count
(2,) contacts written, dropped; key (2M,) this substep's keys (points, then pairs; −1: a point
that made no row); row_of, block_of (M,) each point's normal row and block (−1: none); block_key (M,) each pair's key; prev_key (2M,) and prev_impulse (2M,4)
last substep's, sorted by key (a point: λ_n, then where it was; a pair: twist, then the
friction impulse as a world vector, N·s); n (6,) int64: contacts now, entries in prev, overflow flag, rows and
blocks written, spare."""
ContactWork = namedtuple("ContactWork", "minv_jt mass bound impulse_pos direct block swept impact graph")
"""Per contact row: M⁻¹Jᵀ (R,12), effective mass (R,), penalty bound (R,), split impulse (R,),
direct (R,) zeros (contact rows are never in the direct tree solve); per block (M, BLOCK_NUMBERS):
the impulse solver's couplings J M⁻¹ Jᵀ of its rows and a scratch (solvers/impulse/contact_sweeps.py CB_*);
swept (N,6): every World body's velocity and angular velocity before a contact sweep (the
impulse solver's convergence test, impulse.contact_sweep); the impact propagation's scratch
(solvers/impacts.py): impact (R,5) per row, graph (N,3) int64 per body."""
ContactData = namedtuple("ContactData", "shapes buffers rows work")
"""What a solver kernel takes: ContactShapes, ContactBuffers, the contact rows (a Rows table of
capacity R = 3M, trimmed per substep by contact_views) and ContactWork."""
N_NOW, N_PREV, N_OVERFLOW, N_ROWS, N_BLOCKS = range(5)
PATCH_FEATURE = (1 << FEATURE_BITS) - 1     # the key of a pair's friction patch
SAME_POINT = 1e-4   # m: a new key's point this close to a last one of its pair is that point (warm start)
BLOCK_NUMBERS = 33                          # ContactWork.block's numbers per block


# ---------------------------------------------------------------------------- kernels
@helper(cache=True, _nrt=False)
def broad_contacts(data, bodies):
    """find_contacts' first half: the packed body table at the bodies' current poses and the
    broad phase's candidate pairs (collision/broad.sweep_pairs) into data.buffers; returns
    how many pairs the narrow phase is to test (0: nothing near, and no contact now).
    Flags an overflow of the pairs' buffer. Allocates nothing: compiled without reference
    counting, so that a solver's kernel pays no count of the contact bundles' arrays per
    substep while nothing is near."""
    cs, buf = data.shapes, data.buffers
    body, table, pairs = cs.body, buf.table, buf.pairs
    k = body.shape[0]
    buf.count[0] = 0
    buf.count[1] = 0
    if k < 2 or cs.settings[S_ENABLED] == 0.0:
        buf.n[N_NOW] = 0
        return 0
    body_pos, body_quat = bodies.pos, bodies.quat
    for c in range(k):
        i = body[c]
        for q in range(3):
            table[c, q] = body_pos[i, q]
        for q in range(4):
            table[c, 3 + q] = body_quat[i, q]
    n_pairs = sweep_pairs(cs.kind, table, cs.hulls, cs.static, cs.skip_keys, buf.first, cs.settings[S_MARGIN], buf.aabb,
                          buf.sweep_key, buf.order, pairs)
    if n_pairs > pairs.shape[0]:
        buf.n[N_OVERFLOW] = 1
    tested = min(n_pairs, pairs.shape[0])
    if tested == 0:
        buf.n[N_NOW] = 0
    return tested


@helper(cache=True)
def _kept(buf):
    """The number of contacts the narrow phase kept (what fits in ci, cf); flags an overflow
    when some did not fit."""
    if buf.count[1] > 0:
        buf.n[N_OVERFLOW] = 1
    m = min(buf.count[0], buf.ci.shape[0])
    buf.n[N_NOW] = m
    return m


@helper(cache=True, _nrt=True)
def narrow_contacts(data, n_pairs):
    """find_contacts' second half: the contacts of the first n_pairs > 0 candidate pairs
    (collision/narrow.narrow_phase) into data.buffers (ci, cf); returns their number.
    Flags an overflow (contacts that did not fit are dropped for this substep). Counts
    references (`_nrt=True`: the narrow phase allocates its workspaces), though
    prepare_contacts, which calls it, does not."""
    cs, buf = data.shapes, data.buffers
    narrow_phase(cs.kind, buf.table, cs.hulls, buf.pairs, n_pairs, cs.settings[S_MARGIN], buf.ci, buf.cf, buf.count)
    return _kept(buf)


@helper(cache=True, _nrt=True)
def narrow_contacts_primitive(data, n_pairs):
    """narrow_contacts for colliding bodies of which none is a hull (Contacts.hulls false):
    collision/narrow.narrow_phase_primitive, the same contacts without compiling the
    hulls' narrow phase. A solver kernel compiled for the HULLS feature calls
    narrow_contacts, one compiled without it this."""
    cs, buf = data.shapes, data.buffers
    narrow_phase_primitive(cs.kind, buf.table, buf.pairs, n_pairs, cs.settings[S_MARGIN], buf.ci, buf.cf, buf.count)
    return _kept(buf)


@kernel(cache=True)
def find_contacts(data, bodies):
    """Collision detection at the bodies' current poses (physics/collision), gaps up to the
    margin included; returns the number of contacts in data.buffers (ci, cf). Flags an
    overflow (the buffers are grown after the kernel; contacts that did not fit are
    dropped for this substep). A solver's kernel calls prepare_contacts, which finds them
    and writes their rows."""
    n_pairs = broad_contacts(data, bodies)
    return narrow_contacts(data, n_pairs) if n_pairs > 0 else 0


@helper(cache=True)
def tangents(nx, ny, nz):
    """Two unit vectors completing n to a right-handed orthonormal basis."""
    if abs(nx) < 0.57735:
        ax, ay, az = 0.0, nz, -ny           # n × x
    else:
        ax, ay, az = -nz, 0.0, nx           # n × y
    s = 1.0 / math.sqrt(ax * ax + ay * ay + az * az)
    t1x, t1y, t1z = ax * s, ay * s, az * s
    return t1x, t1y, t1z, ny * t1z - nz * t1y, nz * t1x - nx * t1z, nx * t1y - ny * t1x


@helper(cache=True)
def contact_row(row_J, r, ex, ey, ez, rax, ray, raz, rbx, rby, rbz):
    """Row r along world direction e at lever arms r_a, r_b: J = [−e, −r_a×e, e, r_b×e]."""
    row_J[r, 0], row_J[r, 1], row_J[r, 2] = -ex, -ey, -ez
    row_J[r, 3], row_J[r, 4], row_J[r, 5] = -(ray * ez - raz * ey), -(raz * ex - rax * ez), -(rax * ey - ray * ex)
    row_J[r, 6], row_J[r, 7], row_J[r, 8] = ex, ey, ez
    row_J[r, 9], row_J[r, 10], row_J[r, 11] = rby * ez - rbz * ey, rbz * ex - rbx * ez, rbx * ey - rby * ex


@helper(cache=True)
def find_in_pair(prev_key, n_prev, base, key):
    """Index of key in the sorted prev_key[:n_prev], or −1, searched from base = the pair's
    lower_bound: its keys (points, then its patch) follow one another there."""
    j = base
    while j < n_prev and prev_key[j] < key:
        j += 1
    return j if j < n_prev and prev_key[j] == key else -1


@helper(cache=True, _nrt=False)
def nearest_in_pair(prev_key, prev_impulse, n_prev, base, patch, x, y, z):
    """Index of the pair's last point (keys from base up to its patch key) within
    SAME_POINT of (x, y, z) — the nearest — or −1. A point's entry keeps its position in
    prev_impulse[:, 1:4] (keep_contact_impulses)."""
    best, found = SAME_POINT * SAME_POINT, -1
    j = base
    while j < n_prev and prev_key[j] < patch:
        dx, dy, dz = prev_impulse[j, 1] - x, prev_impulse[j, 2] - y, prev_impulse[j, 3] - z
        d2 = dx * dx + dy * dy + dz * dz
        if d2 <= best:
            best, found = d2, j
        j += 1
    return found


@kernel(cache=True, _nrt=False)
def write_contact_rows(data, bodies, h, m):
    """The rows of the m contacts just found, one block per touching pair (its manifold):
    a normal row per point, then the friction rows at the points' centre (module
    docstring), with velocity targets, drift values and warm-start impulses (last
    substep's, found by key: one binary search per pair, its keys next to each other). Returns the
    number of blocks; data.buffers.n holds the rows and blocks written. Compiled without
    numba's reference counting (`_nrt=False`: it allocates nothing and returns a number),
    which would otherwise count references to the arrays its inlined row helpers take,
    several atomic calls per row."""
    cs, buf, rows = data.shapes, data.buffers, data.rows
    body, friction, restitution, settings = cs.body, cs.friction, cs.restitution, cs.settings
    ci, cf, key, row_of, block_of = buf.ci, buf.cf, buf.key, buf.row_of, buf.block_of
    row_joint, row_kind, row_rot, row_body, row_J = rows.joint, rows.kind, rows.rot, rows.body, rows.J
    row_C, row_active, row_lo, row_hi, row_bias = rows.C, rows.active, rows.lo, rows.hi, rows.bias
    row_mass_scale, row_impulse_scale, row_lambda = rows.mass_scale, rows.impulse_scale, rows.impulse
    block_start, block_count = rows.block_start, rows.block_count
    body_pos, body_vel, body_omega = bodies.pos, bodies.vel, bodies.omega
    prev_key, prev_impulse, n_prev = buf.prev_key, buf.prev_impulse, buf.n[N_PREV]
    k = body.shape[0]
    slop, threshold = settings[S_SLOP], settings[S_THRESHOLD]
    r = 0
    nb = 0
    c = 0
    while c < m:
        ia, ib = ci[c, 0], ci[c, 1]
        end = pair_run_end(ci, c, m)
        a, b = body[ia], body[ib]
        mu = math.sqrt(friction[ia] * friction[ib])
        e = max(restitution[ia], restitution[ib])
        nx, ny, nz = cf[c, 3], cf[c, 4], cf[c, 5]
        pair_key = (ia * k + ib) << FEATURE_BITS
        base = lower_bound(prev_key, n_prev, pair_key)      # the pair's last-substep keys start here
        block_start[nb] = r
        # one normal row per point, at the middle of its two surface points
        cx = cy = cz = 0.0
        touching = False
        for q in range(c, end):
            depth = cf[q, 6]
            px = cf[q, 0] + 0.5 * depth * cf[q, 3]
            py = cf[q, 1] + 0.5 * depth * cf[q, 4]
            pz = cf[q, 2] + 0.5 * depth * cf[q, 5]
            contact_row(row_J, r, cf[q, 3], cf[q, 4], cf[q, 5], px - body_pos[a, 0], py - body_pos[a, 1],
                        pz - body_pos[a, 2], px - body_pos[b, 0], py - body_pos[b, 1], pz - body_pos[b, 2])
            vn = row_velocity(row_J, r, a, b, body_vel, body_omega)      # ġ⁻, before this step's forces
            row_of[q] = -1
            key[q] = -1
            if -depth > 2.0 * h * max(0.0, -vn) and -depth > slop:
                continue        # a gap this pair cannot close in the substep: no row
            cx += px
            cy += py
            cz += pz
            active = 1
            bias = 0.0
            if depth >= 0.0:
                if vn < -threshold:
                    bias = e * vn                       # ġ⁺ = −e ġ⁻
            elif e > 0.0 and vn < -threshold:
                active = 0                              # a bounce waits until it touches
            else:
                bias = -depth / h                       # speculative: close the gap, no more
            touching = touching or active != 0
            plain_row(row_joint, row_rot, row_body, row_mass_scale, row_impulse_scale, r, a, b)
            row_kind[r] = ROW_LIMIT
            row_active[r] = active
            row_lo[r] = 0.0
            row_hi[r] = np.inf
            row_bias[r] = bias
            row_C[r] = min(0.0, slop - depth)
            key[q] = pair_key + ci[q, 2]
            prev = find_in_pair(prev_key, n_prev, base, key[q]) if active != 0 else -1
            if prev < 0 and active != 0:
                prev = nearest_in_pair(prev_key, prev_impulse, n_prev, base, pair_key + PATCH_FEATURE,
                                       cf[q, 0], cf[q, 1], cf[q, 2])
            row_lambda[r] = prev_impulse[prev, 0] if prev >= 0 else 0.0
            row_of[q] = r
            block_of[q] = nb
            r += 1
        n_pts = r - block_start[nb]
        if n_pts == 0:
            c = end
            continue
        # friction at the centre of the points: two tangent rows and, for a patch, a twist
        # row about n scaled by r̄ (the sliding speed at r̄: N·s like the others, torque
        # λ·r̄), in one Coulomb ball μ Σλ_n
        cx, cy, cz = cx / n_pts, cy / n_pts, cz / n_pts
        rbar = 0.0
        for q in range(c, end):
            if row_of[q] < 0:
                continue
            dx, dy, dz = cf[q, 0] - cx, cf[q, 1] - cy, cf[q, 2] - cz
            dn = dx * nx + dy * ny + dz * nz
            rbar += math.sqrt(max(dx * dx + dy * dy + dz * dz - dn * dn, 0.0))
        rbar /= n_pts
        t1x, t1y, t1z, t2x, t2y, t2z = tangents(nx, ny, nz)
        rax, ray, raz = cx - body_pos[a, 0], cy - body_pos[a, 1], cz - body_pos[a, 2]
        rbx, rby, rbz = cx - body_pos[b, 0], cy - body_pos[b, 1], cz - body_pos[b, 2]
        contact_row(row_J, r, t1x, t1y, t1z, rax, ray, raz, rbx, rby, rbz)
        contact_row(row_J, r + 1, t2x, t2y, t2z, rax, ray, raz, rbx, rby, rbz)
        nf = 2
        if n_pts > 1 and rbar > 1e-9:
            for q in range(12):
                row_J[r + 2, q] = 0.0
            row_J[r + 2, 3], row_J[r + 2, 4], row_J[r + 2, 5] = -nx * rbar, -ny * rbar, -nz * rbar
            row_J[r + 2, 9], row_J[r + 2, 10], row_J[r + 2, 11] = nx * rbar, ny * rbar, nz * rbar
            nf = 3
        patch = pair_key + PATCH_FEATURE
        buf.block_key[nb] = patch
        for s in range(r, r + nf):
            plain_row(row_joint, row_rot, row_body, row_mass_scale, row_impulse_scale, s, a, b)
            row_kind[s] = ROW_FREE
            row_active[s] = FREE_CONTACT if (touching and mu > 0.0) else FREE_OFF
            row_lo[s] = -np.inf
            row_hi[s] = mu
            row_bias[s] = 0.0
            row_C[s] = 0.0
            row_lambda[s] = 0.0
        if touching and mu > 0.0:
            prev = find_in_pair(prev_key, n_prev, base, patch)
            if prev >= 0:
                fx, fy, fz = prev_impulse[prev, 1], prev_impulse[prev, 2], prev_impulse[prev, 3]
                row_lambda[r] = fx * t1x + fy * t1y + fz * t1z
                row_lambda[r + 1] = fx * t2x + fy * t2y + fz * t2z
                if nf == 3:
                    row_lambda[r + 2] = prev_impulse[prev, 0]
        r += nf
        block_count[nb] = r - block_start[nb]
        nb += 1
        c = end
    buf.n[N_ROWS] = r
    buf.n[N_BLOCKS] = nb
    return nb


@helper(cache=True)
def plain_row(row_joint, row_rot, row_body, row_mass_scale, row_impulse_scale, r, a, b):
    """A contact row's fixed fields: no joint, translational, bodies a and b, not soft."""
    row_joint[r] = -1
    row_rot[r] = 0
    row_body[r, 0] = a
    row_body[r, 1] = b
    row_mass_scale[r] = 1.0
    row_impulse_scale[r] = 0.0


@helper(cache=True, _nrt=False)
def prepare_contacts(data, bodies, h):
    """Detection, then the contact rows: returns the number of contact blocks. A solver's
    kernel compiled with the hulls' narrow phase calls this, one compiled without it
    prepare_contacts_primitive. Compiled without reference counting and not inlined: a
    counted call, or this body inlined into a counted kernel, would count a reference to
    every array of the contact and body bundles at each substep. Only the narrow phase
    counts (it allocates its workspaces), and it runs only when some pair is near."""
    n_pairs = broad_contacts(data, bodies)
    return _found_rows(data, bodies, h, narrow_contacts(data, n_pairs) if n_pairs > 0 else 0)


@helper(cache=True, _nrt=False)
def prepare_contacts_primitive(data, bodies, h):
    """prepare_contacts for colliding bodies of which none is a hull (narrow_contacts_primitive)."""
    n_pairs = broad_contacts(data, bodies)
    return _found_rows(data, bodies, h, narrow_contacts_primitive(data, n_pairs) if n_pairs > 0 else 0)


@helper(cache=True, _nrt=False)
def _found_rows(data, bodies, h, m):
    """The rows of the m contacts found (write_contact_rows); with none, the counts zeroed."""
    if m == 0:
        data.buffers.n[N_ROWS] = 0
        data.buffers.n[N_BLOCKS] = 0
        return 0
    return write_contact_rows(data, bodies, h, m)


@helper(cache=True)
def detection_overflowed(data):
    """Whether detection found more than the buffers hold since they were last grown. A
    kernel then stops at the start of the step (before moving anything), so that its
    caller grows them (World.contacts_stepped) and does the step again with every contact:
    contacts dropped for the rest of a many-step call would let bodies fall through."""
    return data.buffers.n[N_OVERFLOW] != 0


@helper(cache=True)
def contact_views(data, work, n_blocks):
    """The contact rows as a Rows table and their scratch in the Scratch layout (views of
    data's arrays, trimmed to the rows and blocks written), so the joints' sweeps run on
    them unchanged; and the (zero) direct-solve flags of those rows."""
    r, w = data.rows, data.work
    n = data.buffers.n[N_ROWS] if n_blocks > 0 else 0
    m = n_blocks
    rows = Rows(r.joint[:n], r.kind[:n], r.rot[:n], r.body[:n], r.J[:n], r.C[:n], r.active[:n], r.lo[:n], r.hi[:n],
                r.bias[:n], r.mass_scale[:n], r.impulse_scale[:n], r.impulse[:n], r.block_start[:m],
                r.block_count[:m])
    scratch = Scratch(work.force_acc, work.torque_acc, work.pvel, work.pomega, work.inv_inertia_world, w.minv_jt[:n],
                      w.mass[:n], w.bound[:n], w.impulse_pos[:n], work.body_row_ptr, work.body_row_idx)
    return rows, scratch, w.direct[:n]


@helper(cache=True)
def keep_contact_impulses(data, n_blocks):
    """Store this substep's impulses — per point its normal impulse, per pair its friction
    impulse (a world vector) and twist — sorted by key, for the next substep's warm start."""
    buf, rows = data.buffers, data.rows
    key, prev_key, prev_impulse, row_of, cf = buf.key, buf.prev_key, buf.prev_impulse, buf.row_of, buf.cf
    row_J, row_lambda, block_start, block_count, row_kind = rows.J, rows.impulse, rows.block_start, rows.block_count, rows.kind
    m = buf.n[N_NOW] if n_blocks > 0 else 0
    if m + n_blocks == 0:
        buf.n[N_PREV] = 0                       # nothing touched: no sort
        return
    for blk in range(n_blocks):                 # the patches' keys after the points'
        key[m + blk] = buf.block_key[blk]
    order = np.argsort(key[:m + n_blocks])
    i = 0
    for o in range(m + n_blocks):
        c = order[o]
        if key[c] < 0:
            continue            # a point that made no row
        prev_key[i] = key[c]
        i += 1
        if c < m:
            prev_impulse[i - 1, 0] = row_lambda[row_of[c]]
            for q in range(3):
                prev_impulse[i - 1, 1 + q] = cf[c, q]       # where it was (nearest_in_pair)
            continue
        start = block_start[c - m]
        end = start + block_count[c - m]
        f0 = start
        while row_kind[f0] != ROW_FREE:
            f0 += 1
        prev_impulse[i - 1, 0] = row_lambda[f0 + 2] if end - f0 == 3 else 0.0
        for q in range(3):
            prev_impulse[i - 1, 1 + q] = (row_lambda[f0] * row_J[f0, 6 + q]
                                          + row_lambda[f0 + 1] * row_J[f0 + 1, 6 + q])
    buf.n[N_PREV] = i


# ---------------------------------------------------------------------------- penalty
@helper(cache=True, _nrt=False)
def row_inverse_mass(row_J, r, a, b, bodies):
    """J M⁻¹ Jᵀ of row r (world inverse inertia from the bodies' orientations)."""
    body_quat, body_inv_mass, body_inv_inertia = bodies.quat, bodies.inv_mass, bodies.inv_inertia
    k = 0.0
    for side in range(2):
        i = a if side == 0 else b
        o = 6 * side
        k += body_inv_mass[i] * (row_J[r, o] ** 2 + row_J[r, o + 1] ** 2 + row_J[r, o + 2] ** 2)
        ix, iy, iz = world_inv_inertia_times(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                             body_inv_inertia[i, 0], body_inv_inertia[i, 1],
                                             body_inv_inertia[i, 2], row_J[r, o + 3], row_J[r, o + 4],
                                             row_J[r, o + 5])
        k += row_J[r, o + 3] * ix + row_J[r, o + 4] * iy + row_J[r, o + 5] * iz
    return k


@helper(cache=True, _nrt=False)
def row_speed_after(row_J, r, a, b, bodies, force, torque, gravity, h):
    """J·V the row would have after a step of h under the forces so far and gravity."""
    body_quat, body_vel, body_omega = bodies.quat, bodies.vel, bodies.omega
    body_inv_mass, body_inv_inertia = bodies.inv_mass, bodies.inv_inertia
    s = 0.0
    for side in range(2):
        i = a if side == 0 else b
        o = 6 * side
        im = body_inv_mass[i]
        if im == 0.0:
            for q in range(3):
                s += row_J[r, o + q] * body_vel[i, q] + row_J[r, o + 3 + q] * body_omega[i, q]
            continue
        wx, wy, wz = world_inv_inertia_times(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                             body_inv_inertia[i, 0], body_inv_inertia[i, 1],
                                             body_inv_inertia[i, 2], torque[i, 0], torque[i, 1], torque[i, 2])
        s += row_J[r, o + 3] * (body_omega[i, 0] + h * wx) + row_J[r, o + 4] * (body_omega[i, 1] + h * wy)
        s += row_J[r, o + 5] * (body_omega[i, 2] + h * wz)
        for q in range(3):
            s += row_J[r, o + q] * (body_vel[i, q] + h * (im * force[i, q] + gravity[q]))
    return s


@helper(cache=True)
def penalty_contact_forces(data, bodies, h, kappa, zeta, force, torque, gravity):
    """Contact forces for the penalty family, added to force/torque (N, N·m), from the rows
    write_contact_rows made this step. Each point is a one-sided spring-damper through
    seed 000's dead zone (eq. 20-21: χ = min(0, g) with the gap g = −depth, so only
    penetration pushes): f_n = max(0, α·depth − β·ġ), α = m ω²/p, β = 2ζ m ω/p, ω = κ/Δt,
    m = 1/(1/m_a + 1/m_b) the pair's translational effective mass (as the paper preset's
    masses only) and p its point count: a resting body sinks g/ω². The tilt modes of a
    patch are at most √3 ω for a box (Σ α r² ≤ 3 ω² I), kept stable by κ ≤ 0.5. Friction at the patch centre:
    Coulomb with a velocity-level regularization — a force against the sliding velocity
    v_t the step would end with under the forces so far and gravity, of magnitude
    min(μ Σf_n, m_t |v_t|/Δt) (m_t the friction row's effective mass), so a slow slide
    stops within the step and a sticking contact holds (no creep); the twist row likewise."""
    buf, rows = data.buffers, data.rows
    body_vel, body_omega, body_inv_mass = bodies.vel, bodies.omega, bodies.inv_mass
    row_J, row_kind, row_body, row_hi = rows.J, rows.kind, rows.body, rows.hi
    block_start, block_count = rows.block_start, rows.block_count
    cf, row_of, block_of = buf.cf, buf.row_of, buf.block_of
    n_blocks = buf.n[N_BLOCKS] if buf.n[N_NOW] > 0 else 0
    w = kappa / h
    fn_sum = np.zeros(n_blocks)
    for q in range(buf.n[N_NOW]):
        r = row_of[q]
        depth = cf[q, 6]
        if r < 0 or depth <= 0.0:
            continue
        blk = block_of[q]
        start = block_start[blk]
        a, b = row_body[r, 0], row_body[r, 1]
        p = 0
        while row_kind[start + p] != ROW_FREE:
            p += 1
        k = body_inv_mass[a] + body_inv_mass[b]
        if k <= 0.0:
            continue
        me = 1.0 / (k * p)
        vn = row_velocity(row_J, r, a, b, body_vel, body_omega)
        f = max(0.0, me * w * w * depth - 2.0 * zeta * me * w * vn)
        if f > 0.0:
            scatter_row(row_J, r, a, b, f, force, torque)
            fn_sum[blk] += f
    for blk in range(n_blocks):
        start = block_start[blk]
        end = start + block_count[blk]
        f0 = start
        while row_kind[f0] != ROW_FREE:
            f0 += 1
        a, b = row_body[start, 0], row_body[start, 1]
        mu = row_hi[f0]
        if fn_sum[blk] == 0.0 or mu == 0.0:
            continue
        # the forces that would stop each friction row within the step, scaled into the
        # Coulomb ball ‖f‖ ≤ μ Σf_n
        f1 = f2 = f3 = 0.0
        norm = 0.0
        for r in range(f0, end):
            k = row_inverse_mass(row_J, r, a, b, bodies)
            f = -row_speed_after(row_J, r, a, b, bodies, force, torque, gravity, h) / (k * h) if k > 0.0 else 0.0
            norm += f * f
            if r == f0:
                f1 = f
            elif r == f0 + 1:
                f2 = f
            else:
                f3 = f
        norm = math.sqrt(norm)
        scale = min(1.0, mu * fn_sum[blk] / norm) if norm > 0.0 else 0.0
        for r in range(f0, end):
            f = f1 if r == f0 else (f2 if r == f0 + 1 else f3)
            scatter_row(row_J, r, a, b, scale * f, force, torque)


# ---------------------------------------------------------------------------- Python side
def shape_numbers(shape, table):
    """(kind code, 4 shape numbers) of a shape for physics/collision (its hulls added to the
    HullTable), or None (no collision)."""
    if getattr(shape, "kind", None) not in KIND_CODES:
        return None
    return table.numbers(shape)


def _rows_table(n_rows, n_blocks):
    f, i = np.float64, np.int64
    return Rows(np.full(n_rows, -1, i), np.zeros(n_rows, i), np.zeros(n_rows, i), np.zeros((n_rows, 2), i),
                np.zeros((n_rows, 12), f), np.zeros(n_rows, f), np.zeros(n_rows, i), np.zeros(n_rows, f),
                np.zeros(n_rows, f), np.zeros(n_rows, f), np.ones(n_rows, f), np.zeros(n_rows, f),
                np.zeros(n_rows, f), np.zeros(n_blocks, i), np.zeros(n_blocks, i))


class Contacts:
    """The World's contact settings (CONTACT_SETTINGS) and the arrays the solvers take
    (ContactData), rebuilt when bodies change and grown when contacts overflow them."""

    def __init__(self):
        self.settings = defaults(CONTACT_SETTINGS)
        self._data = None
        self._layout = None         # (model version, contact-property edits) the data was built for
        self.edits = 0              # bumped when a body's friction, restitution or collide changes
        self.apart = []             # body-index pairs that never touch, besides the joined ones
        self._hulls = False         # some colliding body of the data is a hull
        self._robot = False         # the kernels compile the hulls' narrow phase and the couplings
        self._table = None          # the hull table's arrays (collision/hulls.py)
        self._with_table = None     # the data with them, for a kernel with the robots' features

    def configure(self, **values):
        self.settings.update(checked(CONTACT_SETTINGS, values, "contacts"))
        if self._data is not None:
            self._pack(self._data.shapes.settings)

    def _pack(self, out):
        s = self.settings
        out[:] = (1.0 if s["enabled"] else 0.0, s["margin"], s["slop"], s["restitution_threshold"])

    def data(self, world, robot=None):
        """The ContactData of the world's bodies (cached); robot: for a kernel with the
        robots' features (robot_features), which takes the hull table even when no hull
        collides (the same data with ContactShapes.hulls filled in; default: whether the
        world has them)."""
        layout = (world.model.version, self.edits)
        if self._data is None or self._layout != layout:
            self._data = self._build(world, None)
            self._layout = layout
        if robot and not self._robot:
            if self._with_table is None or self._with_table.buffers is not self._data.buffers:
                self._with_table = self._data._replace(shapes=self._data.shapes._replace(hulls=self._table))
            return self._with_table
        return self._data

    def hulls(self, world):
        """Whether some colliding body is a hull (kind CONVEX or COMPOUND): the solver
        kernels' HULLS feature (compiled with collision/narrow.narrow_phase, else with
        narrow_phase_primitive). Follows the data: a body added or its collide flag
        changed counts at the next step."""
        self.data(world)
        return self._hulls

    def robot_features(self, world):
        """World.robot_features: a colliding hull or a coupling between joints. The data
        then carries the hull table, else none (ContactShapes.hulls None)."""
        self.data(world)
        return self._robot

    def grow_if_needed(self, world):
        """After a kernel: grow the buffers if detection overflowed them; returns whether
        it did (the kernel stopped early: the caller runs the remaining steps)."""
        d = self._data
        if d is not None and d.buffers.n[N_OVERFLOW]:
            self._data = self._build(world, d)
            return True
        return False

    def _build(self, world, old, room=None):
        """The ContactData of the world's bodies; `old`: the data it replaces (its warm
        start is kept, its buffers doubled); `room`: (pairs, contacts) buffer sizes to use."""
        mb = world.model.bodies
        info = world.model.body_info
        index, kinds, sizes = [], [], []
        table = HullTable(boxes=has_solids(b.shape for b in info))
        for i in range(1, mb.count):        # body 0, the static world, never collides
            if not mb.collide[i]:
                continue
            shape = shape_numbers(info[i].shape, table)
            if shape is None:
                continue
            index.append(i)
            kinds.append(shape[0])
            sizes.append(shape[1])
        k = len(index)
        self._hulls = CONVEX in kinds or COMPOUND in kinds
        self._robot = self._hulls or world.model.couplings.count > 0
        self._table = table.arrays()
        index = np.array(index, np.int64)
        compact = np.full(mb.count, -1, np.int64)
        compact[index] = np.arange(k)
        joined = np.concatenate([np.asarray(world.model.joints.body, np.int64).reshape(-1, 2),
                                 np.array(self.apart, np.int64).reshape(-1, 2)])
        pairs = compact[joined] if len(joined) else np.zeros((0, 2), np.int64)
        pairs = pairs[(pairs >= 0).all(axis=1)] if len(pairs) else pairs
        static = (mb.inv_mass[index] == 0.0) if k else np.zeros(0, bool)
        settings = np.zeros(4)
        self._pack(settings)
        shapes = ContactShapes(index, np.array(kinds, np.int64), np.array(sizes).reshape(k, 4),
                               np.ascontiguousarray(static, dtype=np.bool_),
                               mb.friction[index].copy(), mb.restitution[index].copy(),
                               joined_keys(pairs, max(k, 1)), settings, self._table if self._robot else None)
        n_pairs, n_contacts = 8 * k + 16, 2 * k + 8        # grown when they overflow
        if old is not None and old.shapes.body.shape[0] == k:
            count = old.buffers.count
            n_pairs = max(old.buffers.pairs.shape[0], 2 * len(old.buffers.pairs))
            n_contacts = max(2 * old.buffers.ci.shape[0], 2 * int(count[0] + count[1]))
        if room is not None:
            n_pairs, n_contacts = room
        i64 = np.int64
        table = np.zeros((k, BODY_WIDTH))
        table[:, 7:11] = shapes.size                        # collision.pack_bodies' layout
        first = np.zeros(k + 1, i64)
        joined_starts(shapes.skip_keys, k, first)
        buf = ContactBuffers(table, first, np.zeros((k, 6)), np.zeros(k), np.zeros(k, i64), np.zeros((n_pairs, 2), i64),
                             np.zeros((n_contacts, 3), i64), np.zeros((n_contacts, 7)), np.zeros(2, i64),
                             np.zeros(2 * n_contacts, i64), np.zeros(n_contacts, i64), np.zeros(n_contacts, i64),
                             np.zeros(n_contacts, i64),
                             np.zeros(2 * n_contacts, i64), np.zeros((2 * n_contacts, 4)), np.zeros(6, i64))
        if old is not None and old.shapes.body.shape[0] == k:     # keep the warm start
            n_prev = int(old.buffers.n[N_PREV])
            buf.prev_key[:n_prev] = old.buffers.prev_key[:n_prev]
            buf.prev_impulse[:n_prev] = old.buffers.prev_impulse[:n_prev]
            buf.n[N_PREV] = n_prev
        n_rows = 3 * n_contacts
        work = ContactWork(np.zeros((n_rows, 12)), np.zeros(n_rows), np.zeros(n_rows), np.zeros(n_rows),
                           np.zeros(n_rows, np.int64), np.zeros((n_contacts, BLOCK_NUMBERS)), np.zeros((mb.count, 6)),
                           np.zeros((n_rows, 5)), np.zeros((mb.count, 3), np.int64))
        return ContactData(shapes, buf, _rows_table(n_rows, n_contacts), work)

    def save(self, world):
        """The warm-start memory (part of the state: a replay from a saved state repeats,
        in this World or a fresh one), in a layout that stays the same from step to step
        (the timeline packs states into fixed rows): (the colliding bodies, the buffers'
        room for pairs, count, keys, impulses at the buffers' size)."""
        d = self.data(world)
        b = d.buffers
        return (d.shapes.body.copy(), int(b.pairs.shape[0]), int(b.n[N_PREV]), b.prev_key.copy(),
                b.prev_impulse.copy())

    def restore(self, world, saved):
        """Back to saved warm-start memory, the buffers resized to the saved ones (a fresh
        World's are smaller than those of one that has run: the warm start must fit); a
        memory of other colliding bodies is dropped (the next step starts cold)."""
        d = self.data(world)
        if saved is None or not np.array_equal(saved[0], d.shapes.body):
            d.buffers.n[N_PREV] = 0
            return
        room = (int(saved[1]), len(saved[3]) // 2)
        if room != (d.buffers.pairs.shape[0], d.buffers.ci.shape[0]):
            self._data = d = self._build(world, None, room)
        b = d.buffers
        b.prev_key[:] = saved[3]
        b.prev_impulse[:] = saved[4]
        b.n[N_PREV] = saved[2]

    def current(self, world):
        """The contacts of the last substep, as plain arrays: bodies (m,2) World indices,
        point (m,3) (on b's surface), normal (m,3) from a to b, depth (m,) m, normal impulse
        (m,) N·s on b, friction impulse (m,3) N·s on b (a world vector: its pair's friction,
        shared evenly by the pair's points)."""
        d = self._data
        m = 0 if d is None else int(d.buffers.n[N_NOW])
        if m == 0 or d.buffers.n[N_BLOCKS] == 0:
            z = np.zeros((0, 3))
            return {"bodies": np.zeros((0, 2), np.int64), "point": z, "normal": z.copy(), "depth": np.zeros(0),
                    "normal_impulse": np.zeros(0), "friction_impulse": z.copy()}
        b, rows = d.buffers, d.rows
        nb = int(b.n[N_BLOCKS])
        kept = np.flatnonzero(b.row_of[:m] >= 0)       # the points that made rows
        row, block = b.row_of[kept], b.block_of[kept]
        friction = np.zeros((nb, 3))
        for blk in range(nb):       # a few per pair: for viewers and tests, not the step
            start, count = rows.block_start[blk], rows.block_count[blk]
            f0 = start + int(np.sum(rows.kind[start:start + count] != ROW_FREE))
            friction[blk] = rows.impulse[f0] * rows.J[f0, 6:9] + rows.impulse[f0 + 1] * rows.J[f0 + 1, 6:9]
        points = np.bincount(block, minlength=nb)
        body = d.shapes.body
        return {"bodies": np.column_stack([body[b.ci[kept, 0]], body[b.ci[kept, 1]]]), "point": b.cf[kept, 0:3],
                "normal": b.cf[kept, 3:6], "depth": b.cf[kept, 6],
                "normal_impulse": rows.impulse[row].copy(), "friction_impulse": friction[block] / points[block, None]}
