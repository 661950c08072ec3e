"""The direct O(N) solve of the joint rows of a tree of bodies (Baraff's method).

Baraff, "Linear-time dynamics using Lagrange multipliers" (SIGGRAPH 96): the bodies and
the joints of a tree-structured mechanism are the nodes of one tree. The sparse
symmetric system

    [ M   −Jᵀ ] [ v ]   [ 0  ]
    [ −J   0  ] [ λ ] = [ −b ]          ⇔   J M⁻¹ Jᵀ λ = b,  v = M⁻¹ Jᵀ λ

has the sparsity of that tree (a body node is a 6×6 block M_i, a joint node the m×m
zero block of its m rows, a joint–body edge the m×6 block −J_ki), so eliminating the
nodes leaves first creates no fill-in: O(N) work with small dense blocks. With body
nodes D_i (6×6) and joint nodes S_k = −D_k (m×m), both kept positive definite and
Cholesky-factored (tree_factor, tree_solve — any rows, e.g. random ones in tests):

    factor (leaves first; joint k joins its child body c to its parent body p):
        D_c = M_c + Σ_{child joints k' of c} J_k'cᵀ S_k'⁻¹ J_k'c
        S_k = J_kc D_c⁻¹ J_kcᵀ
    solve:
        forward   y_c = −Σ J_k'cᵀ w_k',  u_c = D_c⁻¹ y_c
                  w_k = S_k⁻¹ (J_kc u_c − b_k)
        backward  λ_k = −w_k − S_k⁻¹ J_kp v_p      (λ_k = −w_k at a root joint)
                  v_c = u_c + D_c⁻¹ J_kcᵀ λ_k

Along a chain each of these pivots (a 6×6 and an m×m Cholesky per joint) waits for the
previous one. The impulse solver runs the same elimination in its articulated form
(articulated_factor, articulated_solve — rows as joint_rows.py writes them, see the
block comment there): it eliminates each joint through the l = 6 − m motions its rows
allow, so the chain of dependent pivots is l×l (1×1 for a hinge).

A joint to a static body (the world) has no parent body and roots its subtree; a tree
with no such joint (a free-floating mechanism) is rooted at one of its bodies. A
graph with a loop — two paths between two bodies, or two joints from one mechanism
to the static world — is not a tree: `build_tree_plan` keeps a spanning tree and names
the joints that close the loops.

Storage: every matrix is a row of a float64 (n, 36) array, 6×6 row-major; a Cholesky
factor keeps L below the diagonal and 1/L_ii on it.

Modules: plan.py (the spanning tree of the joint graph, once per layout; the Tree bundle),
block.py (the generic block factor and solve above, and its Python entries), factor.py
(the articulated factor, its targets and the geometric stiffness added to the inertia),
solve.py (the articulated solve, the joints' impulses, which rows take part).
"""
from .block import solve_joint_rows, solve_tree_system, tree_factor, tree_solve
from .factor import FAST, articulated_factor, articulated_targets, augmented_inertia, invert_tree_inertia
from .plan import Tree, TreePlan, build_tree_plan, make_tree, static_bodies
from .solve import articulated_lambda, articulated_solve, select_rows, tree_momentum, zero_tree

__all__ = ["FAST", "Tree", "TreePlan", "articulated_factor", "articulated_lambda", "articulated_solve",
           "articulated_targets", "augmented_inertia", "build_tree_plan", "invert_tree_inertia", "make_tree", "select_rows",
           "solve_joint_rows", "solve_tree_system", "static_bodies", "tree_factor", "tree_momentum", "tree_solve",
           "zero_tree"]
