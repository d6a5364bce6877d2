"""IIIf attack trees: trees, validity and refinement, generation from EF, export (JSON, DOT, ADTool)."""
