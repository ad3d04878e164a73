"""``kmeta report``: the whole story of a cluster's disks."""

from kmeta.ops.report.build import build_report
from kmeta.ops.report.model import Report

__all__ = ["Report", "build_report"]
