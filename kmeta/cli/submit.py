"""``kmeta export`` under spark-submit, on a real cluster:

    spark-submit --master yarn --py-files kmeta.zip "$(python -c \\
        'import kmeta.cli.submit as s; print(s.__file__)')" PATHS... --to OUTDIR

The arguments are those of ``kmeta export``; the session is the one spark-submit
configures (its master, executors and Python).  The executors need kmeta and its
dependencies importable (installed on the nodes, or shipped with ``--py-files`` /
``--archives``).
"""

from __future__ import annotations

import sys

from kmeta.cli import main

if __name__ == "__main__":
    main(["export", *sys.argv[1:]])
