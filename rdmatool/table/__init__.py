"""The table the rules read: parsed samples as columns, counter rates, and the facts."""
