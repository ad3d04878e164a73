"""A deterministic, seeded mutation harness over real and fixture files (see campaign.py).

``python -m tests.fuzz --minutes 60 [--seed N] [--out DIR]`` runs a long campaign by hand;
``test_campaign.py`` runs a short one with a fixed seed in the normal test suite, and
``test_properties.py`` holds the any-bytes property tests of the parser entry points.
"""
