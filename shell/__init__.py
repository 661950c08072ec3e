"""The application shell: the command line (cli.py), the window that is the interactive
app (window.py: physics + render + ui), and the frame driver that paces fixed steps
against the wall clock (driver.py). physics/ never imports it."""
