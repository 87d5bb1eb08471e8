"""schema_evolution"""
