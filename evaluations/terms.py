"""The rubric's vocabulary as messages (issue 35): dimension and sub-dimension names, the 0–3 scale's labels and
criteria, and the words experts read on every item. Marked with gettext_noop so `make messages` extracts them; each
has one agreed rendering per language in docs/glossary.csv (tests/i18n checks the catalogues follow it). Templates
translate the stored English names with `{% translate name %}`; the names stored in rubric rows stay English."""
from __future__ import annotations

from django.utils.translation import gettext_noop

TERMS: tuple[str, ...] = (
    gettext_noop('Textual Analysis'),  # dimension
    gettext_noop('Hermeneutical Reasoning'),  # dimension
    gettext_noop('Doctrinal Precision'),  # dimension
    gettext_noop('Historical Theology'),  # dimension
    gettext_noop('Apologetics'),  # dimension
    gettext_noop('Intertextual Reasoning'),  # dimension
    gettext_noop('Lexical Accuracy'),  # sub_dimension
    gettext_noop('Translation Fidelity'),  # sub_dimension
    gettext_noop('Linguistic Reasoning'),  # sub_dimension
    gettext_noop('Source Handling'),  # sub_dimension
    gettext_noop('Interpretive Method'),  # sub_dimension
    gettext_noop('Genre Awareness'),  # sub_dimension
    gettext_noop('Contextual Analysis'),  # sub_dimension
    gettext_noop('Canonical Integration'),  # sub_dimension
    gettext_noop('Doctrinal Accuracy'),  # sub_dimension
    gettext_noop('Tradition Fidelity'),  # sub_dimension
    gettext_noop('Nuance Recognition'),  # sub_dimension
    gettext_noop('Source Grounding'),  # sub_dimension
    gettext_noop('Historical Accuracy'),  # sub_dimension
    gettext_noop('Development Awareness'),  # sub_dimension
    gettext_noop('Patristic Knowledge'),  # sub_dimension
    gettext_noop('Historiographical Method'),  # sub_dimension
    gettext_noop('Logical Validity'),  # sub_dimension
    gettext_noop('Evidence Usage'),  # sub_dimension
    gettext_noop('Objection Handling'),  # sub_dimension
    gettext_noop('Persuasive Clarity'),  # sub_dimension
    gettext_noop('Cross-Reference Accuracy'),  # sub_dimension
    gettext_noop('Typological Recognition'),  # sub_dimension
    gettext_noop('Allusion Detection'),  # sub_dimension
    gettext_noop('Thematic Integration'),  # sub_dimension
    gettext_noop('Inadequate'),  # scale_label
    gettext_noop('Partial'),  # scale_label
    gettext_noop('Good'),  # scale_label
    gettext_noop('Excellent'),  # scale_label
    gettext_noop('Incorrect, misleading, or fails to address the question'),  # scale_criteria
    gettext_noop('Some accuracy but significant errors or omissions'),  # scale_criteria
    gettext_noop('Mostly accurate with minor gaps, adequate vocabulary'),  # scale_criteria
    gettext_noop('Fully accurate, demonstrates depth, uses appropriate vocabulary and sources'),  # scale_criteria
    gettext_noop('Rationale'),  # term
    gettext_noop('Adjudication'),  # term
    gettext_noop('Panel lead'),  # term
    gettext_noop('Question'),  # term
    gettext_noop('Answer'),  # term
    gettext_noop('Reference answer'),  # term
    gettext_noop('Outside my expertise'),  # term
    gettext_noop('Dimension'),  # term
    gettext_noop('Tradition'),  # term
)

# Labels the expert pages show from stored codes (not glossary terms): an assignment's status.
LABELS: tuple[str, ...] = (
    gettext_noop("Not started"),
    gettext_noop("Draft"),
    gettext_noop("Submitted"),
    gettext_noop("Skipped (outside expertise)"),
    gettext_noop("Withdrawn"),
)
