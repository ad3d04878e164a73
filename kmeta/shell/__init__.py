"""``kmeta shell``: a front end, like the command line, over the ops and renderers.

It walks the metadata image through time (kmeta.ops.replay.timeline) and its node tree
(kmeta.core.image_nodes), and writes what it finds with kmeta.render's texts; its
prompt and line editing are kmeta.shell.repl's.  Nothing below imports it.
"""
