"""``kmeta report`` for people and scripts: its text and JSON Lines (:mod:`.text`), and
the self-contained HTML page (:mod:`.html`, its styles and script in :mod:`.page`) with
the pictures (:mod:`.pictures`) kmeta draws as SVG (:mod:`.svg`).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

__getattr__, __dir__, __all__ = face(__name__)

if TYPE_CHECKING:  # what the rest of kmeta may use (kmeta.face: each loaded on first use)
    from kmeta.render.report.html import report_html
    from kmeta.render.report.text import report_json
    from kmeta.render.report.text import report_lines
