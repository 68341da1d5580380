"""The rules engine: YAML playbooks (playbook.py), one pure function per rule kind (kinds.py), evaluation (engine.py)."""
