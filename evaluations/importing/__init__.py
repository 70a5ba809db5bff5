"""Import and export of test cases, model responses and TheoBERT eval.json files (JSON, JSONL, CSV)."""
from .errors import ImportFailed, RowError
from .services import ImportReport, import_file
from .exporting import export_records, export_to_path

__all__ = ["ImportFailed", "ImportReport", "RowError", "export_records", "export_to_path", "import_file"]
