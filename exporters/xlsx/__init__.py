"""The Excel workbook: its sheets, formulas, layout and style."""
