"""Development tools of the kmeta repository: run from its root, never installed."""
