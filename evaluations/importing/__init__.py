"""Import and export of test cases, model responses and TheoBERT eval.json files (JSON, JSONL, CSV)."""
from .errors import ImportFailed, RowError
from .exporting import export_records, export_to_path
from .services import ImportReport, import_file, import_files, import_records

__all__ = ["ImportFailed", "ImportReport", "RowError", "export_records", "export_to_path", "import_file", "import_files",
           "import_records"]
