"""Diagnosis: the judges, the bundle → findings pipeline, and collect-then-diagnose."""
