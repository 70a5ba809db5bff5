"""Facts of the FaithBench methodology v1.0 that the application must honour exactly.

Sources: methodology §4.2 (scale), §4.4 and §15.5 (rubric weights), §5.4.2 (difficulty weights),
§6.1.1 (panel minimums). The rubric v1.0 data migration carries its own frozen copy of RUBRIC_V1 and
TRADITIONS (tests/evaluations/test_reference_data.py keeps the two equal); later rubric versions are made
by Delphi rounds and live only in the database.
"""
from __future__ import annotations

from decimal import Decimal
from typing import NamedTuple


class SubDimensionSpec(NamedTuple):
    key: str
    name: str
    weight: int | Decimal  # percentage points: whole in v1.0, decimal in rubrics proposed by Delphi rounds
    description: str


class DimensionSpec(NamedTuple):
    key: str
    name: str
    weight: int | Decimal  # as SubDimensionSpec.weight
    description: str
    sub_dimensions: tuple[SubDimensionSpec, ...]


RUBRIC_V1: tuple[DimensionSpec, ...] = (
    DimensionSpec(
        "textual",
        "Textual Analysis",
        25,
        "Biblical language competency: Greek and Hebrew lexical accuracy, morphological analysis, "
        "translation evaluation, and textual criticism.",
        (
            SubDimensionSpec("lexicalAccuracy", "Lexical Accuracy", 35, "Greek/Hebrew terms, morphology, semantic ranges"),
            SubDimensionSpec("translationFidelity", "Translation Fidelity", 35, "Source-to-target accuracy, theological implications"),
            SubDimensionSpec("linguisticReasoning", "Linguistic Reasoning", 20, "Grammar, syntax, verb tenses, discourse analysis"),
            SubDimensionSpec("sourceHandling", "Source Handling", 10, "Manuscript variants, textual criticism principles"),
        ),
    ),
    DimensionSpec(
        "hermeneutical",
        "Hermeneutical Reasoning",
        20,
        "Interpretive methodology: genre awareness, contextual analysis, canonical integration, and "
        "application of hermeneutical principles.",
        (
            SubDimensionSpec("interpretiveMethod", "Interpretive Method", 35, "Sound hermeneutical principles, grammatical-historical method"),
            SubDimensionSpec("genreAwareness", "Genre Awareness", 25, "Recognition of literary forms (narrative, poetry, apocalyptic)"),
            SubDimensionSpec("contextualAnalysis", "Contextual Analysis", 25, "Historical, cultural, literary context"),
            SubDimensionSpec("canonicalIntegration", "Canonical Integration", 15, "Scripture interpreting Scripture, redemptive-historical reading"),
        ),
    ),
    DimensionSpec(
        "doctrinal",
        "Doctrinal Precision",
        20,
        "Systematic theology: accurate representation of tradition-specific doctrinal positions, creedal "
        "formulations, and denominational distinctives.",
        (
            SubDimensionSpec("doctrinalAccuracy", "Doctrinal Accuracy", 35, "Correct representation of tradition's position"),
            SubDimensionSpec("traditionFidelity", "Tradition Fidelity", 35, "Appropriate vocabulary, conceptual framework"),
            SubDimensionSpec("nuanceRecognition", "Nuance Recognition", 20, "Awareness of internal debates, development"),
            SubDimensionSpec("sourceGrounding", "Source Grounding", 10, "References to authoritative sources"),
        ),
    ),
    DimensionSpec(
        "historical",
        "Historical Theology",
        15,
        "Church history: patristic sources, Reformation debates, doctrinal development, and "
        "historiographical method.",
        (
            SubDimensionSpec("historicalAccuracy", "Historical Accuracy", 40, "Correct dating, attribution, context"),
            SubDimensionSpec("developmentAwareness", "Development Awareness", 30, "Understanding of doctrinal evolution"),
            SubDimensionSpec("patristicKnowledge", "Patristic Knowledge", 20, "Church fathers and early sources"),
            SubDimensionSpec("historiographicalMethod", "Historiographical Method", 10, "Sound historical reasoning"),
        ),
    ),
    DimensionSpec(
        "apologetics",
        "Apologetics",
        10,
        "Philosophical theology: logical validity, evidence usage, objection handling, and Christian "
        "intellectual tradition.",
        (
            SubDimensionSpec("logicalValidity", "Logical Validity", 35, "Sound argumentation structure"),
            SubDimensionSpec("evidenceUsage", "Evidence Usage", 30, "Appropriate use of supporting evidence"),
            SubDimensionSpec("objectionHandling", "Objection Handling", 25, "Fair representation and response to critiques"),
            SubDimensionSpec("persuasiveClarity", "Persuasive Clarity", 10, "Clear communication of arguments"),
        ),
    ),
    DimensionSpec(
        "intertextual",
        "Intertextual Reasoning",
        10,
        "Canonical connections: cross-references, typological recognition, allusion detection, and "
        "thematic integration.",
        (
            SubDimensionSpec("crossReferenceAccuracy", "Cross-Reference Accuracy", 40, "Correct identification of parallel passages"),
            SubDimensionSpec("typologicalRecognition", "Typological Recognition", 30, "OT/NT typological connections"),
            SubDimensionSpec("allusionDetection", "Allusion Detection", 20, "Recognition of biblical allusions"),
            SubDimensionSpec("thematicIntegration", "Thematic Integration", 10, "Coherent thematic connections"),
        ),
    ),
)


class ScaleLevel(NamedTuple):
    score: int
    label: str
    criteria: str


# Methodology §4.2.
SCALE: tuple[ScaleLevel, ...] = (
    ScaleLevel(0, "Inadequate", "Incorrect, misleading, or fails to address the question"),
    ScaleLevel(1, "Partial", "Some accuracy but significant errors or omissions"),
    ScaleLevel(2, "Good", "Mostly accurate with minor gaps, adequate vocabulary"),
    ScaleLevel(3, "Excellent", "Fully accurate, demonstrates depth, uses appropriate vocabulary and sources"),
)

# Methodology §5.4.2.
DIFFICULTY_WEIGHTS: dict[str, Decimal] = {
    "easy": Decimal("1.0"),
    "medium": Decimal("1.5"),
    "hard": Decimal("2.0"),
    "expert": Decimal("3.0"),
}


class TraditionSpec(NamedTuple):
    key: str
    name: str
    in_development: bool
    min_panel_size: int


# Methodology §6.1.1 and §12.
TRADITIONS: tuple[TraditionSpec, ...] = (
    TraditionSpec("catholic", "Catholic", False, 3),
    TraditionSpec("orthodox", "Orthodox", False, 3),
    TraditionSpec("reformed", "Reformed", False, 3),
    TraditionSpec("evangelical", "Evangelical", False, 3),
    TraditionSpec("pentecostal", "Pentecostal", True, 2),
)


# §9.1 (and §5.2.1, §15.2): the standard generation condition every model is first evaluated under. The data
# migration creating it carries its own frozen copy (tests/evaluations/test_generation_condition.py keeps them equal).
STANDARD_CONDITION_NAME = "standard"
STANDARD_TEMPERATURE = Decimal("0.70")
STANDARD_MAX_TOKENS = 2000
STANDARD_SYSTEM_PROMPT = "Answer the question."
STANDARD_LANGUAGE = "en"
# §8.4: single runs are noisy (Epoch AI recommends 4–32); a condition is generated this many times by default.
DEFAULT_REPETITIONS = 4
