"""The five traditions and rubric v1.0, exactly as in the FaithBench methodology v1.0 (§4.4, §6.1.1, §15.5).

History is frozen: the data is written out here rather than read from `evaluations.methodology`, so that
editing today's code can never change what this migration did. tests/evaluations/test_reference_data.py
checks that these rows still equal the live module's. A later rubric is a new version and a new migration
(or a Delphi round), never an edit of this file.
"""
from decimal import Decimal

from django.db import migrations

# (key, name, in_development, min_panel_size), in display order.
TRADITIONS = (
    ('catholic', 'Catholic', False, 3),
    ('orthodox', 'Orthodox', False, 3),
    ('reformed', 'Reformed', False, 3),
    ('evangelical', 'Evangelical', False, 3),
    ('pentecostal', 'Pentecostal', True, 2),
)

# (key, name, weight, description, sub-dimensions as (key, name, weight, description)), in rubric order.
RUBRIC_V1 = (
    ('textual', 'Textual Analysis', Decimal("25"),
     'Biblical language competency: Greek and Hebrew lexical accuracy, morphological analysis, '
     'translation evaluation, and textual criticism.',
     (
         ('lexicalAccuracy', 'Lexical Accuracy', Decimal("35"), 'Greek/Hebrew terms, morphology, semantic ranges'),
         ('translationFidelity', 'Translation Fidelity', Decimal("35"), 'Source-to-target accuracy, theological implications'),
         ('linguisticReasoning', 'Linguistic Reasoning', Decimal("20"), 'Grammar, syntax, verb tenses, discourse analysis'),
         ('sourceHandling', 'Source Handling', Decimal("10"), 'Manuscript variants, textual criticism principles'),
     )),
    ('hermeneutical', 'Hermeneutical Reasoning', Decimal("20"),
     'Interpretive methodology: genre awareness, contextual analysis, canonical integration, '
     'and application of hermeneutical principles.',
     (
         ('interpretiveMethod', 'Interpretive Method', Decimal("35"), 'Sound hermeneutical principles, grammatical-historical method'),
         ('genreAwareness', 'Genre Awareness', Decimal("25"), 'Recognition of literary forms (narrative, poetry, apocalyptic)'),
         ('contextualAnalysis', 'Contextual Analysis', Decimal("25"), 'Historical, cultural, literary context'),
         ('canonicalIntegration', 'Canonical Integration', Decimal("15"), 'Scripture interpreting Scripture, redemptive-historical reading'),
     )),
    ('doctrinal', 'Doctrinal Precision', Decimal("20"),
     'Systematic theology: accurate representation of tradition-specific doctrinal positions, '
     'creedal formulations, and denominational distinctives.',
     (
         ('doctrinalAccuracy', 'Doctrinal Accuracy', Decimal("35"), "Correct representation of tradition's position"),
         ('traditionFidelity', 'Tradition Fidelity', Decimal("35"), 'Appropriate vocabulary, conceptual framework'),
         ('nuanceRecognition', 'Nuance Recognition', Decimal("20"), 'Awareness of internal debates, development'),
         ('sourceGrounding', 'Source Grounding', Decimal("10"), 'References to authoritative sources'),
     )),
    ('historical', 'Historical Theology', Decimal("15"),
     'Church history: patristic sources, Reformation debates, doctrinal development, and '
     'historiographical method.',
     (
         ('historicalAccuracy', 'Historical Accuracy', Decimal("40"), 'Correct dating, attribution, context'),
         ('developmentAwareness', 'Development Awareness', Decimal("30"), 'Understanding of doctrinal evolution'),
         ('patristicKnowledge', 'Patristic Knowledge', Decimal("20"), 'Church fathers and early sources'),
         ('historiographicalMethod', 'Historiographical Method', Decimal("10"), 'Sound historical reasoning'),
     )),
    ('apologetics', 'Apologetics', Decimal("10"),
     'Philosophical theology: logical validity, evidence usage, objection handling, and '
     'Christian intellectual tradition.',
     (
         ('logicalValidity', 'Logical Validity', Decimal("35"), 'Sound argumentation structure'),
         ('evidenceUsage', 'Evidence Usage', Decimal("30"), 'Appropriate use of supporting evidence'),
         ('objectionHandling', 'Objection Handling', Decimal("25"), 'Fair representation and response to critiques'),
         ('persuasiveClarity', 'Persuasive Clarity', Decimal("10"), 'Clear communication of arguments'),
     )),
    ('intertextual', 'Intertextual Reasoning', Decimal("10"),
     'Canonical connections: cross-references, typological recognition, allusion detection, and '
     'thematic integration.',
     (
         ('crossReferenceAccuracy', 'Cross-Reference Accuracy', Decimal("40"), 'Correct identification of parallel passages'),
         ('typologicalRecognition', 'Typological Recognition', Decimal("30"), 'OT/NT typological connections'),
         ('allusionDetection', 'Allusion Detection', Decimal("20"), 'Recognition of biblical allusions'),
         ('thematicIntegration', 'Thematic Integration', Decimal("10"), 'Coherent thematic connections'),
     )),
)


RUBRIC_VERSION = "1.0"
RUBRIC_STATUS = "active"
RUBRIC_NOTES = "FaithBench methodology v1.0, §4.4 and §15.5."


def create_reference_data(apps, schema_editor):
    Tradition = apps.get_model("evaluations", "Tradition")
    RubricVersion = apps.get_model("evaluations", "RubricVersion")
    RubricDimension = apps.get_model("evaluations", "RubricDimension")
    RubricSubDimension = apps.get_model("evaluations", "RubricSubDimension")
    for order, (key, name, in_development, min_panel_size) in enumerate(TRADITIONS):
        Tradition.objects.update_or_create(
            key=key,
            defaults={"name": name, "in_development": in_development, "min_panel_size": min_panel_size,
                      "order": order},
        )
    if RubricVersion.objects.filter(version=RUBRIC_VERSION).exists():
        return
    rubric = RubricVersion.objects.create(version=RUBRIC_VERSION, status=RUBRIC_STATUS, notes=RUBRIC_NOTES)
    for order, (key, name, weight, description, sub_dimensions) in enumerate(RUBRIC_V1):
        dimension = RubricDimension.objects.create(
            rubric=rubric, key=key, name=name, weight=weight, description=description, order=order,
        )
        for sub_order, (sub_key, sub_name, sub_weight, sub_description) in enumerate(sub_dimensions):
            RubricSubDimension.objects.create(
                dimension=dimension, key=sub_key, name=sub_name, weight=sub_weight,
                description=sub_description, order=sub_order,
            )


def remove_reference_data(apps, schema_editor):
    apps.get_model("evaluations", "RubricVersion").objects.filter(version=RUBRIC_VERSION).delete()


class Migration(migrations.Migration):
    dependencies = [("evaluations", "0001_initial")]
    operations = [migrations.RunPython(create_reference_data, remove_reference_data)]
