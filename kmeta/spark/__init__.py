"""kmeta on Spark: the ``kmeta`` Python data source and the export job.

Importing ``kmeta.spark`` imports pyspark; nothing else in kmeta does.

    from kmeta.spark import register
    register(spark)
    spark.read.format("kmeta").option("table", "records").load(["/data/b1", "/data/b2"])
"""

from __future__ import annotations

from typing import Any

__all__ = ["register"]


def register(spark: Any) -> None:
    """Make ``spark.read.format("kmeta")`` available in this session."""
    from kmeta.spark.source import KmetaDataSource

    spark.dataSource.register(KmetaDataSource)
