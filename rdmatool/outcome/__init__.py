"""The outcome of a run: what could not be read, the findings' JSON shape, the verdict and its exit code."""
