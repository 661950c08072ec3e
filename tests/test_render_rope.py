"""Ropes drawn as skinned tubes: checked on pixels (headless EGL) and on the skinned
vertices themselves (transform feedback)."""
import numpy as np
import pytest

import physics
from physics.quat import q_mul
from physics.rope import Rope
from render.camera import OrbitCamera
from render.frame import RenderTarget
from render.offscreen import egl_context
from physics.rope import frames_along
from render.rope_mesh import _source, bone_texels, bone_texture_size, tube
from render.scene_renderer import LIGHT_DIR, SceneRenderer

W, H = 320, 240
_TARGET = []          # one render target for the module, never released (see offscreen.py)


def _world(bodies=()):
    w = physics.World()
    w.add_body("ground", physics.Plane(), static=True, color=(0.6, 0.6, 0.6))
    for name, shape, pos, color in bodies:
        w.add_body(name, shape, mass=1.0, position=pos, color=color)
    return w


def _entry(positions, frames, name="rope", radius=0.05, color=(0.9, 0.15, 0.1), **extra):
    return {"name": name, "radius": radius, "color": color, "positions": np.array(positions, float),
            "frames": np.array(frames, float), **extra}


def _snap(world, ropes):
    snap = world.snapshot()
    if ropes is not None:
        snap["ropes"] = ropes
    return snap


def _render(snap, cam, shadows=True, renderer=None):
    """RGB image of a snapshot; with `renderer`, draw with that (kept) SceneRenderer."""
    ctx = egl_context()
    with ctx:
        if not _TARGET:
            _TARGET.append(RenderTarget(ctx, (W, H)))
        target = _TARGET[0]
        own = renderer is None
        r = SceneRenderer(ctx, snap) if own else renderer
        r.shadows = shadows
        try:
            r.draw(snap, cam, (W, H), target.msaa)
            target.resolve()
            rgb = target.pixels()
            assert ctx.error == "GL_NO_ERROR"
        finally:
            if own:
                r.release()
    return rgb


def _pixel(rgb, cam, point):
    x, y = cam.project(point, W, H)
    return rgb[int(round(y)), int(round(x))].astype(float)


def _near_polyline(cam, points, width):
    """Pixels within `width` px of the rope's projected centreline."""
    xy = np.array([cam.project(q, W, H) for q in points])
    py, px = np.mgrid[0:H, 0:W]
    pix = np.stack([px.ravel(), py.ravel()], axis=1).astype(float)
    near = np.zeros(len(pix), bool)
    for a, b in zip(xy[:-1], xy[1:]):
        d = b - a
        t = np.clip((pix - a) @ d / max(d @ d, 1e-12), 0.0, 1.0)
        near |= np.linalg.norm(pix - (a + t[:, None] * d), axis=1) <= width
    return near.reshape(H, W)


def _straight(start=(-1.0, 0.0, 1.0), end=(1.0, 0.0, 1.0), segments=28):
    s = Rope.straight(start=start, end=end, segments=segments).snapshot()
    return s.positions, s.frames


def _twist(frames, total):
    """Frames turned about their own d3 by an angle growing from 0 to `total` along the rope."""
    ang = np.linspace(0.0, total, len(frames))
    spin = np.column_stack([np.zeros((len(ang), 2)), np.sin(ang / 2), np.cos(ang / 2)])
    return np.array([q_mul(f, r) for f, r in zip(frames, spin)])


def test_rope_colour_appears_where_the_rope_projects():
    p, f = _straight()
    cam = OrbitCamera()
    cam.look((0.0, -4.0, 1.2), (0.0, 0.0, 1.0))
    rgb = _render(_snap(_world(), [_entry(p, f)]), cam)
    for x in (-0.7, 0.0, 0.7):
        r, g, b = _pixel(rgb, cam, (x, -0.05, 1.0))          # the rope's side facing the camera
        assert r > 2.0 * g and r > 2.0 * b
        r, g, b = _pixel(rgb, cam, (x, 0.0, 1.35))           # above it: background
        assert not (r > 2.0 * g and r > 2.0 * b)
    plain = _render(_snap(_world(), None), cam)
    assert np.array_equal(plain, _render(_snap(_world(), []), cam))      # no key / empty list: nothing
    x0, y0 = cam.project((-1.0, 0.0, 1.0), W, H)
    changed = np.any(plain != rgb, axis=2)[int(y0) - 15:int(y0) + 15]    # rows about the rope (not its shadow)
    cols = np.nonzero(changed.any(axis=0))[0]
    x1, _ = cam.project((1.0, 0.0, 1.0), W, H)
    assert cols.min() > x0 - 12 and cols.max() < x1 + 12     # the tube spans the rope, ends capped


def test_mesh_follows_the_rope_as_it_swings():
    rope = Rope.straight(start=(0.0, 0.0, 1.6), direction=(1.0, 0.0, 0.0), length=1.2, segments=28)
    rope.attach_world(0)
    world = _world()
    cam = OrbitCamera()
    cam.look((0.4, -4.0, 1.0), (0.4, 0.0, 1.0))
    renderer = None

    def frame():
        s = rope.snapshot()
        return _snap(world, [_entry(s.positions, s.frames, radius=0.03)]), s.positions

    snap0, pos0 = frame()
    ctx = egl_context()
    with ctx:
        renderer = SceneRenderer(ctx, snap0)
    try:
        before = _render(snap0, cam, shadows=False, renderer=renderer)
        rope.advance(0.25, 0.005)
        snap1, pos1 = frame()
        after = _render(snap1, cam, shadows=False, renderer=renderer)
        empty = _render(_snap(world, []), cam, shadows=False, renderer=renderer)
    finally:
        with ctx:
            renderer.release()
    assert np.linalg.norm(pos1[-1] - pos0[-1]) > 0.3                     # it did swing
    radius_px = 0.03 * (H / 2) / np.tan(np.radians(cam.fov) / 2) / 3.5    # at ≥ 3.5 m from the eye
    region = _near_polyline(cam, pos0, radius_px + 3) | _near_polyline(cam, pos1, radius_px + 3)
    moved = np.any(before != after, axis=2)
    assert moved.sum() > 200
    assert not np.any(moved & ~region)                                    # nothing else changed
    assert np.array_equal(before[~region], empty[~region])                # nor is drawn elsewhere
    for k in (7, 14, 21, 28):                                             # the tube is where the nodes are
        for rgb, pos in ((before, pos0), (after, pos1)):
            r, g, b = _pixel(rgb, cam, pos[k] + (0.0, -0.02, 0.0))
            assert r > 2.0 * g and r > 2.0 * b, k


def test_twist_turns_the_stripe_round_the_rope():
    p, f = _straight()
    cam = OrbitCamera()
    cam.look((0.0, -0.05, 4.0), (0.0, 0.0, 1.0))      # from above: d1 (the band) faces up
    world = _world()
    light = (0.95, 0.85, 0.25)

    def stripe_rows(frames):
        """Per image column along the rope: mean row of the band (pixels that change when
        the band takes the rope's own colour), minus the rope's centre row."""
        with_band = _render(_snap(world, [_entry(p, frames, radius=0.06, color=light)]), cam)
        no_band = _render(_snap(world, [_entry(p, frames, radius=0.06, color=light, stripe_color=light)]), cam)
        band = np.any(with_band != no_band, axis=2)
        out = []
        for x in np.linspace(-0.85, 0.85, 9):
            col, centre = cam.project((x, 0.0, 1.0), W, H)
            rows = np.nonzero(band[:, int(round(col))])[0]
            out.append(rows.mean() - centre if len(rows) else np.nan)
        return np.array(out)

    straight = stripe_rows(f)
    twisted = stripe_rows(_twist(f, np.pi / 2))
    radius_px = abs(cam.project((0.0, 0.06, 1.0), W, H)[1] - cam.project((0.0, 0.0, 1.0), W, H)[1])
    assert np.all(np.abs(straight) < 0.25 * radius_px)            # untwisted: the band stays on top
    assert abs(twisted[0]) < 0.25 * radius_px                     # twisted: same at the start …
    assert abs(twisted[-1]) > 0.6 * radius_px                     # … turned to the side at the end
    assert np.all(np.diff(np.abs(twisted)) > -1.0)                # moving steadily round the rope


def test_rope_casts_a_shadow_on_the_ground():
    p, f = _straight()
    mid = np.array([0.0, 0.0, 1.0])
    q = mid + LIGHT_DIR * (mid[2] / -LIGHT_DIR[2])                # the ground under the rope, along the light
    cam = OrbitCamera()
    cam.look(q + np.array([0.0, 3.0, 3.0]), q)
    snap = _snap(_world(), [_entry(p, f, radius=0.05, color=(0.8, 0.8, 0.8))])
    lit = _render(snap, cam, shadows=False)
    shaded = _render(snap, cam, shadows=True)
    assert _pixel(shaded, cam, q).sum() < 0.75 * _pixel(lit, cam, q).sum()
    far = q + np.array([0.0, 0.6, 0.0])
    assert _pixel(shaded, cam, far).sum() == pytest.approx(_pixel(lit, cam, far).sum(), rel=0.05)


def test_mesh_is_rebuilt_when_the_rope_is_rediscretized_and_released_when_gone():
    rope = Rope.straight(start=(-1.0, 0.0, 1.0), end=(1.0, 0.0, 1.0), segments=28)
    world = _world([("box", physics.Box((0.2, 0.2, 0.2)), (0.0, 0.8, 0.2), (0.2, 0.4, 0.9))])
    cam = OrbitCamera()
    cam.look((0.0, -4.0, 1.2), (0.0, 0.0, 1.0))
    ctx = egl_context()
    with ctx:
        renderer = SceneRenderer(ctx, world.snapshot())
    try:
        s = rope.snapshot()
        a = _render(_snap(world, [_entry(s.positions, s.frames)]), cam, renderer=renderer)
        assert renderer.ropes.meshes["rope"].n_elements == 28
        rope.segments = 40
        s = rope.snapshot()
        b = _render(_snap(world, [_entry(s.positions, s.frames)]), cam, renderer=renderer)
        assert renderer.ropes.meshes["rope"].n_elements == 40
        assert np.mean(np.abs(a.astype(int) - b.astype(int)).max(axis=2) > 40) < 0.002   # same rope, new mesh
        c = _render(_snap(world, []), cam, renderer=renderer)
        assert renderer.ropes.meshes == {}
        assert np.any(np.any(a != c, axis=2))
    finally:
        with ctx:
            renderer.release()


def _skinned_vertices(positions, frames, radius):
    """World positions of every tube vertex as the vertex shader computes them."""
    ctx = egl_context()
    with ctx:
        verts, _ = tube(len(frames))
        prog = ctx.program(vertex_shader=_source("rope.vert"), varyings=["v_world"])
        vbo = ctx.buffer(verts.tobytes())
        out = ctx.buffer(reserve=len(verts) * 12)
        vao = ctx.vertex_array(prog, [(vbo, "1f 3f 4x", "in_u", "in_offset")])
        width, height = bone_texture_size(len(frames))          # the renderer's layout
        texels = np.zeros((width * height, 4), np.float32)
        texels[:3 * len(frames)] = bone_texels(positions, frames).reshape(-1, 4)
        tex = ctx.texture((width, height), 4, texels.tobytes(), dtype="f4")
        tex.use(location=1)
        prog["u_bones"].value = 1
        prog["u_n_bones"].value = len(frames)
        prog["u_radius"].value = radius
        try:
            vao.transform(out, vertices=len(verts))
            world = np.frombuffer(out.read(), np.float32).reshape(-1, 3).astype(float)
            assert ctx.error == "GL_NO_ERROR"
        finally:
            for obj in (vao, vbo, out, tex, prog):
                obj.release()
    return verts, world


def test_strong_twist_keeps_the_tube_round():
    # neighbouring elements 150° apart about the axis: linear blend skinning would pinch the
    # tube to r·cos 75° ≈ 0.26 r at every node; dual quaternions keep it round
    p, f = _straight(segments=12)
    spin = np.radians(150.0) * np.arange(len(f))
    f = np.array([q_mul(q, (0.0, 0.0, np.sin(a / 2), np.cos(a / 2))) for q, a in zip(f, spin)])
    verts, world = _skinned_vertices(p, f, 0.05)
    f[1::2] *= -1.0                                 # q and −q are the same frame: signs must not matter
    assert np.allclose(_skinned_vertices(p, f, 0.05)[1], world, atol=1e-5)
    body = verts[:, 3] == 0.0                       # tube rings (not the caps)
    dist = np.linalg.norm(world[body][:, 1:] - (0.0, 1.0), axis=1) / 0.05     # from the axis y = 0, z = 1
    assert dist.min() > 0.97 and dist.max() < 1.03
    assert np.allclose(world[body][:, 0], p[0, 0] + verts[body][:, 0] * (2.0 / 12), atol=1e-4)


def test_node_rings_are_centred_on_the_nodes_of_a_bent_rope():
    rope = Rope.straight(start=(0.0, 0.0, 1.6), direction=(1.0, 0.0, 0.0), length=1.2, segments=20)
    rope.attach_world(0)
    rope.advance(0.3, 0.005)
    s = rope.snapshot()
    verts, world = _skinned_vertices(s.positions, s.frames, 0.03)
    for j in range(21):
        ring = np.nonzero((verts[:, 0] == j) & (verts[:, 3] == 0.0))[0]
        ring = ring[np.unique(np.round(verts[ring, 1:3], 5), axis=0, return_index=True)[1]]  # 16 angles
        assert np.linalg.norm(world[ring].mean(axis=0) - s.positions[j]) < 0.006, j
        d = np.linalg.norm(world[ring] - s.positions[j], axis=1)
        assert d.min() > 0.8 * 0.03 and d.max() < 1.2 * 0.03, j


def test_long_rope_bones_wrap_over_texture_rows():
    n = 600                                            # 1800 bone texels: two texture rows
    assert bone_texture_size(n)[1] == 2
    ang = np.linspace(0.0, 1.5 * np.pi, n + 1)
    p = np.column_stack([np.cos(ang), np.sin(ang), 1.0 + 0.2 * ang])      # a helix
    verts, world = _skinned_vertices(p, frames_along(p), 0.01)
    for j in (0, 1, 341, 342, 343, 599, 600):           # either side of the row break (texel 1024)
        ring = np.nonzero((verts[:, 0] == j) & (verts[:, 3] == 0.0))[0]
        d = np.linalg.norm(world[ring] - p[j], axis=1)
        assert d.min() > 0.9 * 0.01 and d.max() < 1.1 * 0.01, j
