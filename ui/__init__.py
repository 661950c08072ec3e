"""The ImGui panel and the mouse and keyboard of the viewer (shell/window.py).

imgui_io.py, imgui_renderer.py   ImGui + ImPlot on a pyglet window, drawn with moderngl
panel.py                         the side panel: Simulation, Solver, Joints, Ropes, Plots
params.py, widgets.py            editable parameters: check, clamp, set, notices; widgets
joints_table.py, ropes.py        the Joints table and joint editor, the Ropes section
plots.py                         rolling plots, per-step sampling, CSV export
picking.py, drag.py, overlay.py  ray casts on shapes, the mouse spring, drawing over the view
help.py                          the keys and mouse actions, and the F1 overlay
"""
