"""The API's JSON parser: DRF's, refusing a body with a NUL character (U+0000) in any key or string with a 400 that
names the field. PostgreSQL's text columns cannot store NUL: such a value used to reach the database and fail
there (a 500)."""
from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from evaluations.importing.readers import NUL_MESSAGE, nul_field


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        field = nul_field(data)
        if field is not None:
            raise ParseError(f"{field or 'body'}: {NUL_MESSAGE}")
        return data
