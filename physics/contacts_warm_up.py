"""The hulls' narrow phase compiled on its own, for the first launch's warm-up
(shell/warmup.py): one process fills numba's cache with contact detection for worlds with
convex and compound bodies (contacts.prepare_contacts, with collision/convex.py and gjk.py
under it), so that the solver families' steps of such scenes, in either process, load it
instead of compiling it each."""
from .contacts import prepare_contacts
from .jit import kernel


@kernel(cache=True)
def _detect(contacts, bodies, h):
    return prepare_contacts(contacts, bodies, h)


def compile_hull_contacts():
    """Contacts found once in a world of a convex hull and a compound resting on the ground,
    with the contact and body bundles the solver kernels pass (World.contact_data,
    World.kernel_bundles). Returns the number of touching pairs found (2)."""
    from .shapes import Box, Compound, Convex, Plane
    from .world import World
    world = World()
    world.add_body("ground", Plane(), static=True)
    corners = [(x, y, z) for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)]
    world.add_body("hull", Convex(corners), mass=1.0, position=(0.0, 0.0, 0.099))
    world.add_body("compound", Compound([(Box((0.05, 0.05, 0.05)), (0.0, 0.0, 0.0), (0, 0, 0, 1)),
                                         (Box((0.05, 0.05, 0.05)), (0.1, 0.0, 0.0), (0, 0, 0, 1))]),
                   mass=1.0, position=(1.0, 0.0, 0.049))
    bodies = world.kernel_bundles(world.active_solver.free_rows_used(world))[1]
    return int(_detect(world.contact_data(), bodies, world.dt))
