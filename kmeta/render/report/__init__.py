"""``kmeta report`` for people and scripts: its text and JSON Lines (:mod:`.text`), and
the self-contained HTML page (:mod:`.html`, its styles and script in :mod:`.page`) with
the pictures (:mod:`.pictures`) kmeta draws as SVG (:mod:`.svg`).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

#: The names the rest of kmeta may use, each with the module that holds it.
PUBLIC = {
    "report_html": "html",
    "report_json": "text",
    "report_lines": "text",
}
__getattr__, __dir__ = face(__name__, PUBLIC)
__all__ = ["report_html", "report_json", "report_lines"]

if TYPE_CHECKING:
    from kmeta.render.report.html import report_html
    from kmeta.render.report.text import report_json, report_lines
