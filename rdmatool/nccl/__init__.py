"""NCCL and UCX: the connection recipe per host from a bundle's facts (`recipe`), its environment in each format a
launcher takes (`render`), the problems no single recipe fits as facts the nccl playbook judges (`findings`), and
what an NCCL_DEBUG=INFO log says NCCL really chose, checked against the recipe (`log`)."""
