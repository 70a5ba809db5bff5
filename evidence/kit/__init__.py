"""The artefact kit: what every kind of evidence is built, stored and rendered with, whatever its room.

`trees` (a kind's dataclass tree ⇄ JSON, strictly), `meta` (the snapshot meta, software versions, bootstrap
defaults), `files` (file names in the bundle and as downloads; the citable zip bundle), `pdfkit` (the printable
summary's fonts, tables and page decoration) and `serializers` (the one API serializer base of a stored version).
Nothing here writes to the database; a kind's own content lives with the app that owns the kind."""
