"""Box–box contact: the separating axis test over the 15 axes (3 face normals of each box,
9 edge–edge cross products), then, for a face axis, the incident face clipped against the
reference face (Sutherland–Hodgman, as in Box2D / Bullet / ODE's dBoxBox; a corner within
SIDE_SLACK outside a side plane counts as inside), up to 8 points
reduced to 4; for an edge axis, the closest points of the two edges (1 point).

Feature ids. Face contact: ((ref·6 + ref_face)·6 + incident_face)·36 + vertex, with ref 0
when the reference face is a's, 1 when b's, faces numbered axis·2 + (1 for the + side), and
vertex 0–3 an incident face corner, 4 + 4·edge + plane an incident edge cut by a reference
side plane, 20 + 4·plane₁ + plane₂ a reference face corner (two side planes). Edge contact:
3000 + 12·edge_a + edge_b, an edge numbered axis·4 + the signs of the other two coordinates.
"""
import math

import numpy as np
from ..jit import helper

from ..quat import frame_axes
from .common import JIT, JIT_NO_REFS, PAR, QUAT, SIDE_SLACK, add_candidate, clip_crossing, clip_keep, flush_manifold

REL_TOL = 0.05   # an axis replaces a face of a only if its separation is larger by 5 % of |s|
ABS_TOL = 1e-5   # plus this (m): faces are preferred, and the choice does not flicker (Box2D's rule)


@helper(**JIT)
def _load_box(f, slot, body, i):
    """Box i's axes into f[slot, k, 0:3] and its half extents into f[slot, k, 3]."""
    r00, r10, r20, r01, r11, r21, r02, r12, r22 = frame_axes(body[i, QUAT], body[i, QUAT + 1], body[i, QUAT + 2],
                                                             body[i, QUAT + 3])
    f[slot, 0, 0], f[slot, 0, 1], f[slot, 0, 2] = r00, r10, r20
    f[slot, 1, 0], f[slot, 1, 1], f[slot, 1, 2] = r01, r11, r21
    f[slot, 2, 0], f[slot, 2, 1], f[slot, 2, 2] = r02, r12, r22
    for k in range(3):
        f[slot, k, 3] = body[i, PAR + k]


@helper(**JIT)
def _dot_axis(f, slot, k, x, y, z):
    return f[slot, k, 0] * x + f[slot, k, 1] * y + f[slot, k, 2] * z


@helper(**JIT)
def _clip_id(label, plane):
    """Vertex id of the point where the polygon edge with `label` crosses side `plane`."""
    if label < 4:
        return 4 + 4 * label + plane
    return 20 + 4 * (label - 4) + plane


@helper(**JIT_NO_REFS)
def box_box(body, a, b, margin, sp, sf, poly, tags, F, C, ci, cf, count):
    """Contacts of boxes a and b (see the module docstring). Workspaces: sp, sf the manifold
    candidates, poly (2,16,3) and tags (2,16,2) (edge label, vertex id) the clipping
    polygons, F (2,3,4) the boxes' axes and half extents, C (3,3) C[i, j] = a_i · b_j."""
    _load_box(F, 0, body, a)
    _load_box(F, 1, body, b)
    dx = body[b, 0] - body[a, 0]
    dy = body[b, 1] - body[a, 1]
    dz = body[b, 2] - body[a, 2]
    for i in range(3):
        for j in range(3):
            C[i, j] = F[0, i, 0] * F[1, j, 0] + F[0, i, 1] * F[1, j, 1] + F[0, i, 2] * F[1, j, 2]
    # face axes of a, then of b: separation |d·n| − (projected radii)
    sa, ia = -math.inf, np.int64(0)      # typed, not literals: _face_contact compiles once
    for i in range(3):
        sep = abs(_dot_axis(F, 0, i, dx, dy, dz)) - (F[0, i, 3] + F[1, 0, 3] * abs(C[i, 0]) + F[1, 1, 3] * abs(C[i, 1])
                                                       + F[1, 2, 3] * abs(C[i, 2]))
        if sep > margin:
            return
        if sep > sa:
            sa, ia = sep, i
    sb, ib = -math.inf, np.int64(0)
    for j in range(3):
        sep = abs(_dot_axis(F, 1, j, dx, dy, dz)) - (F[1, j, 3] + F[0, 0, 3] * abs(C[0, j]) + F[0, 1, 3] * abs(C[1, j])
                                                       + F[0, 2, 3] * abs(C[2, j]))
        if sep > margin:
            return
        if sep > sb:
            sb, ib = sep, j
    # edge axes a_i × b_j
    se, ei, ej = -math.inf, np.int64(-1), np.int64(-1)     # typed, not literals: one compile of the callees
    ex = ey = ez = 0.0
    for i in range(3):
        for j in range(3):
            lx = F[0, i, 1] * F[1, j, 2] - F[0, i, 2] * F[1, j, 1]
            ly = F[0, i, 2] * F[1, j, 0] - F[0, i, 0] * F[1, j, 2]
            lz = F[0, i, 0] * F[1, j, 1] - F[0, i, 1] * F[1, j, 0]
            ln = math.sqrt(lx * lx + ly * ly + lz * lz)
            if ln < 1e-6:
                continue                       # parallel edges: covered by the face axes
            lx, ly, lz = lx / ln, ly / ln, lz / ln
            ra = rb = 0.0
            for k in range(3):
                ra += F[0, k, 3] * abs(_dot_axis(F, 0, k, lx, ly, lz))
                rb += F[1, k, 3] * abs(_dot_axis(F, 1, k, lx, ly, lz))
            sep = abs(dx * lx + dy * ly + dz * lz) - ra - rb
            if sep > margin:
                return
            if sep > se:
                se, ei, ej = sep, i, j
                ex, ey, ez = lx, ly, lz
    face_sep = sa
    ref = 0
    if sb > sa + REL_TOL * abs(sa) + ABS_TOL:
        face_sep, ref = sb, 1
    if ei >= 0 and se > face_sep + REL_TOL * abs(face_sep) + ABS_TOL:
        _edge_contact(body, a, b, F, sp, sf, ci, cf, count, ei, ej, ex, ey, ez, se)
        return
    _face_contact(body, a, b, margin, sp, sf, poly, tags, F, ci, cf, count, ref, ia if ref == 0 else ib)


@helper(**JIT)
def _edge_point(F, slot, skip, toward, lx, ly, lz, px, py, pz):
    """The centre of the box's edge along axis `skip` that lies furthest along toward·L
    (the box's centre px, py, pz moved by ±half extent along the two other axes), and the
    corner-sign code of that edge (bit set where the sign is +)."""
    code = 0
    bit = 0
    for k in range(3):
        if k == skip:
            continue
        sg = toward if _dot_axis(F, slot, k, lx, ly, lz) >= 0.0 else -toward
        if sg > 0.0:
            code += 1 << bit
        px += sg * F[slot, k, 3] * F[slot, k, 0]
        py += sg * F[slot, k, 3] * F[slot, k, 1]
        pz += sg * F[slot, k, 3] * F[slot, k, 2]
        bit += 1
    return px, py, pz, code


@helper(**JIT_NO_REFS)
def _edge_contact(body, a, b, F, sp, sf, ci, cf, count, i, j, lx, ly, lz, sep):
    """One point: the closest points of a's edge along a_i and b's edge along b_j that are
    extreme along the axis L = a_i × b_j (oriented from a to b); depth = −separation."""
    dx = body[b, 0] - body[a, 0]
    dy = body[b, 1] - body[a, 1]
    dz = body[b, 2] - body[a, 2]
    if dx * lx + dy * ly + dz * lz < 0.0:
        lx, ly, lz = -lx, -ly, -lz
    # a's edge: the corner signs towards b; b's edge: towards a
    pax, pay, paz, code_a = _edge_point(F, 0, i, 1.0, lx, ly, lz, body[a, 0], body[a, 1], body[a, 2])
    pbx, pby, pbz, code_b = _edge_point(F, 1, j, -1.0, lx, ly, lz, body[b, 0], body[b, 1], body[b, 2])
    ux, uy, uz = F[0, i, 0], F[0, i, 1], F[0, i, 2]
    vx, vy, vz = F[1, j, 0], F[1, j, 1], F[1, j, 2]
    rx, ry, rz = pax - pbx, pay - pby, paz - pbz
    c = ux * vx + uy * vy + uz * vz
    ur = ux * rx + uy * ry + uz * rz
    vr = vx * rx + vy * ry + vz * rz
    den = max(1.0 - c * c, 1e-12)
    t_a = (c * vr - ur) / den                  # minimises |r + t_a u − t_b v|²
    t_a = min(max(t_a, -F[0, i, 3]), F[0, i, 3])
    t_b = min(max(vr + t_a * c, -F[1, j, 3]), F[1, j, 3])
    emit_x, emit_y, emit_z = pbx + t_b * vx, pby + t_b * vy, pbz + t_b * vz
    m = add_candidate(sp, sf, 0, emit_x, emit_y, emit_z, -sep, 3000 + 12 * (4 * i + code_a) + 4 * j + code_b)
    flush_manifold(sp, sf, m, a, b, lx, ly, lz, ci, cf, count)


@helper(**JIT_NO_REFS)
def _face_contact(body, a, b, margin, sp, sf, poly, tags, F, ci, cf, count, ref, r_ax):
    """Reference face: box `ref` (0 = a, 1 = b), axis r_ax, the side facing the other box.
    Incident face: the other box's face most anti-parallel to it. The incident quad, in the
    reference box's frame, is clipped by the reference face's 4 side planes; the points
    below the reference face plus the margin are kept, depth = their distance below it."""
    dx, dy, dz = body[b, 0] - body[a, 0], body[b, 1] - body[a, 1], body[b, 2] - body[a, 2]
    inc = 1 - ref
    b_ref = a if ref == 0 else b
    b_inc = b if ref == 0 else a
    # outward normal of the reference face, towards the incident box
    toward = 1.0 if ref == 0 else -1.0        # d points from a to b
    proj = toward * _dot_axis(F, ref, r_ax, dx, dy, dz)
    r_sg = 1.0 if proj >= 0.0 else -1.0
    nrx, nry, nrz = r_sg * F[ref, r_ax, 0], r_sg * F[ref, r_ax, 1], r_sg * F[ref, r_ax, 2]
    # incident face
    k_ax, best, dk = 0, -1.0, 0.0
    for k in range(3):
        dot = _dot_axis(F, inc, k, nrx, nry, nrz)
        if abs(dot) > best:
            k_ax, best, dk = k, abs(dot), dot
    i_sg = -1.0 if dk >= 0.0 else 1.0
    u, v = (k_ax + 1) % 3, (k_ax + 2) % 3
    fcx = body[b_inc, 0] + i_sg * F[inc, k_ax, 3] * F[inc, k_ax, 0]
    fcy = body[b_inc, 1] + i_sg * F[inc, k_ax, 3] * F[inc, k_ax, 1]
    fcz = body[b_inc, 2] + i_sg * F[inc, k_ax, 3] * F[inc, k_ax, 2]
    crx, cry, crz = body[b_ref, 0], body[b_ref, 1], body[b_ref, 2]
    for q in range(4):
        su = 1.0 if (q == 0 or q == 3) else -1.0
        sv = 1.0 if q < 2 else -1.0
        px = fcx + su * F[inc, u, 3] * F[inc, u, 0] + sv * F[inc, v, 3] * F[inc, v, 0] - crx
        py = fcy + su * F[inc, u, 3] * F[inc, u, 1] + sv * F[inc, v, 3] * F[inc, v, 1] - cry
        pz = fcz + su * F[inc, u, 3] * F[inc, u, 2] + sv * F[inc, v, 3] * F[inc, v, 2] - crz
        for c in range(3):
            poly[0, q, c] = _dot_axis(F, ref, c, px, py, pz)
        tags[0, q, 0] = q
        tags[0, q, 1] = q
    # Sutherland–Hodgman against the side planes ±x_ru ≤ e_ru, ±x_rv ≤ e_rv
    ru, rv = (r_ax + 1) % 3, (r_ax + 2) % 3
    cnt, src = 4, 0
    for plane in range(4):
        ax = ru if plane < 2 else rv
        sg = 1.0 if plane % 2 == 0 else -1.0
        lim = F[ref, ax, 3]
        dst = 1 - src
        m = 0
        for q in range(cnt):
            qn = q + 1 if q + 1 < cnt else 0
            dp = sg * poly[src, q, ax] - lim
            dq = sg * poly[src, qn, ax] - lim
            p_in, q_in = dp <= SIDE_SLACK, dq <= SIDE_SLACK
            if p_in != q_in and min(dp, dq) <= 0.0:        # (a corner within the slack stands for the crossing)
                clip_crossing(poly, src, dst, q, qn, m, dp / (dp - dq))
                tags[dst, m, 1] = _clip_id(tags[src, q, 0], plane)
                tags[dst, m, 0] = 4 + plane if p_in else tags[src, q, 0]
                m += 1
            if q_in:
                clip_keep(poly, tags, src, dst, qn, m)
                m += 1
        cnt, src = m, dst
        if cnt == 0:
            return
    # keep the points below the reference face (plus the margin)
    if ref == 0:
        nx, ny, nz = nrx, nry, nrz
    else:
        nx, ny, nz = -nrx, -nry, -nrz
    base = ((ref * 6 + 2 * r_ax + (1 if r_sg > 0.0 else 0)) * 6 + 2 * k_ax + (1 if i_sg > 0.0 else 0)) * 36
    n_pts = 0
    for q in range(cnt):
        sep = r_sg * poly[src, q, r_ax] - F[ref, r_ax, 3]
        if sep >= margin:
            continue
        wx, wy, wz = crx, cry, crz
        for c in range(3):
            wx += poly[src, q, c] * F[ref, c, 0]
            wy += poly[src, q, c] * F[ref, c, 1]
            wz += poly[src, q, c] * F[ref, c, 2]
        if ref == 1:
            # the incident point is on a: its partner on b's (reference) face
            wx, wy, wz = wx - sep * nrx, wy - sep * nry, wz - sep * nrz
        n_pts = add_candidate(sp, sf, n_pts, wx, wy, wz, -sep, base + tags[src, q, 1])
    flush_manifold(sp, sf, n_pts, a, b, nx, ny, nz, ci, cf, count)
