"""Hand-made pods, built in one place: as bundles of raw tool outputs (bundle.py) and as facts tables (facts.py)."""
