"""Questions asked of an evaluated model: checks, tables, explain, sensitivity."""
